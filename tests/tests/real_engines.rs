//! End-to-end: engines nobody here wrote, against the built-in engine through
//! `xq-worker play`. Fairy-Stockfish and Sjaak II are Debian packages that
//! `tests/run` installs; a test that cannot find its engine fails and says how to
//! install it. ElephantEye is built from source (see worker/ENGINES.md), so its test is
//! ignored by default and fails the same way when run without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use xq_engine::rules::RuleSet;
use xq_tests::binary;
use xq_tests::engines::{fairy_stockfish, sjaak};
use xq_worker::external::{Coords, EngineConfig, ExternalEngine, Protocol, Timeouts};

fn elephant_eye() -> PathBuf {
    let path = std::env::var_os("XQ_ELEEYE").map(PathBuf::from);
    path.filter(|p| p.is_file()).unwrap_or_else(|| {
        panic!(
            "ElephantEye not found: build it as worker/ENGINES.md, 'Real engines', says and set \
             XQ_ELEEYE to the executable"
        )
    })
}

fn handshake(path: &Path, protocol: Protocol) -> ExternalEngine {
    let cfg = EngineConfig {
        path: path.to_owned(),
        args: Vec::new(),
        protocol,
        options: Vec::new(),
        if_offered: Vec::new(),
        timeouts: Timeouts::default(),
        coords: None,
    };
    ExternalEngine::start(&cfg, &RuleSet::STANDARD)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Plays `pairs` pairs of `engine` against the built-in engine at `tc` and
/// returns the JSON summary, after checking that no game was lost to a fault.
fn play(engine: &Path, extra: &[&str], tc: &str, pairs: u32) -> serde_json::Value {
    let out = Command::new(binary("xq-worker"))
        .args([
            "play",
            "--quiet",
            "--json",
            "--threads",
            "2",
            "--hash",
            "16",
        ])
        .args(["--pairs", &pairs.to_string(), "--tc", tc])
        .arg("--dev-engine")
        .arg(engine)
        .args(extra)
        .output()
        .expect("run xq-worker");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json summary");
    assert_eq!(v["games"], 2 * pairs, "{v}");
    for reason in ["illegal-move", "time-forfeit", "resignation"] {
        assert!(
            v["reasons"].get(reason).is_none(),
            "{reason}: {v}\n{stderr}"
        );
    }
    let dev = &v["players"][0];
    for fault in ["time_losses", "crashes", "illegal_moves"] {
        assert_eq!(dev[fault], 0, "{fault}: {v}\n{stderr}");
    }
    assert!(dev["moves"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(dev["median_latency_ms"].as_f64().is_some(), "{v}");
    v
}

/// Checks that the engine at `path` is detected as 1–10 and set to `xiangqi`,
/// then plays it without faults.
fn one_based_engine_plays(path: &Path, name: &str) {
    let engine = handshake(path, Protocol::Uci);
    let s = engine.session();
    assert!(engine.name().is_some_and(|n| n.starts_with(name)), "{s:?}");
    assert_eq!(
        (s.coords, s.variant.as_deref()),
        (Coords::FromOne, Some("xiangqi"))
    );
    drop(engine);
    play(path, &["--dev-option", "Hash=16"], "3+0.05", 2);
}

#[test]
fn fairy_stockfish_is_detected_as_one_based_and_plays_without_faults() {
    one_based_engine_plays(&fairy_stockfish(), "Fairy-Stockfish");
}

#[test]
fn sjaak_ii_is_detected_as_one_based_and_plays_without_faults() {
    one_based_engine_plays(&sjaak(), "Sjaak II");
}

#[test]
fn a_real_engine_with_a_wrong_dialect_stops_the_match_naming_it() {
    let out = Command::new(binary("xq-worker"))
        .args(["play", "--quiet", "--pairs", "1", "--movetime", "20"])
        .arg("--dev-engine")
        .arg(fairy_stockfish())
        .args(["--dev-coords", "0-9"])
        .output()
        .expect("run xq-worker");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("illegal with ranks numbered 0-9 but legal with ranks numbered 1-10"),
        "{stderr}"
    );
}

#[test]
fn capture_conversion_is_refused_for_fairy_stockfish_naming_both() {
    let out = Command::new(binary("xq-worker"))
        .args(["play", "--quiet", "--pairs", "1", "--movetime", "20"])
        .args(["--rules", "conversion"])
        .arg("--dev-engine")
        .arg(fairy_stockfish())
        .output()
        .expect("run xq-worker");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("engine 'Fairy-Stockfish")
            && stderr.contains("cannot play rule set 'standard+conversion'"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs ElephantEye built from source (worker/ENGINES.md, 'Real engines'); set XQ_ELEEYE"]
fn elephant_eye_plays_ucci_at_a_time_control_without_faults() {
    let path = elephant_eye();
    let engine = handshake(&path, Protocol::Ucci);
    assert_eq!(engine.name(), Some("ElephantEye"));
    assert_eq!(engine.session().coords, Coords::FromZero);
    drop(engine);
    play(&path, &["--protocol", "ucci"], "3+0.05", 2);
}
