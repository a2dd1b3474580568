//! A result the coordinator refuses is kept by the worker: written with its
//! games to the worker's rejected directory beside the coordinator's
//! message, and not sent again; nothing of it is counted or stored.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use xq_proto::{BatchOutcome, WorkSpec};
use xq_tests::cluster::{
    TempDb, TestServer, admin, core_on, create, engine_settings, fast_config, games_spec,
    spawn_worker_with, status,
};
use xq_worker::{BatchPlayer, EnginePlayer};

/// The real game runner, but game 1 of every result claims another opening.
struct Miscounting(EnginePlayer);

impl BatchPlayer for Miscounting {
    fn play(
        &self,
        work: &WorkSpec,
        cancel: &Arc<AtomicBool>,
        progress: &(dyn Fn(u32) + Sync),
    ) -> anyhow::Result<BatchOutcome> {
        let mut outcome = self.0.play(work, cancel, progress)?;
        if let Some(g) = outcome.games.get_mut(1) {
            g.opening_index += 1000;
        }
        Ok(outcome)
    }

    fn bench(&self) -> xq_worker::Bench {
        self.0.bench()
    }
}

fn kept(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pb"))
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_result_is_kept_on_disk_with_the_coordinators_message_and_not_retried() {
    let db = TempDb::new("refused");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = games_spec(1, 1);
    spec.settings = Some(engine_settings(200));
    let run = create(&mut admin, spec).await;
    let dir = std::env::temp_dir().join(format!("xq-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let player = Arc::new(Miscounting(EnginePlayer::new(1).expect("game threads")));
    let rejected = dir.clone();
    let (stop, handle) = spawn_worker_with(&server.url(), player, 1, move |c| {
        c.rejected_dir = rejected;
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while kept(&dir).is_empty() {
        assert!(Instant::now() < deadline, "no refused result was kept");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Long enough for a retry to show, well inside the 30 s lease.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = stop.send(());
    let summary = handle.await.expect("worker task");
    let files = kept(&dir);
    assert_eq!(files.len(), 1, "one refusal, not retried: {files:?}");
    assert_eq!(summary.results_refused, 1, "{summary:?}");
    assert_eq!(summary.leases_accepted, 0, "{summary:?}");

    let request = xq_worker::rejected::load(&files[0]).expect("the kept result reads back");
    let results = request.results.expect("results");
    assert_eq!(results.games.len(), 2, "the result's games are kept");
    assert_eq!(results.totals.expect("totals").pairs, 1);
    assert_eq!(results.games[1].opening_index, 1000);
    let note = std::fs::read_to_string(files[0].with_extension("txt")).expect("the reason");
    assert!(note.contains("code: InvalidArgument"), "{note}");
    assert!(
        note.contains("results.games[1].opening_index"),
        "the coordinator's message names the field: {note}"
    );

    let now = status(&mut admin, run).await;
    assert_eq!(now.totals.expect("totals").pairs, 0, "nothing was counted");
    let stored = core_on(&db.0)
        .queries()
        .stored_games(run)
        .await
        .expect("count");
    assert_eq!(stored.games, 0, "nothing was stored");
    server.stop().await;
    std::fs::remove_dir_all(&dir).expect("remove the rejected dir");
}
