//! Workers of different sizes and speeds, with the real binaries: `xq-coordinator
//! serve` and `xq-worker work` as child processes on 127.0.0.1, Fairy-Stockfish
//! as the engine under test, runs made with the CLI.
//!
//! - A run of 2 search threads per engine on a worker limited to 2 CPUs plays
//!   one game at a time, and each engine is told `Threads = 2`; the same
//!   worker plays a 1-thread run two games at a time. A wrapper of the engine
//!   logs, in causal order, every `setoption`, `go` and `bestmove` it passes.
//! - A run whose game needs more memory than a worker allows is not leased to
//!   it, and the run says so.
//! - The built-in engine takes a run's search threads too (lazy SMP): a run of
//!   2 per engine plays one game at a time on the same worker.
//!
//! `worker_speed.rs` has the speed scaling, which needs the machine to itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use xq_proto::pb;
use xq_tests::cluster::{status, wait_for_end};
use xq_tests::procs::Served;

const RUN_LIMIT: Duration = Duration::from_secs(300);

/// A UCI engine that runs Fairy-Stockfish with the same arguments and
/// appends `PID > LINE` for each `setoption`/`go` it is sent and `PID <
/// LINE` for each `bestmove` it answers to `$XQ_ENGINE_LOG`, each before
/// passing the line on (so the log's order is the order of events).
const WRAPPER: &str = r#"#!/usr/bin/env python3
import os, subprocess, sys, threading
log = os.environ.get("XQ_ENGINE_LOG")
engine = subprocess.Popen([@ENGINE@] + sys.argv[1:], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, bufsize=1)
def note(way, line):
    if log and line.split()[:1] in (["setoption"], ["go"], ["bestmove"]):
        with open(log, "a") as f:
            f.write("%d %s %s\n" % (os.getpid(), way, line.strip()))
def answers():
    for line in engine.stdout:
        note("<", line)
        sys.stdout.write(line)
        sys.stdout.flush()
reader = threading.Thread(target=answers)
reader.start()
for line in sys.stdin:
    note(">", line)
    engine.stdin.write(line)
    engine.stdin.flush()
engine.stdin.close()
reader.join()
sys.exit(engine.wait())
"#;

