//! Build from a commit, with the real binaries and the real toolchain:
//! `xq-coordinator serve` (allowing `file://` repositories) and `xq-worker
//! work` as child processes on 127.0.0.1, runs made with the CLI.
//!
//! The engine's source is a local git repository: a C++ program that
//! `execv`s the built `xq-engine` (so its bench is `xq-engine`'s), built by
//! a Makefile that compiles it with `g++` and appends the `ARCH` it was
//! given to a log the test reads (one line per build).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use xq_proto::{Protocol, pb};
use xq_tests::cluster::{status, wait_for_end};
use xq_tests::procs::{Served, TempDir, create_games_run};

const RUN_LIMIT: Duration = Duration::from_secs(240);
/// The coordinator's flags: local repositories allowed, a run stops at its
/// first failed build.
const SERVE: [&str; 4] = [
    "--git-protocols",
    "https,file",
    "--build-failures-to-stop",
    "1",
];

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=author",
            "-c",
            "user.email=author@localhost",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The engine's repository: branch `main`, served by path (`file://`).
struct SourceRepo {
    dir: PathBuf,
    url: String,
    /// One line per build: the `ARCH` the build was given.
    builds: PathBuf,
}

const WRAPPER: &str = "#include <unistd.h>\n\
    int main(int argc, char **argv) {\n\
    \x20   (void)argc;\n\
    \x20   argv[0] = (char *)ENGINE;\n\
    \x20   execv(ENGINE, argv);\n\
    \x20   return 127;\n\
    }\n";

impl SourceRepo {
    /// A repository whose first commit builds a wrapper of `engine`.
    fn create(at: &TempDir) -> SourceRepo {
        let dir = at.join("engine-src");
        std::fs::create_dir_all(&dir).unwrap();
        let builds = at.join("builds.log");
        let engine = xq_tests::binary("xq-engine");
        git(&dir, &["init", "--quiet", "-b", "main"]);
        let makefile = format!(
            "engine: main.cpp\n\techo \"$(ARCH)\" >> {}\n\tg++ -O1 -DENGINE='\"{}\"' -o engine main.cpp\n",
            builds.display(),
            engine.display()
        );
        std::fs::write(dir.join("Makefile"), makefile).unwrap();
        let repo = SourceRepo {
            url: format!("file://{}", dir.display()),
            dir,
            builds,
        };
        repo.commit(WRAPPER, "the engine");
        repo
    }

