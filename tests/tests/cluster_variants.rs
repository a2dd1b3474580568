//! Variants runs on a real server with the real engine: one engine plays the
//! same openings under several rule sets, and the report reads them back.

use std::time::Duration;

use xq_proto::pb;
use xq_tests::binary;
use xq_tests::cluster::{
    ADMIN_TOKEN, TempDb, TestServer, admin, create, fast_config, spawn_engine_worker,
    variants_spec, wait_for_end,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_variants_run_totals_each_variant_and_reports_conversions() {
    let db = TempDb::new("variants-run");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let run_id = create(&mut admin, variants_spec(&["standard", "conversion"], 5, 2)).await;
    let (stop, worker) = spawn_engine_worker(&server.url(), 2);
    let last = wait_for_end(&mut admin, run_id, Duration::from_secs(120)).await;
    let _ = stop.send(());
    worker.await.expect("worker task");

    assert_eq!(last.state(), pb::RunState::Finished);
    assert_eq!(last.totals.as_ref().expect("totals").pairs, 10);
    assert_eq!(last.variants.len(), 2);
    // The rule sets come back by their canonical names.
    for (v, rules) in last
        .variants
        .iter()
        .zip(["standard", "standard+conversion"])
    {
        assert_eq!(v.rules, rules);
        assert_eq!(v.pairs, 5);
        assert_eq!(v.reasons.values().sum::<u64>(), 10);
        let s = v.stats.as_ref().expect("stats");
        assert_eq!(s.red_wins + s.draws + s.black_wins, 10);
        assert_eq!(s.pair_outcomes.iter().sum::<u64>(), 5);
        assert_eq!(s.plies_histogram.iter().sum::<u64>(), 10);
        assert!(s.captured.iter().sum::<u64>() > 0, "{rules}: no captures");
    }
    let standard = last.variants[0].stats.as_ref().expect("stats");
    assert!(standard.converted.iter().all(|&c| c == 0));
    assert!(standard.games_with_conversion.iter().all(|&c| c == 0));
    let conversion = last.variants[1].stats.as_ref().expect("stats");
    assert!(
        conversion.converted.iter().sum::<u64>() > 0,
        "no conversion in {conversion:?}"
    );

    let report = {
        let url = server.url();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(binary("xq-coordinator"))
                .args([
                    "report",
                    &run_id.to_string(),
                    "--json",
                    "--coordinator",
                    &url,
                    "--token",
                    ADMIN_TOKEN,
                ])
                .output()
                .expect("run xq-coordinator report")
        })
        .await
        .expect("report task")
    };
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).expect("one json object");
    for key in [
        "run_id",
        "kind",
        "run_state",
        "draw_contempt",
        "variants",
        "comparisons",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["kind"], "variants");
    let variant = &json["variants"][1];
    for key in [
        "rules",
        "scoring",
        "games",
        "pairs",
        "red_win",
        "draw",
        "black_win",
        "decisive",
        "red_score",
        "plies",
        "reasons",
        "conversion",
    ] {
        assert!(variant.get(key).is_some(), "missing variants[].{key}");
    }
    assert_eq!(variant["conversion"][0]["kind"], "chariot");
    assert!(json["variants"][0]["conversion"].is_null());
    let comparison = &json["comparisons"][0];
    for key in [
        "rules",
        "reference",
        "draw",
        "g_test",
        "draw_rate_test",
        "draw_lower_p",
    ] {
        assert!(comparison.get(key).is_some(), "missing comparisons[].{key}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_preset_in_the_list_is_invalid_and_named() {
    let db = TempDb::new("variants-bad");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    for (rules, named) in [
        (vec!["standard", "standard+bogus-rule"], "bogus-rule"),
        (vec!["standard"], "variants.rules"),
        (
            vec!["conversion", "standard+conversion"],
            "standard+conversion",
        ),
    ] {
        let err = admin
            .create_run(pb::CreateRunRequest {
                spec: Some(variants_spec(&rules, 2, 2)),
                reuse_identical: false,
            })
            .await
            .expect_err("refused");
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().contains(named), "{}", err.message());
    }
    server.stop().await;
}
