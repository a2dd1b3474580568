//! End-to-end: real coordinators on `127.0.0.1:0`, real worker clients over
//! gRPC, and a deterministic simulated player.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tonic::Code;
use xq_coordinator::local::LocalCluster;
use xq_coordinator::pace::PaceConfig;
use xq_proto::pb;
use xq_tests::cluster::*;
use xq_worker::BatchPlayer;
use xq_worker::client::ClientSummary;

/// Starts a worker client; stop it with the returned sender.
fn worker(
    url: &str,
    player: Arc<dyn BatchPlayer>,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<ClientSummary>) {
    spawn_worker(url, player, 1)
}

fn totals(s: &pb::RunStatus) -> pb::Totals {
    s.totals.clone().expect("totals")
}

/// Checks that the totals describe exactly `pairs` pairs.
fn assert_exact(t: &pb::Totals, pairs: u64) {
    assert_eq!(t.pairs, pairs);
    assert_eq!(t.pentanomial.iter().sum::<u64>(), pairs);
    assert_eq!(t.wins + t.draws + t.losses, 2 * pairs);
    assert_eq!(t.reasons.values().sum::<u64>(), 2 * pairs);
    assert!(t.total_plies >= 2 * pairs, "every game plays its opening");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sprt_with_a_large_elo_difference_accepts_h1() {
    let db = TempDb::new("sprt");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, sprt_spec(0.0, 5.0, 0)).await;
    let player: Arc<dyn BatchPlayer> = Arc::new(SimulatedPlayer::first_player_stronger(150.0));
    let workers = [
        worker(&server.url(), player.clone()),
        worker(&server.url(), player),
    ];
    let end = wait_for_end(&mut admin, run, Duration::from_secs(60)).await;
    let sprt = end.sprt.unwrap();
    assert_eq!(sprt.state(), pb::SprtState::AcceptedH1);
    assert!(sprt.llr > sprt.upper_bound);
    assert_eq!(end.state(), pb::RunState::Finished);
    assert!(end.elo.unwrap().elo > 50.0);
    for (stop, handle) in workers {
        let _ = stop.send(());
        handle.await.unwrap();
    }
    // Results of leases cancelled at the bound are not counted afterwards.
    let after = status(&mut admin, run).await;
    assert_eq!(totals(&after), totals(&end));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_games_run_totals_exactly() {
    let db = TempDb::new("games");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games_spec(45, 8)).await;
    let player: Arc<dyn BatchPlayer> = Arc::new(SimulatedPlayer::first_player_stronger(50.0));
    let (stop, handle) = worker(&server.url(), player);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(30)).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&totals(&end), 45);
    assert!(end.elo.is_some());
    let _ = stop.send(());
    let summary = handle.await.unwrap();
    assert_eq!(summary.pairs_accepted, 45);
    assert_eq!(summary.leases_accepted, 6);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_worker_gets_leases_of_the_target_time_and_the_run_totals_exactly() {
    let db = TempDb::new("pace");
    let mut config = fast_config(Duration::from_secs(10));
    config.scheduler.pace = PaceConfig {
        target: Duration::from_millis(400),
        max_pairs: 64,
    };
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games_spec(400, 4)).await;
    let mut player = SimulatedPlayer::first_player_stronger(50.0);
    player.pair_delay = Duration::from_millis(2);
    let (stop, handle) = worker(&server.url(), Arc::new(player));
    let end = wait_for_end(&mut admin, run, Duration::from_secs(60)).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&totals(&end), 400);
    let _ = stop.send(());
    let summary = handle.await.unwrap();
    assert_eq!(summary.pairs_accepted, 400);
    // 100 leases of one batch each without sizing; with it, after the first
    // batch the leases hold whole batches up to 64 pairs (at 2 ms a pair and
    // more per lease, a lease of 400 ms holds far more than one batch).
    assert!(
        summary.leases_accepted <= 30,
        "{} leases for 400 pairs in batches of 4",
        summary.leases_accepted
    );
    server.stop().await;
}

