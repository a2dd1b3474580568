//! SPSA for any engine: the built `xq-engine` registered as an *external*
//! engine (with `xq-coordinator engine add`, which records its spin options)
//! and tuned through its UCI options; tunes that name an option the engine
//! does not offer are refused; a tune with `--verify` ends with its linked
//! SPRT.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use tonic::Code;
use xq_proto::pb;
use xq_tests::binary;
use xq_tests::cluster::{
    TempDb, TestServer, admin, create, engine_settings, fast_config, spawn_worker, wait_for_end,
};
use xq_tests::web::polylines;
use xq_worker::EnginePlayer;

/// `xq-coordinator engine add NAME xq-engine --db DB`; returns its output.
fn engine_add(db: &Path, name: &str) -> String {
    xq_tests::engine_add(db, name, &binary("xq-engine"), &[])
}

fn cache(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("xq-spsa-cache-{tag}-{}", std::process::id()))
}

fn chariot(start: f64, min: f64, max: f64) -> pb::SpsaParam {
    pb::SpsaParam {
        name: "chariot_value".to_owned(),
        start,
        min,
        max,
        c_end: 60.0,
        r_end: 0.02,
        is_float: false,
    }
}

fn tune(engine: &str, params: Vec<pb::SpsaParam>, games: u64) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: "external tune".to_owned(),
        priority: 0,
        batch_pairs: 0,
        settings: Some(engine_settings(300)),
        kind: Some(pb::run_spec::Kind::Spsa(pb::SpsaSpec {
            params,
            games,
            engine: engine.to_owned(),
            pairs_per_iteration: 4,
            ..Default::default()
        })),
        workers: None,
    }
}

/// The in-process tune in `cluster_engine.rs` moves chariot_value from 400
/// by more than 100 in 240 games; through the UCI option of the external
/// engine the same tune must too. If θ+ and θ− never reached the engine
/// processes, both players would be the same engine and θ would drift by
/// noise only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_engine_is_tuned_through_its_uci_option() {
    let db = TempDb::new("spsa-external");
    let added = engine_add(&db.0, "xq");
    assert!(added.contains("spin options"), "{added}");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let mut admin = admin(&server.url()).await;
    let start = 400.0;
    let run = create(
        &mut admin,
        tune("xq", vec![chariot(start, 100.0, 2000.0)], 240),
    )
    .await;
    let cache = cache("tune");
    let player = Arc::new(EnginePlayer::with_cache(2, cache.clone()).expect("threads"));
    let (stop, handle) = spawn_worker(&server.url(), player, 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(300)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert_eq!(end.spec.as_ref().map(|s| s.batch_pairs), Some(4));
    let theta = end.spsa.clone().expect("spsa status").theta[0].value;
    assert!(
        theta > start + 100.0,
        "θ ended at {theta}, started at {start}, default 932"
    );
    let _ = stop.send(());
    handle.await.expect("worker task");
    server.stop().await;
    let _ = std::fs::remove_dir_all(cache);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tune_of_an_option_the_engine_does_not_offer_is_refused() {
    let db = TempDb::new("spsa-refused");
    engine_add(&db.0, "xq");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let admin = admin(&server.url()).await;
    let refuse = |spec: pb::RunSpec| {
        let mut admin = admin.clone();
        async move {
            admin
                .create_run(pb::CreateRunRequest {
                    spec: Some(spec),
                    reuse_identical: false,
                })
                .await
                .expect_err("refused")
        }
    };
    let mut rook = chariot(400.0, 100.0, 2000.0);
    rook.name = "rook_value".to_owned();
    let err = refuse(tune("xq", vec![rook], 100)).await;
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains("\"rook_value\"") && err.message().contains("chariot_value"),
        "{}",
        err.message()
    );
    let err = refuse(tune("xq", vec![chariot(400.0, 100.0, 5000.0)], 100)).await;
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains("chariot_value") && err.message().contains("[100, 2000]"),
        "{}",
        err.message()
    );
    let err = refuse(tune("nobody", vec![chariot(400.0, 100.0, 2000.0)], 100)).await;
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    let mut ppi = tune("xq", vec![chariot(400.0, 100.0, 2000.0)], 100);
    ppi.batch_pairs = 8;
    let err = refuse(ppi).await;
    assert!(
        err.message().contains("pairs_per_iteration"),
        "{}",
        err.message()
    );
    server.stop().await;
}

/// One command: register the engine, tune it from pasted fishtest lines with
/// `--verify`, and local mode follows the verification SPRT to its verdict.
/// From chariot_value 400 the tuned engine is far stronger than the start,
/// so the SPRT must accept H1.
#[test]
fn local_mode_tunes_then_verifies_with_a_linked_sprt() {
    let db = TempDb::new("spsa-verify");
    engine_add(&db.0, "xq");
    let params = db.0.with_extension("spsa.txt");
    std::fs::write(
        &params,
        "# pasted\nchariot_value, int, 400, 100, 2000, 60, 0.02\n",
    )
    .expect("write params");
    let cache = cache("verify");
    let plot = db.0.with_extension("plot.svg");
    let out = Command::new(binary("xq-coordinator"))
        .args(["local", "spsa", "--engine", "xq", "--games", "240"])
        .arg("--plot")
        .arg(&plot)
        .args([
            "--pairs-per-iteration",
            "4",
            "--verify",
            "0,40",
            "--nodes",
            "300",
        ])
        .args(["--hash", "1", "--threads", "2", "--db"])
        .arg(&db.0)
        .arg("--params")
        .arg(&params)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .expect("run local spsa");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("chariot_value, int, "),
        "the result in the pasted form: {text}"
    );
    assert!(text.contains("verified by"), "{text}");
    assert!(text.contains("verifies tune"), "{text}");
    assert!(
        text.contains("tuned, and the tune is +") && text.contains("H1 accepted"),
        "{text}"
    );
    // --plot: the tune's two θ panels (120 pairs in leases of 4 = 30 results
    // plus the start), then the verification's LLR panel.
    let svg = std::fs::read_to_string(&plot).expect("the plot file");
    let _ = std::fs::remove_file(&plot);
    let lines = polylines(&svg);
    assert_eq!(lines.iter().filter(|&&n| n == 31).count(), 2, "{lines:?}");
    assert!(svg.contains("height=\"840\"") && svg.contains("LLR against games"));
    let _ = std::fs::remove_dir_all(cache);
    let _ = std::fs::remove_file(params);
}
