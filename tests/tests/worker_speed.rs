//! Time controls scaled by the engine under test, with the real binaries:
//! `xq-coordinator serve` and two `xq-worker work` processes on 127.0.0.1,
//! Fairy-Stockfish registered as the engine. One worker is pinned to a CPU of
//! its own, the other to a CPU it shares with two busy loops; each measures
//! the base engine with the engine's own bench before its first lease, and
//! they get different time factors, both shown by `report`. Alone in its
//! test binary: other tests' games would slow the "fast" CPU too.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use xq_proto::pb;
use xq_tests::cluster::wait_for_end;
use xq_tests::procs::Served;

const RUN_LIMIT: Duration = Duration::from_secs(300);

/// Busy loops pinned to one CPU, stopped on drop.
struct Hogs(Vec<Child>);

impl Hogs {
    fn on_cpu(cpu: &str, n: usize) -> Hogs {
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("taskset")
                        .args(["-c", cpu, "sh", "-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("taskset")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_of_different_speeds_get_different_time_factors_from_the_engine_under_test() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(cpus >= 2, "the test pins its two workers to two CPUs");
    let c = Served::start("speeds", &[]);
    c.engine_add("fs", &xq_tests::engines::fairy_stockfish());
    let url = c.coordinator.url();
    let worker = |name: &str, cpu: &str| {
        let cache = c.dir.join(&format!("{name}-cache"));
        Command::new("taskset")
            .args(["-c", cpu])
            .arg(xq_tests::binary("xq-worker"))
            .args([
                "work",
                "--coordinator",
                &url,
                "--name",
                name,
                "--threads",
                "1",
            ])
            .env("XQ_TOKEN", &c.worker)
            .env("XDG_CACHE_HOME", &cache)
            .env("XDG_STATE_HOME", &cache)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(c.dir.join(&format!("{name}.log"))).unwrap())
            .spawn()
            .expect("start xq-worker")
    };
    let _hogs = Hogs::on_cpu("1", 2);
    let mut fast = worker("fast", "0");
    let mut slow = worker("slow", "1");
    let registered = |name: &str| {
        std::fs::read_to_string(c.dir.join(&format!("{name}.log")))
            .unwrap_or_default()
            .contains("registered")
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !(registered("fast") && registered("slow")) {
        assert!(
            std::time::Instant::now() < deadline,
            "both workers register"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut client = c.client();
    let run = {
        let pairs = "2".to_owned();
        let args = [
            "games",
            "--pairs",
            &pairs,
            "--batch-pairs",
            "1",
            "--max-plies",
            "40",
            "--movetime",
            "20",
            "--scale-to-nps",
            "1000000",
            "--dev-engine",
            "fs",
            "--base-engine",
            "fs",
        ];
        c.cli(&args).trim().parse::<u64>().expect("run id")
    };
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    let _ = (fast.kill(), slow.kill(), fast.wait(), slow.wait());
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    let report: Value = serde_json::from_str(&c.cli(&["report", &run.to_string(), "--json"]))
        .expect("report --json");
    let shown = |name: &str| {
        let w = report["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .unwrap_or_else(|| panic!("{name} played a lease: {report}"));
        (
            w["engine_nps"].as_u64().expect("a measured speed"),
            w["time_factor"].as_f64().expect("a factor"),
        )
    };
    let (fast_nps, fast_factor) = shown("fast");
    let (slow_nps, slow_factor) = shown("slow");
    eprintln!(
        "fast worker: {fast_nps} nodes per second, factor {fast_factor:.3}; slow worker: {slow_nps}, \
         factor {slow_factor:.3}"
    );
    for (nps, factor) in [(fast_nps, fast_factor), (slow_nps, slow_factor)] {
        // serde_json reads a float to within an ulp, not exactly.
        let expected = xq_proto::capacity::time_factor(1_000_000, nps);
        assert!((factor - expected).abs() < 1e-12, "{factor} != {expected}");
    }
    assert!(
        slow_factor > fast_factor,
        "the worker sharing its CPU with two busy loops measured {slow_nps} nodes per second, the \
         other {fast_nps}: factors {slow_factor} and {fast_factor}"
    );
    let text = c.cli(&["report", &run.to_string()]);
    assert!(
        text.contains(&format!("{slow_nps}")) && text.contains(&format!("{fast_nps}")),
        "{text}"
    );
}