fn write_wrapper(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fs-wrapper");
    let engine = xq_tests::engines::fairy_stockfish();
    let text = WRAPPER.replace("@ENGINE@", &format!("{:?}", engine.display().to_string()));
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A games run of `pairs` pairs, `engine` against itself, with `extra` flags.
/// A games run of `pairs` pairs between two copies of the registered
/// `engine` (`None`: the built-in engine).
fn games_run(c: &Served, engine: Option<&str>, pairs: u64, extra: &[&str]) -> u64 {
    let pairs = pairs.to_string();
    let mut args = vec![
        "games",
        "--pairs",
        &pairs,
        "--batch-pairs",
        "2",
        "--max-plies",
        "60",
    ];
    if let Some(engine) = engine {
        args.extend(["--dev-engine", engine, "--base-engine", engine]);
    }
    args.extend(extra);
    c.cli(&args).trim().parse().expect("run id")
}

/// Per engine process that searched (by the wrapper's pid; the worker's
/// bench of the engine answers `bestmove` lines too, unasked), the lines it
/// logged; and the most searches ever under way at once, over all processes.
fn read_log(path: &Path) -> (Vec<(u32, Vec<String>)>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut by_pid: Vec<(u32, Vec<String>)> = Vec::new();
    let (mut searching, mut most) = (0usize, 0usize);
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(pid), Some(way), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("a garbled log line: {line:?}")
        };
        let pid: u32 = pid.parse().unwrap();
        match (way, rest.split_whitespace().next()) {
            (">", Some("go")) => {
                searching += 1;
                most = most.max(searching);
            }
            ("<", Some("bestmove")) => searching = searching.saturating_sub(1),
            _ => {}
        }
        match by_pid.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, lines)) => lines.push(rest.to_owned()),
            None => by_pid.push((pid, vec![rest.to_owned()])),
        }
    }
    by_pid.retain(|(_, lines)| lines.iter().any(|l| l.starts_with("go ")));
    (by_pid, most)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_thread_run_plays_one_game_at_a_time_on_two_cpus_and_each_engine_gets_two_threads() {
    let c = Served::start("threads", &[]);
    c.engine_add("fsw", &write_wrapper(&c.dir.0));
    let log = c.dir.join("engines.log");
    let worker = c.worker_with(
        "two-cpus",
        &["--threads", "2"],
        &[("XQ_ENGINE_LOG", log.as_os_str())],
    );
    let mut client = c.client();

    let run = games_run(
        &c,
        Some("fsw"),
        2,
        &["--engine-threads", "2", "--nodes", "3000"],
    );
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    let (engines, most) = read_log(&log);
    assert!(engines.len() >= 2, "both players' engines ran: {engines:?}");
    for (pid, lines) in &engines {
        assert!(
            lines.iter().any(|l| l == "setoption name Threads value 2"),
            "engine {pid} was not told 2 threads: {lines:?}"
        );
    }
    assert_eq!(most, 1, "one game at a time: never two searches at once");
    worker.wait_for_log("games_at_once=1", Duration::from_secs(1));
    let report: Value = serde_json::from_str(&c.cli(&["report", &run.to_string(), "--json"]))
        .expect("report --json");
    let shown = &report["workers"][0];
    assert_eq!(
        (&shown["cores"], &shown["games_at_once"]),
        (&Value::from(2), &Value::from(1)),
        "{report}"
    );

    // The same worker plays a run of one thread per engine two games at a
    // time, which the log shows as overlapping searches.
    std::fs::remove_file(&log).unwrap();
    let run = games_run(&c, Some("fsw"), 2, &["--nodes", "3000"]);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    let (engines, most) = read_log(&log);
    assert!(
        engines
            .iter()
            .all(|(_, lines)| lines.iter().any(|l| l == "setoption name Threads value 1")),
        "{engines:?}"
    );
    assert_eq!(most, 2, "two games at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_engine_plays_a_run_of_two_search_threads_one_game_at_a_time() {
    let c = Served::start("builtin-threads", &[]);
    let worker = c.worker("two-cpus", &["--threads", "2"]);
    let mut client = c.client();
    let run = games_run(&c, None, 2, &["--engine-threads", "2", "--nodes", "3000"]);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    worker.wait_for_log("games_at_once=1", Duration::from_secs(1));
    let report: Value = serde_json::from_str(&c.cli(&["report", &run.to_string(), "--json"]))
        .expect("report --json");
    assert_eq!(report["games"], Value::from(4), "{report}");
    assert_eq!(
        report["workers"][0]["games_at_once"],
        Value::from(1),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_game_needs_more_memory_than_a_worker_allows_is_not_leased_to_it() {
    let c = Served::start("memory", &[]);
    let _small = c.worker("small", &["--threads", "2", "--memory-mib", "1536"]);
    let mut client = c.client();
    // One game: two hash tables of 512 MiB and 64 MiB per engine beyond
    // them, 1152 MiB, above the 1024 MiB the small worker has for engines.
    let run: u64 = c
        .cli(&[
            "games",
            "--pairs",
            "2",
            "--batch-pairs",
            "1",
            "--nodes",
            "200",
            "--hash",
            "512",
            "--max-plies",
            "60",
        ])
        .trim()
        .parse()
        .expect("run id");
    let get = |client: &mut xq_tests::cluster::AdminClient| {
        let mut client = client.clone();
        async move {
            client
                .get_run(pb::GetRunRequest {
                    run_id: run,
                    include_history: false,
                })
                .await
                .expect("get run")
                .into_inner()
        }
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let answer = loop {
        let answer = get(&mut client).await;
        if answer.workers_active == 1 || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!((answer.workers_active, answer.workers_able), (1, 0));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        c.query(&format!("SELECT COUNT(*) FROM leases WHERE run_id = {run}")),
        0,
        "no lease of the run went to the small worker"
    );
    let report = c.cli(&["report", &run.to_string()]);
    assert!(
        report.contains("0 of the 1 workers seen in the last ten minutes can serve"),
        "{report}"
    );

    // A worker with room for one game at a time plays it.
    let _big = c.worker("big", &["--threads", "2", "--memory-mib", "2048"]);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    let answer = get(&mut client).await;
    assert_eq!((answer.workers_active, answer.workers_able), (2, 1));
    assert_eq!(status(&mut client, run).await.totals.unwrap().pairs, 2);
}
