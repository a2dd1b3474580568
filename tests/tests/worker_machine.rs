//! Machines and builds per instruction set, end to end: a served coordinator,
//! real `xq-worker` processes whose CPU flags `--cpu-flags` states, and
//! engine builds registered with `xq-coordinator engine add --arch`.
//!
//! * A run that requires a flag its only worker lacks gets no lease while
//!   the same run without the requirement plays on that worker; a worker
//!   with the flag then plays it. The workers page shows both machines.
//! * An engine with builds for two ARCH values: each worker downloads and
//!   plays the best build its stated flags run, and nothing else; the
//!   report's per-worker table, the run page and the PGN say which. A build
//!   this machine cannot run needs its signature stated; a stated signature
//!   the bench here contradicts is refused.
//! * A garbled machine at registration, or a run requiring a flag nobody
//!   knows, is refused with INVALID_ARGUMENT naming the field.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use xq_proto::pb;
use xq_tests::cluster::{
    ADMIN_TOKEN, TempDb, TestServer, WORKER_TOKEN, admin, create, engine_settings, fast_config,
    status, wait_for_end, worker_client,
};
use xq_tests::procs::{TempDir, Worker};
use xq_tests::{binary, engine_add, web};

/// A games run of the built-in engine, or of `dev_engine` against it,
/// requiring `flags` of its workers.
fn games(name: &str, pairs: u64, dev_engine: &str, flags: &[&str]) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: name.to_owned(),
        priority: 0,
        batch_pairs: 1,
        settings: Some(engine_settings(200)),
        kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
            dev_params: Default::default(),
            base_params: Default::default(),
            pairs,
            engines: (!dev_engine.is_empty()).then(|| pb::EngineChoice {
                dev_engine: dev_engine.to_owned(),
                ..Default::default()
            }),
        })),
        workers: Some(pb::WorkerPolicy {
            require_flags: flags.iter().map(|f| (*f).to_owned()).collect(),
            ..Default::default()
        }),
    }
}

/// A worker process named `name` stating `flags`, with a blob cache of its
/// own under `dir`.
fn worker(url: &str, dir: &TempDir, name: &str, flags: &str) -> Worker {
    let cache = dir.join(name);
    std::fs::create_dir_all(&cache).expect("cache dir");
    Worker::start_with(
        url,
        WORKER_TOKEN,
        name,
        &dir.join(&format!("{name}.log")),
        &["--cpu-flags", flags],
        &[("XDG_CACHE_HOME", cache.as_os_str())],
    )
}

/// The builds a run's workers played, as `report --json` and `pgn` show them.
#[derive(Debug)]
struct Builds {
    /// The `builds` of the report's one worker.
    report: Vec<String>,
    pgn: String,
}

