//! End-to-end: `xq-worker play`, the local match runner.

use std::process::Command;

use xq_tests::binary;

fn worker() -> Command {
    Command::new(binary("xq-worker"))
}

fn temp(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xq-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn a_short_match_reports_consistent_json_and_pgn() {
    let dev = temp("dev.toml", "");
    let base = temp("base.toml", "chariot_value = 700\n");
    let pgn = temp("games.pgn", "");
    let out = worker()
        .args([
            "play",
            "--pairs",
            "2",
            "--nodes",
            "300",
            "--threads",
            "2",
            "--seed",
            "5",
            "--json",
        ])
        .arg("--dev")
        .arg(&dev)
        .arg("--base")
        .arg(&base)
        .arg("--pgn")
        .arg(&pgn)
        .output()
        .expect("run xq-worker");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json summary");
    for key in [
        "games",
        "wins",
        "draws",
        "losses",
        "pentanomial",
        "mean_plies",
        "games_per_second",
        "reasons",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["games"], 4);
    let wdl: u64 = ["wins", "draws", "losses"]
        .iter()
        .map(|k| v[k].as_u64().unwrap())
        .sum();
    assert_eq!(wdl, 4);
    let penta: u64 = v["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(penta, 2);
    let text = std::fs::read_to_string(&pgn).expect("pgn written");
    assert_eq!(text.matches("[Event ").count(), 4);
    assert_eq!(text.matches("[Termination ").count(), 4);
}

#[test]
fn bad_inputs_fail_before_any_game() {
    let bad_params = temp("bad.toml", "chariot_value = \"nine\"\n");
    let unknown = temp("unknown.toml", "piece_dragon = 5\n");
    let bad_openings = temp("openings.epd", "rnbakabnr/9/9 w\n");
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec!["--dev".into(), "/no/such/file.toml".into()],
            "cannot read parameter file",
        ),
        (
            vec!["--dev".into(), bad_params.into()],
            "bad parameter file",
        ),
        (vec!["--base".into(), unknown.into()], "piece_dragon"),
        (vec!["--rules".into(), "standard+chess".into()], "chess"),
        (
            vec!["--openings".into(), bad_openings.into()],
            "opening line 1",
        ),
        (vec!["--tc".into(), "40/x".into()], "bad time control"),
        (vec!["--pairs".into(), "0".into()], "--pairs"),
    ];
    for (args, needle) in cases {
        let out = worker()
            .arg("play")
            .args(&args)
            .output()
            .expect("run xq-worker");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("xq-worker: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}
