//! The `stats` calculator through the real binary.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xq-coordinator"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn sprt_json_has_the_documented_keys_and_values() {
    let out = run(&[
        "stats",
        "sprt",
        "--penta",
        "100,2000,5000,2100,120",
        "--elo0",
        "0",
        "--elo1",
        "2",
        "--model",
        "normalized",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "llr",
        "lower_bound",
        "upper_bound",
        "state",
        "elo",
        "elo95",
        "los",
    ] {
        assert!(keys.contains(&key), "missing {key} in {keys:?}");
    }
    assert!((v["llr"].as_f64().unwrap() - 1.250_581).abs() < 1e-4);
    assert!((v["elo"].as_f64().unwrap() - 2.609_544).abs() < 1e-4);
    assert!((v["elo95"].as_f64().unwrap() - 2.577_697).abs() < 1e-4);
    assert!((v["los"].as_f64().unwrap() - 0.976_388).abs() < 1e-4);
    assert_eq!(v["state"], "continue");
}

#[test]
fn sprt_text_output_and_negative_bounds() {
    let out = run(&[
        "stats",
        "sprt",
        "--penta",
        "300,1500,4000,1800,400",
        "--elo0",
        "-1.75",
        "--elo1",
        "0.25",
        "--model",
        "logistic",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(text.contains("llr: 8.053757"), "{text}");
    assert!(text.contains("state: accepted_h1"), "{text}");
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["stats", "elo", "--penta", "1,2,3"],
            "invalid pentanomial \"1,2,3\"",
        ),
        (
            &["stats", "elo", "--wdl", "5,-1,2"],
            "count \"-1\" is negative",
        ),
        (&["stats", "elo", "--wdl", "0,0,0"], "all counts are zero"),
        (
            &[
                "stats", "sprt", "--wdl", "5,1,2", "--elo0", "3", "--elo1", "1",
            ],
            "invalid elo bounds [3, 1]",
        ),
    ];
    for (args, want) in cases {
        let out = run(args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("xq-coordinator: "), "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn compare_reports_tests_as_json() {
    let out = run(&[
        "stats",
        "compare",
        "--a",
        "300,500,200",
        "--b",
        "250,600,150",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((v["difference"]["draw"]["diff"].as_f64().unwrap() + 0.1).abs() < 1e-12);
    assert!(v["difference"]["g_test"]["p_value"].as_f64().unwrap() < 1e-3);
    assert!(v["games_needed_per_variant"].as_u64().unwrap() > 0);
}