fn played_builds(url: &str, run: u64, dir: &TempDir) -> Builds {
    let run = run.to_string();
    let report = xq_tests::coordinator_cli([
        "report",
        &run,
        "--json",
        "--coordinator",
        url,
        "--token",
        ADMIN_TOKEN,
    ]);
    let report: serde_json::Value = serde_json::from_str(&report).expect("report --json");
    let workers = report["workers"].as_array().expect("workers");
    assert_eq!(workers.len(), 1, "{report}");
    let report = workers[0]["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .map(|b| b.as_str().unwrap().to_owned())
        .collect();
    let out = dir.join(&format!("run-{run}.pgn"));
    xq_tests::coordinator_cli([
        "pgn",
        &run,
        "--coordinator",
        url,
        "--token",
        ADMIN_TOKEN,
        "--out",
        out.to_str().unwrap(),
    ]);
    let pgn = std::fs::read_to_string(&out).expect("the PGN");
    Builds { report, pgn }
}

/// The engine executables a worker's cache under `dir` holds, by SHA-256.
fn cached(dir: &TempDir, name: &str) -> Vec<String> {
    let engines = dir.join(name).join("xq-engines");
    let mut found: Vec<String> = std::fs::read_dir(&engines)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| xq_proto::is_sha256_hex(n))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_requiring_a_flag_waits_for_a_worker_that_has_it() {
    let db = TempDb::new("machine-flags");
    let dir = TempDir::new("machine-flags");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60)))
            .await;
    let mut admin = admin(&server.url()).await;
    let needs_avx2 = create(&mut admin, games("needs avx2", 2, "", &["avx2"])).await;

    let old = worker(&server.url(), &dir, "old-box", "popcnt");
    old.wait_for_log("registered", Duration::from_secs(60));
    let anyone = create(&mut admin, games("any machine", 2, "", &[])).await;
    let end = wait_for_end(&mut admin, anyone, Duration::from_secs(120)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    // The worker kept asking (every 50 ms) while it played the other run and
    // after: the run it lacks the flag for never had a lease.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let waiting = status(&mut admin, needs_avx2).await;
    assert_eq!(waiting.state(), pb::RunState::Active);
    let t = waiting.totals.clone().unwrap_or_default();
    assert_eq!((t.pairs, waiting.pairs_in_flight), (0, 0), "{waiting:?}");
    let leases = old.log_text().matches("playing lease").count();
    assert_eq!(
        leases, 2,
        "the old box played the other run's two leases only"
    );

    let new = worker(&server.url(), &dir, "new-box", "popcnt,sse41,ssse3,avx2");
    let end = wait_for_end(&mut admin, needs_avx2, Duration::from_secs(120)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert_eq!(end.totals.unwrap_or_default().pairs, 2);
    assert!(new.log_text().contains("playing lease"));
    assert_eq!(old.log_text().matches("playing lease").count(), 2);

    let page = web::get(&format!("{}/workers", server.web_url())).await;
    assert_eq!(page.status, 200);
    let model = xq_worker::machine::detect().cpu_model;
    for (arch, flags) in [
        ("x86-64-avx2", "ssse3,sse41,popcnt,avx2"),
        ("x86-64", "popcnt"),
    ] {
        if std::env::consts::ARCH == "x86_64" {
            let cell = format!("data-arch=\"{arch}\" data-flags=\"{flags}\"");
            assert!(page.body.contains(&cell), "{cell} in {}", page.body);
        }
    }
    assert!(page.body.contains(&model), "the CPU model {model:?}");
    let listed = xq_tests::coordinator_cli([
        "status",
        "--coordinator",
        &server.url(),
        "--token",
        ADMIN_TOKEN,
    ]);
    let line = listed
        .lines()
        .find(|l| l.contains("needs avx2"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("requires avx2"), "{line}");
    let run_page = web::get(&format!("{}/runs/{needs_avx2}", server.web_url())).await;
    assert!(
        run_page.body.contains("workers.require_flags"),
        "the run page shows what it requires"
    );
    server.stop().await;
}

/// A copy of the built `xq-engine` with `tag` appended, so that each copy
/// has a hash of its own and runs (and benches) as the original.
fn copy_of_engine(dir: &TempDir, tag: &str) -> PathBuf {
    let bytes = std::fs::read(binary("xq-engine")).expect("xq-engine");
    let path = dir.join(&format!("xq-engine-{tag}"));
    let mut copy = bytes;
    copy.extend_from_slice(format!("\0build {tag}\0").as_bytes());
    std::fs::write(&path, copy).expect("copy");
    let mut perms = std::fs::metadata(&path).expect("copy").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path
}

/// `xq-coordinator engine add NAME PATH ARGS --db DB`: whether it
/// succeeded, and what it printed on both streams.
fn try_engine_add(db: &Path, name: &str, path: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(binary("xq-coordinator"))
        .args(["engine", "add", name])
        .arg(path)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run xq-coordinator");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let mut words = line.split_whitespace();
    words.find(|w| *w == key);
    words
        .next()
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_worker_takes_the_best_build_its_machine_runs() {
    // The two builds and the flags of a machine that runs only the first,
    // and of one that runs both, on this machine's instruction set.
    let (basic, fast, basic_flags, fast_flags, foreign) = match std::env::consts::ARCH {
        "x86_64" => (
            "x86-64",
            "x86-64-vnni512",
            "popcnt,sse41,ssse3",
            "popcnt,sse41,ssse3,avx2,bmi2,avx512,vnni",
            "armv8",
        ),
        "aarch64" => ("armv8", "armv8-dotprod", "neon", "neon,dotprod", "x86-64"),
        other => panic!("no ARCH values for {other}"),
    };
    let db = TempDb::new("machine-builds");
    let dir = TempDir::new("machine-builds");
    let (basic_path, fast_path) = (copy_of_engine(&dir, basic), copy_of_engine(&dir, fast));
    let added = engine_add(&db.0, "twin", &basic_path, &["--arch", basic]);
    assert!(
        added.contains(&format!("twin arch {basic} sha256")),
        "{added}"
    );
    let signature = field(&added, "signature").to_owned();
    let basic_sha = field(&added, "sha256").to_owned();
    let added = engine_add(
        &db.0,
        "twin",
        &fast_path,
        &["--arch", fast, "--signature", &signature],
    );
    let fast_sha = field(&added, "sha256").to_owned();
    assert_ne!(basic_sha, fast_sha);

    // A build for another instruction set cannot be benched here: its
    // signature must be stated. A stated signature the bench contradicts is
    // refused, and so is a second build for one ARCH value.
    let foreign_path = copy_of_engine(&dir, foreign);
    let (ok, text) = try_engine_add(&db.0, "twin", &foreign_path, &["--arch", foreign]);
    assert!(!ok && text.contains("--signature N"), "{text}");
    let (ok, text) = try_engine_add(
        &db.0,
        "twin",
        &foreign_path,
        &["--arch", foreign, "--signature", &signature],
    );
    assert!(ok && text.contains(&format!("arch {foreign}")), "{text}");
    let wrong = (signature.parse::<u64>().unwrap() + 1).to_string();
    let args = ["--arch", "x86-64-avx2", "--signature", &wrong];
    let (ok, text) = try_engine_add(&db.0, "twin", &fast_path, &args);
    let why = if xq_worker::machine::detect().runs(xq_proto::Arch::X86_64Avx2) {
        format!("not the stated {wrong}")
    } else {
        "a build of it must have the same".to_owned()
    };
    assert!(!ok && text.contains(&why), "{text}");
    let (ok, text) = try_engine_add(&db.0, "twin", &basic_path, &["--arch", basic]);
    assert!(!ok && text.contains("executable already"), "{text}");
    let listed = xq_tests::coordinator_cli(["engine", "list", "--db", db.0.to_str().unwrap()]);
    for (arch, sha) in [(basic, &basic_sha), (fast, &fast_sha)] {
        assert!(listed.contains(&format!("twin\t{arch}\t{sha}")), "{listed}");
    }

    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60)))
            .await;
    let mut admin = admin(&server.url()).await;
    let plain = worker(&server.url(), &dir, "plain", basic_flags);
    let first = create(&mut admin, games("twin on plain", 2, "twin", &[])).await;
    let end = wait_for_end(&mut admin, first, Duration::from_secs(180)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert!(end.flag.is_empty(), "no signature mismatch: {}", end.flag);
    plain.wait_for_log(&format!("build={basic}"), Duration::from_secs(5));
    assert_eq!(cached(&dir, "plain"), [basic_sha.as_str()]);
    // The build it played is recorded with its results: in the report's
    // per-worker table, on the run page and in the PGN of its games (the
    // built-in engine on the other side played none).
    let builds = played_builds(&server.url(), first, &dir);
    assert_eq!(builds.report, [format!("{basic} / -")], "{builds:?}");
    let run_page = web::get(&format!("{}/runs/{first}", server.web_url())).await;
    // The page escapes `/` as HTML does.
    let cell = format!("data-builds=\"{basic} &#x2f; -\"");
    assert!(run_page.body.contains(&cell), "{cell} in {}", run_page.body);
    assert!(
        builds.pgn.contains(&format!("[RedBuild \"{basic}\"]")),
        "{}",
        builds.pgn
    );
    assert_eq!(
        builds.pgn.matches(&format!("Build \"{basic}\"]")).count(),
        builds.pgn.matches("[Event ").count(),
        "one tag per game, for the side twin played: {}",
        builds.pgn
    );

    let quick = worker(&server.url(), &dir, "quick", fast_flags);
    quick.wait_for_log("registered", Duration::from_secs(60));
    drop(plain);
    let second = create(&mut admin, games("twin on quick", 2, "twin", &[])).await;
    let end = wait_for_end(&mut admin, second, Duration::from_secs(180)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert!(end.flag.is_empty(), "no signature mismatch: {}", end.flag);
    quick.wait_for_log(&format!("build={fast}"), Duration::from_secs(5));
    assert_eq!(cached(&dir, "quick"), [fast_sha.as_str()]);
    let builds = played_builds(&server.url(), second, &dir);
    assert_eq!(builds.report, [format!("{fast} / -")], "{builds:?}");
    assert!(
        builds.pgn.contains(&format!("Build \"{fast}\"]")),
        "{}",
        builds.pgn
    );
    assert!(
        !builds.pgn.contains(&format!("Build \"{basic}\"]")),
        "{}",
        builds.pgn
    );

    let page = web::get(&format!("{}/engines", server.web_url())).await;
    for arch in [basic, fast, foreign] {
        let row = format!("data-engine=\"twin\" data-arch=\"{arch}\"");
        assert!(page.body.contains(&row), "{row} in {}", page.body);
    }
    assert!(page.body.contains(&fast_sha));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_machine_or_an_unknown_required_flag_is_refused_by_name() {
    let db = TempDb::new("machine-garbled");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let mut rpc = worker_client(&server.url(), Some(WORKER_TOKEN));
    let register = |machine: pb::Machine| pb::RegisterRequest {
        name: "liar".to_owned(),
        threads: 1,
        version: "0.1.0".to_owned(),
        bench_signature: 0,
        bench_nps: 0,
        machine: Some(machine),
        tools: Vec::new(),
        target: String::new(),
        updated_from: String::new(),
        machine_id: String::new(),
    };
    let machine = pb::Machine {
        cpu_model: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz".to_owned(),
        isa: "x86_64".to_owned(),
        flags: vec!["avx2".to_owned(), "avx10_2".to_owned()],
        cores: 8,
        memory_mib: 16_384,
    };
    rpc.register(register(machine.clone()))
        .await
        .expect("an unknown but well-formed flag is left out");
    for (garbled, field) in [
        (
            pb::Machine {
                flags: vec!["<script>".to_owned()],
                ..machine.clone()
            },
            "machine.flags",
        ),
        (
            pb::Machine {
                cpu_model: "x".repeat(10_000),
                ..machine.clone()
            },
            "machine.cpu_model",
        ),
        (
            pb::Machine {
                cores: 0,
                ..machine.clone()
            },
            "machine.cores",
        ),
    ] {
        let err = rpc.register(register(garbled)).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains(field), "{}", err.message());
        assert!(err.message().len() < 400, "{}", err.message());
    }

    let mut admin = admin(&server.url()).await;
    let err = admin
        .create_run(pb::CreateRunRequest {
            spec: Some(games("typo", 1, "", &["avx2", "avx-512"])),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message().contains("require_flags") && err.message().contains("\"avx-512\""),
        "{}",
        err.message()
    );
    server.stop().await;
}