/// Five honest simulated workers and one that reports plausible counts from
/// a match 300 Elo better for the first player (at 150 its residual over
/// its ~200 pairs lands near the exclusion bound of repeated looks, and
/// which slices it happens to get decided the test): the run, which excludes
/// flagged workers, flags and excludes that one, plays its slices again, and
/// ends with exactly the honest workers' results (the simulated player's
/// games depend only on the opening, so the honest result is known).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_reporting_biased_counts_is_flagged_excluded_and_its_results_set_aside() {
    let db = TempDb::new("biased");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = games_spec(1200, 10);
    spec.workers = Some(pb::WorkerPolicy {
        exclude_flagged: true,
        ..Default::default()
    });
    let run = create(&mut admin, spec).await;
    let mut workers = Vec::new();
    for i in 0..6 {
        let mut player = SimulatedPlayer::first_player_stronger(if i == 0 { 300.0 } else { 0.0 });
        player.pair_delay = Duration::from_millis(1);
        workers.push(worker(&server.url(), Arc::new(player)));
    }
    let end = wait_for_end(&mut admin, run, Duration::from_secs(60)).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    let answer = admin
        .get_run(pb::GetRunRequest {
            run_id: run,
            include_history: false,
        })
        .await
        .unwrap()
        .into_inner();
    let excluded: Vec<&pb::WorkerHealth> = answer.workers.iter().filter(|w| w.excluded).collect();
    assert_eq!(excluded.len(), 1, "{:#?}", answer.workers);
    assert!(excluded[0].flag.contains("residual"), "{:?}", excluded[0]);
    let p = &excluded[0].pentanomial;
    assert!(
        p[3] + p[4] > p[0] + p[1],
        "the excluded worker is the biased one: {p:?}"
    );

    let mut work = xq_proto::WorkSpec::example();
    work.openings.seed = 7;
    work.openings.offset = 0;
    work.pairs = 1200;
    let honest = SimulatedPlayer::first_player_stronger(0.0)
        .play(&work, &Default::default(), &|_| {})
        .unwrap()
        .totals;
    let t = totals(&end);
    assert_exact(&t, 1200);
    assert_eq!(
        (t.pentanomial.clone(), t.wins, t.draws, t.losses),
        (
            honest.pentanomial.0.to_vec(),
            honest.wdl.wins,
            honest.wdl.draws,
            honest.wdl.losses
        ),
        "the run counts exactly the honest results"
    );
    for (stop, handle) in workers {
        let _ = stop.send(());
        let _ = handle.await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spsa_moves_a_parameter_toward_the_optimum() {
    let db = TempDb::new("spsa");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    // A real engine parameter, so the coordinator accepts it; the simulated Elo
    // surface has its optimum at chariot_value = 900, the start is 850.
    let param = pb::SpsaParam {
        name: "chariot_value".to_owned(),
        start: 850.0,
        min: 750.0,
        max: 950.0,
        c_end: 10.0,
        r_end: 0.005,
        is_float: false,
    };
    let run = create(&mut admin, spsa_spec(vec![param], 1600, 4)).await;
    let player = SimulatedPlayer::with_strength(|p| {
        let x = p.get("chariot_value").copied().unwrap_or(850) as f64;
        -0.05 * (x - 900.0) * (x - 900.0)
    });
    let (stop, handle) = worker(&server.url(), Arc::new(player));
    let end = wait_for_end(&mut admin, run, Duration::from_secs(60)).await;
    let spsa = end.spsa.clone().unwrap();
    assert_eq!(spsa.iter, 800);
    let theta = spsa.theta[0].value;
    assert!(theta > 875.0, "θ ended at {theta}, start 850, optimum 900");
    let history = admin
        .get_run(pb::GetRunRequest {
            run_id: run,
            include_history: true,
        })
        .await
        .unwrap()
        .into_inner()
        .history;
    assert_eq!(history.len(), 200, "one row per applied 4-pair result");
    assert_eq!(history.last().unwrap().theta, vec![theta]);
    let _ = stop.send(());
    handle.await.unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_workers_lease_expires_is_handed_out_again_and_its_late_result_is_ignored() {
    let db = TempDb::new("expire");
    let server = TestServer::start(
        "127.0.0.1:0",
        &db.0,
        fast_config(Duration::from_millis(300)),
    )
    .await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games_spec(16, 8)).await;
    // A worker takes the first slice and vanishes.
    let (mut raw, raw_id) = raw_worker(&server.url(), "raw").await;
    let lost = raw
        .request_work(pb::RequestWorkRequest { worker_id: raw_id })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    assert_eq!(
        lost.work
            .as_ref()
            .unwrap()
            .openings
            .as_ref()
            .unwrap()
            .offset,
        0
    );
    let player: Arc<dyn BatchPlayer> = Arc::new(SimulatedPlayer::first_player_stronger(0.0));
    let (stop, handle) = worker(&server.url(), player);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(30)).await;
    assert_exact(&totals(&end), 16);
    // The vanished worker comes back too late.
    let late = raw
        .submit_result(pb::SubmitResultRequest {
            worker_id: raw_id,
            lease_id: lost.lease_id,
            results: Some(drawn(&lost)),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(late.status(), pb::SubmitStatus::ExpiredIgnored);
    assert_eq!(totals(&status(&mut admin, run).await), totals(&end));
    let _ = stop.send(());
    assert_eq!(handle.await.unwrap().pairs_accepted, 16);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_submission_is_answered_duplicate_and_changes_nothing() {
    let db = TempDb::new("dup");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games_spec(16, 8)).await;
    let (mut raw, worker_id) = raw_worker(&server.url(), "raw").await;
    let lease = raw
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    let submit = pb::SubmitResultRequest {
        worker_id,
        lease_id: lease.lease_id,
        results: Some(drawn(&lease)),
    };
    let first = raw
        .submit_result(submit.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.status(), pb::SubmitStatus::Accepted);
    let before = totals(&status(&mut admin, run).await);
    assert_exact(&before, 8);
    let second = raw.submit_result(submit).await.unwrap().into_inner();
    assert_eq!(second.status(), pb::SubmitStatus::Duplicate);
    assert_eq!(totals(&status(&mut admin, run).await), before);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbled_requests_get_invalid_argument_naming_the_field() {
    let db = TempDb::new("garbled");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = games_spec(4, 4);
    spec.kind = None;
    let err = admin
        .create_run(pb::CreateRunRequest {
            spec: Some(spec),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("spec.kind"), "{}", err.message());
    let mut spec = sprt_spec(0.0, 5.0, 0);
    if let Some(pb::run_spec::Kind::Sprt(s)) = &mut spec.kind {
        s.model = 0;
    }
    let err = admin
        .create_run(pb::CreateRunRequest {
            spec: Some(spec),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("sprt.model"), "{}", err.message());
    let (mut raw, worker_id) = raw_worker(&server.url(), "raw").await;
    let err = raw
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: 99,
            results: None,
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("results"), "{}", err.message());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_coordinator_continues_with_nothing_lost_or_counted_twice() {
    let db = TempDb::new("restart");
    let config = fast_config(Duration::from_secs(2));
    let server = TestServer::start("127.0.0.1:0", &db.0, config.clone()).await;
    let addr = server.addr.to_string();
    let url = server.url();
    let mut admin_client = admin(&url).await;
    let run = create(&mut admin_client, games_spec(120, 4)).await;
    let mut player = SimulatedPlayer::first_player_stronger(30.0);
    player.pair_delay = Duration::from_millis(3);
    let (stop, handle) = worker(&url, Arc::new(player));
    wait_for_pairs(&mut admin_client, run, 30).await;
    let mid = totals(&status(&mut admin_client, run).await).pairs;
    assert!(
        mid < 120,
        "the run must still be going when the coordinator stops"
    );
    server.stop().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = TestServer::start(&addr, &db.0, config).await;
    let mut admin_client = admin(&url).await;
    let end = wait_for_end(&mut admin_client, run, Duration::from_secs(60)).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&totals(&end), 120);
    let _ = stop.send(());
    let summary = handle.await.unwrap();
    assert_eq!(summary.pairs_accepted, 120);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_mode_runs_and_resumes_an_identical_run() {
    let db = TempDb::new("local");
    let player: Arc<dyn BatchPlayer> = Arc::new(SimulatedPlayer::first_player_stronger(20.0));
    let cluster = LocalCluster::start(
        &db.0,
        fast_config(Duration::from_secs(10)),
        player.clone(),
        2,
        1,
        None,
    )
    .await
    .unwrap();
    let mut admin = run_client(&cluster.url(), Some(cluster.personal_token()));
    let request = pb::CreateRunRequest {
        spec: Some(games_spec(24, 4)),
        reuse_identical: true,
    };
    let first = admin
        .create_run(request.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(!first.reused);
    let end = wait_for_end(&mut admin, first.run_id, Duration::from_secs(30)).await;
    assert_exact(&totals(&end), 24);
    let summary = cluster.stop().await.unwrap();
    assert_eq!(summary.pairs_accepted, 24);
    // A finished run is not resumed: the same request creates a new run.
    let cluster = LocalCluster::start(
        &db.0,
        fast_config(Duration::from_secs(10)),
        player,
        0,
        1,
        None,
    )
    .await
    .unwrap();
    let mut admin = run_client(&cluster.url(), Some(cluster.personal_token()));
    let second = admin
        .create_run(request.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(!second.reused);
    let third = admin.create_run(request).await.unwrap().into_inner();
    assert!(third.reused);
    assert_eq!(third.run_id, second.run_id);
    cluster.stop().await.unwrap();
}