    /// Commits `main.cpp` as `source` on `main`; returns the commit.
    fn commit(&self, source: &str, message: &str) -> String {
        std::fs::write(self.dir.join("main.cpp"), source).unwrap();
        git(&self.dir, &["add", "."]);
        git(&self.dir, &["commit", "--quiet", "-m", message]);
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    /// The `ARCH` of every build so far.
    fn builds(&self) -> Vec<String> {
        std::fs::read_to_string(&self.builds)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// `xq-engine bench`'s signature, which the wrapper's bench reproduces.
fn signature() -> u64 {
    xq_worker::blob_cache::bench_signature(
        &xq_tests::binary("xq-engine"),
        Protocol::Uci,
        &[],
        Duration::from_secs(300),
    )
    .expect("bench xq-engine")
}

/// A served coordinator that allows local repositories, and its tokens.
struct Cluster(Served);

impl std::ops::Deref for Cluster {
    type Target = Served;

    fn deref(&self) -> &Served {
        &self.0
    }
}

impl Cluster {
    fn start(tag: &str) -> Cluster {
        Cluster(Served::start(tag, &SERVE))
    }

    /// A games run of `pairs` pairs (one per lease) whose dev engine is built
    /// from `git_ref` of `repo` with the stated bench `bench`, against the
    /// built-in engine.
    fn source_run(&self, repo: &SourceRepo, git_ref: &str, bench: u64, pairs: u64) -> u64 {
        let (bench, pairs) = (bench.to_string(), pairs.to_string());
        self.cli(&[
            "games",
            "--pairs",
            &pairs,
            "--batch-pairs",
            "1",
            "--nodes",
            "200",
            "--hash",
            "1",
            "--max-plies",
            "120",
            "--dev-repo",
            &repo.url,
            "--dev-ref",
            git_ref,
            "--dev-build",
            "make engine",
            "--dev-binary",
            "engine",
            "--dev-bench",
            &bench,
            "--dev-needs",
            "make,g++",
        ])
        .trim()
        .parse()
        .expect("run id")
    }
}

/// The source of the run's dev engine, as the coordinator stores it.
fn dev_source(run: &pb::RunStatus) -> pb::EngineSource {
    let Some(pb::run_spec::Kind::Games(games)) = run.spec.as_ref().and_then(|s| s.kind.clone())
    else {
        panic!("a games run: {run:?}")
    };
    games
        .engines
        .and_then(|e| e.dev_source)
        .and_then(|e| e.source)
        .expect("dev is built from source")
}

fn games_of(run: &pb::RunStatus) -> u64 {
    2 * run.totals.as_ref().map_or(0, |t| t.pairs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_builds_once_and_plays_and_a_broken_commit_or_a_wrong_bench_stops_its_run() {
    let c = Cluster::start("build-src");
    let repo = SourceRepo::create(&c.dir);
    let good = git(&repo.dir, &["rev-parse", "HEAD"]);
    let bench = signature();
    let builder = c.worker("builder", &[]);
    let mut client = c.client();

    // A branch, resolved to its commit when the run is created; built once
    // for both leases, with the worker's ARCH, and played to the end.
    let run = c.source_run(&repo, "main", bench, 2);
    let created = status(&mut client, run).await;
    let source = dev_source(&created);
    assert_eq!(
        (source.commit.as_str(), source.git_ref.as_str()),
        (good.as_str(), "main")
    );
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert_eq!(games_of(&end), 4);
    assert_eq!(
        repo.builds(),
        [xq_worker::build::arch_for(Some(
            &xq_worker::machine::detect()
        ))],
        "one build"
    );
    builder.wait_for_log("build cache hit: not rebuilding", Duration::from_secs(10));
    let report = c.cli(&["report", &run.to_string()]);
    let shown = format!("{}@{}", repo.url, &good[..12]);
    assert!(
        report.contains(&shown) && report.contains("make engine"),
        "{report}"
    );
    let listed = c.cli(&["status"]);
    assert!(listed.contains(&shown), "{listed}");

    // A commit that does not compile: the run stops with the build's log,
    // and no game is counted.
    let broken = repo.commit("int main() { return 0 }\n", "a syntax error");
    let run = c.source_run(&repo, "main", bench, 2);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Stopped, "{end:?}");
    assert_eq!(games_of(&end), 0);
    assert!(end.flag.contains("failed on 1 worker"), "{}", end.flag);
    let answer = client
        .get_run(pb::GetRunRequest {
            run_id: run,
            include_history: true,
        })
        .await
        .unwrap()
        .into_inner();
    let [failure] = answer.build_failures.as_slice() else {
        panic!("one failed build: {:?}", answer.build_failures)
    };
    assert_eq!(
        (failure.commit.as_str(), failure.worker_name.as_str()),
        (broken.as_str(), "builder")
    );
    assert!(
        failure.reason.contains("the build command failed"),
        "{}",
        failure.reason
    );
    assert!(
        failure.log_tail.contains("main.cpp:1:22: error: expected")
            && failure.log_tail.contains("g++"),
        "{}",
        failure.log_tail
    );
    let report = c.cli(&["report", &run.to_string()]);
    assert!(
        report.contains("build failures") && report.contains("main.cpp:1:22: error: expected"),
        "{report}"
    );
    assert_eq!(repo.builds().len(), 2, "the broken commit was built once");

    // A wrong stated bench: the build (a cache hit) benches otherwise, and
    // the run stops before any game.
    let run = c.source_run(&repo, &good, bench + 1, 2);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Stopped, "{end:?}");
    assert!(
        end.flag.contains("benched") && end.flag.contains(&(bench + 1).to_string()),
        "{}",
        end.flag
    );
    assert_eq!(games_of(&end), 0);
    assert_eq!(
        c.query(&format!(
            "SELECT COUNT(*) FROM leases WHERE run_id = {run} AND state = 'done'"
        )),
        0,
        "no result of the run was counted"
    );
    assert_eq!(
        repo.builds().len(),
        2,
        "the good commit was not built again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_builds_nothing_gets_no_source_lease_but_plays_other_runs() {
    let c = Cluster::start("build-none");
    let repo = SourceRepo::create(&c.dir);
    // The older run, so the worker would be offered it first.
    let source_run = c.source_run(&repo, "main", 1, 2);
    let plain = create_games_run(&c.coordinator.url(), &c.admin, 2, 1, 200);
    let worker = c.worker("no-build", &["--no-build"]);
    let mut client = c.client();
    let end = wait_for_end(&mut client, plain, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_eq!(games_of(&end), 4);
    let waiting = status(&mut client, source_run).await;
    assert_eq!(waiting.state(), pb::RunState::Active);
    assert_eq!((games_of(&waiting), waiting.pairs_in_flight), (0, 0));
    assert_eq!(
        c.query(&format!(
            "SELECT COUNT(*) FROM leases WHERE run_id = {source_run}"
        )),
        0,
        "the source run was never leased"
    );
    assert_eq!(c.query("SELECT COUNT(*) FROM workers WHERE tools = ''"), 1);
    assert!(!worker.log_text().contains("building a source engine"));
    assert!(repo.builds().is_empty());
}

/// ElephantEye's build line (worker/ENGINES.md, Real engines).
const ELEEYE_BUILD: &str = "g++ -O2 -DNDEBUG -w -o eleeye-bin eleeye/*.cpp base/pipe.cpp -lpthread";

/// The depth of ElephantEye's fixed-search signature.
const ELEEYE_DEPTH: u32 = 5;

/// ElephantEye's unmodified source (`tests/fixtures/eleeye`, see its
/// README) committed as the one commit of branch `main` of a local
/// repository; returns its directory and URL.
fn eleeye_repo(at: &TempDir) -> (PathBuf, String) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eleeye");
    let dir = at.join("eleeye-src");
    let copied = Command::new("cp")
        .arg("-R")
        .arg(&fixture)
        .arg(&dir)
        .status()
        .expect("run cp");
    assert!(copied.success(), "copy {}", fixture.display());
    git(&dir, &["init", "--quiet", "-b", "main"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "--quiet", "-m", "ElephantEye 3.3"]);
    let url = format!("file://{}", dir.display());
    (dir, url)
}

/// ElephantEye built from `dir` here, and its fixed-search signature as a
/// worker measures it: what the run's author declares.
fn eleeye_signature(dir: &Path, at: &TempDir) -> (PathBuf, u64) {
    let binary = at.join("eleeye-here");
    let command = ELEEYE_BUILD.replace("-o eleeye-bin", &format!("-o {}", binary.display()));
    let built = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(dir)
        .status()
        .expect("run g++");
    assert!(built.success(), "{command}");
    let config = xq_worker::external::EngineConfig {
        path: binary.clone(),
        args: Vec::new(),
        protocol: Protocol::Ucci,
        options: Vec::new(),
        if_offered: xq_worker::signature::fixed_search_options(),
        timeouts: Default::default(),
        coords: None,
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    let nodes =
        xq_worker::signature::fixed_search(&config, ELEEYE_DEPTH, Duration::from_secs(120), &never)
            .expect("ElephantEye's fixed search");
    (binary, nodes)
}

impl Cluster {
    /// A games run of two pairs (one per lease) of ElephantEye built from
    /// `url`'s `main`, signed by `signature`, at depth 3 against the
    /// built-in engine at 200 nodes, from the openings of `openings`.
    fn eleeye_run(&self, url: &str, signature: &str, openings: &Path) -> u64 {
        self.cli(&[
            "games",
            "--pairs",
            "2",
            "--batch-pairs",
            "1",
            "--nodes",
            "200",
            "--hash",
            "1",
            "--max-plies",
            "120",
            "--openings",
            &openings.display().to_string(),
            "--dev-repo",
            url,
            "--dev-ref",
            "main",
            "--dev-build",
            ELEEYE_BUILD,
            "--dev-binary",
            "eleeye-bin",
            "--dev-signature",
            signature,
            "--dev-protocol",
            "ucci",
            "--dev-needs",
            "g++",
            "--dev-limit",
            "depth=3",
        ])
        .trim()
        .parse()
        .expect("run id")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elephanteye_from_its_unmodified_source_is_signed_by_a_fixed_search_and_its_draw_claims_flag_no_worker()
 {
    let c = Cluster::start("build-eleeye");
    let (dir, url) = eleeye_repo(&c.dir);
    let (built_here, nodes) = eleeye_signature(&dir, &c.dir);
    // The first opening leaves no attacking piece: ElephantEye claims a
    // draw (nobestmove) at once, which the rules in force do not give.
    let openings = c.dir.join("openings.epd");
    std::fs::write(
        &openings,
        "3k5/4a4/9/9/9/9/9/9/4A4/5K3 w - - 0 1\n\
         rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1\n",
    )
    .unwrap();
    let worker = c.worker("eleeye", &["--bench-timeout", "10"]);
    let mut client = c.client();

    // Declared as a bench count, it cannot be checked: ElephantEye's
    // `bench` never returns. The run stops with the time-out as its cause,
    // and the worker is free for the next run at once.
    let run = c.eleeye_run(&url, "bench:1", &openings);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Stopped, "{end:?}");
    assert!(
        end.flag
            .contains("gave no signature on a worker: bench timed out after 10 s"),
        "{}",
        end.flag
    );
    assert_eq!(games_of(&end), 0);

    // Signed by its fixed search, it plays to the end; its false draw claims
    // are losses of their own kind, and no worker is flagged for them.
    let started = std::time::Instant::now();
    let run = c.eleeye_run(&url, &format!("depth:{ELEEYE_DEPTH}:{nodes}"), &openings);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert!(end.flag.is_empty(), "{}", end.flag);
    assert_eq!(games_of(&end), 4);
    let reasons = end.totals.as_ref().map(|t| t.reasons.clone()).unwrap();
    assert!(
        reasons.get("false-draw-claim").copied().unwrap_or(0) >= 2,
        "{reasons:?}"
    );
    for failure in ["illegal-move", "resignation", "time-forfeit"] {
        assert!(!reasons.contains_key(failure), "{reasons:?}");
    }
    assert_eq!(
        c.query(&format!(
            "SELECT COALESCE(SUM(crashes), 0) FROM lease_results WHERE run_id = {run}"
        )),
        0
    );
    let report = c.cli(&["report", &run.to_string()]);
    assert!(report.contains("false-draw-claim"), "{report}");
    assert!(
        !report.contains("crashes and"),
        "no worker flagged: {report}"
    );
    assert!(
        started.elapsed() < RUN_LIMIT,
        "the worker was not held by the stopped run"
    );
    worker.wait_for_log("build cache hit: not rebuilding", Duration::from_secs(10));

    // Registered, it is signed the same way, declared once with its name;
    // the worker measures it and plays it.
    let depth = ELEEYE_DEPTH.to_string();
    let added = xq_tests::engine_add(
        &c.dir.join("xq.db"),
        "eleeye",
        &built_here,
        &["--protocol", "ucci", "--signature-depth", &depth],
    );
    assert!(
        added.contains(&format!("signature {nodes} (go depth {ELEEYE_DEPTH})")),
        "{added}"
    );
    let run: u64 = c
        .cli(&[
            "games",
            "--pairs",
            "1",
            "--nodes",
            "200",
            "--hash",
            "1",
            "--openings",
            &openings.display().to_string(),
            "--dev-engine",
            "eleeye",
            "--dev-limit",
            "depth=3",
        ])
        .trim()
        .parse()
        .expect("run id");
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert_eq!(games_of(&end), 2);

    // A build that searches otherwise than declared is refused, naming both
    // counts of the fixed search.
    let run = c.eleeye_run(
        &url,
        &format!("depth:{ELEEYE_DEPTH}:{}", nodes + 1),
        &openings,
    );
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Stopped, "{end:?}");
    assert!(
        end.flag.contains(&format!("searched {nodes} nodes"))
            && end
                .flag
                .contains(&format!("(go depth {ELEEYE_DEPTH}) {}", nodes + 1)),
        "{}",
        end.flag
    );
    assert_eq!(games_of(&end), 0);
}
