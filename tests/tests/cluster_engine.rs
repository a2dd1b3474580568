//! The cluster with the real engine: a coordinator on 127.0.0.1:0 and worker
//! clients whose player is the game runner ([`EnginePlayer`]), playing real games.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use xq_proto::pb;
use xq_tests::cluster::{TempDb, TestServer, admin, create, fast_config, wait_for_end};
use xq_worker::client::{self, ClientConfig, ClientSummary};
use xq_worker::{BatchPlayer, EnginePlayer};

fn settings(nodes: u64) -> pb::MatchSettings {
    pb::MatchSettings {
        limit: Some(pb::Limit {
            kind: Some(pb::limit::Kind::Nodes(nodes)),
        }),
        hash_mb: 1,
        rules: "standard".to_owned(),
        openings: Some(pb::match_settings::Openings::Builtin(pb::BuiltinOpenings {
            random_plies: 4,
        })),
        seed: 3,
        adjudication: Some(pb::Adjudication {
            resign_cp: 1000,
            resign_moves: 3,
            draw_cp: 10,
            draw_moves: 8,
            draw_after_move: 40,
            max_plies: 300,
        }),
        draw_contempt: None,
    }
}

fn engine_worker(
    url: &str,
    threads: u32,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<ClientSummary>) {
    let player: Arc<dyn BatchPlayer> =
        Arc::new(EnginePlayer::new(threads as usize).expect("game threads"));
    let mut config = ClientConfig::new(url.to_owned(), "engine-test".to_owned(), threads);
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(200);
    let (stop, stopped) = oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        client::run(config, player, async {
            let _ = stopped.await;
        })
        .await
        .expect("worker")
    });
    (stop, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sprt_accepts_the_defaults_against_a_chariot_worth_300() {
    let db = TempDb::new("engine-sprt");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let weak: HashMap<String, i64> = [("chariot_value".to_owned(), 300)].into();
    let run = create(
        &mut admin,
        pb::RunSpec {
            name: "chariot 300".to_owned(),
            priority: 0,
            batch_pairs: 4,
            settings: Some(settings(300)),
            kind: Some(pb::run_spec::Kind::Sprt(pb::SprtSpec {
                dev_params: HashMap::new(),
                base_params: weak,
                elo0: 0.0,
                elo1: 20.0,
                alpha: 0.05,
                beta: 0.05,
                model: pb::EloModel::Normalized.into(),
                max_games: 2000,
            })),
        },
    )
    .await;
    let (stop, handle) = engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
    let sprt = end.sprt.expect("sprt status");
    assert_eq!(sprt.state(), pb::SprtState::AcceptedH1, "{end:?}");
    let totals = end.totals.clone().expect("totals");
    assert!(totals.wins > totals.losses, "{totals:?}");
    assert_eq!(totals.wins + totals.draws + totals.losses, 2 * totals.pairs);
    let _ = stop.send(());
    handle.await.expect("worker task");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spsa_moves_a_bad_chariot_value_toward_its_default() {
    let db = TempDb::new("engine-spsa");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let start = 400.0;
    let run = create(
        &mut admin,
        pb::RunSpec {
            name: "chariot from 400".to_owned(),
            priority: 0,
            batch_pairs: 4,
            settings: Some(settings(300)),
            kind: Some(pb::run_spec::Kind::Spsa(pb::SpsaSpec {
                params: vec![pb::SpsaParam {
                    name: "chariot_value".to_owned(),
                    start,
                    min: 100.0,
                    max: 2000.0,
                    c_end: 60.0,
                    r_end: 0.02,
                }],
                games: 240,
            })),
        },
    )
    .await;
    let (stop, handle) = engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
    let theta = end.spsa.clone().expect("spsa status").theta[0].value;
    assert!(
        theta > start + 100.0,
        "θ ended at {theta}, started at {start}, default 900"
    );
    let _ = stop.send(());
    handle.await.expect("worker task");
    server.stop().await;
}
