//! Read-only views of runs, their histories, results, workers and games,
//! for gRPC's `GetRun` and `ExportGames`, the web view and the reports.
//! Each is one call on the core's read connection (never the writer's
//! queue) and writes nothing.

use std::collections::{BTreeMap, HashMap};

use xq_engine::rules::Reason;
use xq_proto::capacity::Capacity;

use super::Core;
use crate::datagen_export::{self, Counts as ExportCounts, DatagenExportError, Exporter};
use crate::game_export::{self, Export, ExportedGame, GameQuery};
use crate::runs::health::{RunFlag, WorkerHealth};
use crate::runs::{RunStatus, SpsaHistoryRow};
use crate::store::runs as run_rows;
use crate::store::{
    Store, StoreError, activity, build_failures, games, health, history, lease_results, serving,
    speeds, worker_versions,
};

pub use crate::store::activity::{Counts, WorkerActivity};
pub use crate::store::build_failures::StoredFailure;
pub use crate::store::games::{ArchivedGame, FailureCount, GameFilter, GameRow};
pub use crate::store::history::{LlrPoint, TotalsPoint};
pub use crate::store::serving::{Serving, WorkerPlay};
pub use crate::store::speeds::Speed;
pub use crate::store::worker_versions::WorkerVersionRow;

/// Read-only views ([`Core::queries`]).
#[derive(Debug, Clone, Copy)]
pub struct Queries<'a> {
    pub(super) core: &'a Core,
}

/// What a run's graphs draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Histories {
    pub totals: Vec<TotalsPoint>,
    pub llr: Vec<LlrPoint>,
    pub spsa: Vec<SpsaHistoryRow>,
}

/// The workers of a run: their results and health, the failed builds of its
/// source engines, and who can serve it now.
#[derive(Debug, Clone)]
pub struct RunWorkers {
    pub health: Vec<WorkerHealth>,
    pub build_failures: Vec<StoredFailure>,
    pub serving: Serving,
}

/// Every worker as the workers page shows it.
#[derive(Debug, Clone)]
pub struct WorkersView {
    pub workers: Vec<WorkerActivity>,
    /// Failed games by worker and reason: `(worker, reason, count)`.
    pub failures: Vec<(u64, Reason, u64)>,
    /// Runs' flags against each worker.
    pub flags: BTreeMap<u64, Vec<RunFlag>>,
    /// Each worker's measured speeds, by engine.
    pub measured: HashMap<u64, BTreeMap<String, Speed>>,
    /// Games each worker plays at once of the run it plays now.
    pub at_once: HashMap<u64, u32>,
    pub versions: Vec<WorkerVersionRow>,
}

/// What the archive holds of one run ([`Queries::stored_games`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoredGames {
    /// Games stored (those its retention keeps of the counted ones).
    pub games: u64,
    /// Bytes of their compressed batches, one DEFLATE blob per result.
    pub bytes: u64,
}

/// A page of a run's stored games.
#[derive(Debug, Clone)]
pub struct GamesPage {
    pub run: RunStatus,
    /// Games that pass the filter, in all pages.
    pub total: u64,
    pub rows: Vec<GameRow>,
    /// Names of players 0 and 1 (an external engine's, or dev/base).
    pub players: [String; 2],
    /// Every worker's id and name.
    pub workers: Vec<(u64, String)>,
}

impl Queries<'_> {
    /// The connection every query reads on.
    fn on(&self) -> &Store {
        &self.core.views
    }

    pub async fn get_run(&self, id: u64) -> Result<RunStatus, StoreError> {
        self.on().call(move |conn| run_rows::load(conn, id)).await
    }

    pub async fn list_runs(&self) -> Result<Vec<RunStatus>, StoreError> {
        self.on().call(|conn| run_rows::list(conn)).await
    }

    /// Run `id` and the histories its graphs draw, in one read.
    pub async fn with_histories(&self, id: u64) -> Result<(RunStatus, Histories), StoreError> {
        self.on()
            .call(move |conn| {
                let status = run_rows::load(conn, id)?;
                let h = Histories {
                    totals: history::totals(conn, id)?,
                    llr: history::llr(conn, id)?,
                    spsa: run_rows::spsa_history(conn, id)?,
                };
                Ok((status, h))
            })
            .await
    }

    /// The workers of `run` ([`RunWorkers`]), in one read.
    pub async fn run_workers(&self, run: RunStatus) -> Result<RunWorkers, StoreError> {
        self.on()
            .call(move |conn| {
                Ok(RunWorkers {
                    health: health::for_run(conn, run.id)?,
                    build_failures: build_failures::for_run(conn, run.id)?,
                    serving: serving::for_run(conn, &run, crate::store::now_ms())?,
                })
            })
            .await
    }

    /// The failed builds of run `id` ([`build_failures::for_run`]).
    pub async fn build_failures(&self, id: u64) -> Result<Vec<StoredFailure>, StoreError> {
        self.on()
            .call(move |conn| build_failures::for_run(conn, id))
            .await
    }

    /// Failures among `id`'s stored games, by worker, loser and reason.
    pub async fn failures(&self, id: u64) -> Result<Vec<FailureCount>, StoreError> {
        self.on()
            .call(move |conn| games::failure_counts(conn, id))
            .await
    }

    /// Every worker's results and health in run `id` ([`health::for_run`]).
    pub async fn worker_health(&self, id: u64) -> Result<Vec<WorkerHealth>, StoreError> {
        self.on().call(move |conn| health::for_run(conn, id)).await
    }

    /// Who can serve run `id` now ([`serving`]).
    pub async fn serving(&self, id: u64) -> Result<Serving, StoreError> {
        self.on()
            .call(move |conn| {
                let now = crate::store::now_ms();
                let run = run_rows::load(conn, id)?;
                serving::for_run(conn, &run, now)
            })
            .await
    }

    /// An SPRT's LLR after every counted result, oldest first.
    pub async fn llr_history(&self, id: u64) -> Result<Vec<LlrPoint>, StoreError> {
        self.on().call(move |conn| history::llr(conn, id)).await
    }

    pub async fn spsa_history(&self, id: u64) -> Result<Vec<SpsaHistoryRow>, StoreError> {
        self.on()
            .call(move |conn| run_rows::spsa_history(conn, id))
            .await
    }

    /// Every worker seen since `now` minus the activity window, with what
    /// the workers page shows of it, in one read.
    pub async fn workers(&self, now: i64) -> Result<WorkersView, StoreError> {
        self.on()
            .call(move |conn| {
                let found = activity::workers(conn, now)?;
                let mut measured = HashMap::new();
                let mut at_once = HashMap::new();
                let mut needs = HashMap::new();
                for w in &found {
                    measured.insert(w.id, speeds::for_worker(conn, w.id)?);
                    if let Some((_, run_id, _)) = w.current {
                        let game = match needs.get(&run_id) {
                            Some(&game) => game,
                            None => {
                                let run = run_rows::load(conn, run_id)?;
                                let game = run.spec.settings.game_needs();
                                needs.insert(run_id, game);
                                game
                            }
                        };
                        let capacity = Capacity::of(w.threads, w.machine.as_ref());
                        at_once.insert(w.id, capacity.games_at_once(game));
                    }
                }
                Ok(WorkersView {
                    workers: found,
                    failures: games::failures_by_worker(conn)?,
                    flags: health::flags_by_worker(conn)?,
                    measured,
                    at_once,
                    versions: worker_versions::list(conn, 0)?,
                })
            })
            .await
    }

    /// Workers, leases and runs counted at `now`, for `/metrics`.
    pub async fn counts(&self, now: i64) -> Result<Counts, StoreError> {
        self.on()
            .call(move |conn| activity::counts(conn, now))
            .await
    }

    /// The games of run `id` that pass `wanted`, `limit` from `offset`.
    pub async fn games_page(
        &self,
        id: u64,
        wanted: GameQuery,
        offset: u64,
        limit: u64,
    ) -> Result<GamesPage, StoreError> {
        self.on()
            .call(move |conn| {
                let run = run_rows::load(conn, id)?;
                let filter = game_export::filter(conn, &wanted)?;
                let (total, rows) = games::list(conn, id, &filter, offset, limit)?;
                let mut players = game_export::default_players();
                if let Some(first) = rows.first() {
                    game_export::lease_rules(conn, &run, first.lease_id, &mut players)?;
                }
                let workers = activity::workers(conn, crate::store::now_ms())?
                    .into_iter()
                    .map(|w| (w.id, w.name))
                    .collect();
                Ok(GamesPage {
                    run,
                    total,
                    rows,
                    players,
                    workers,
                })
            })
            .await
    }

    /// Game `index` of lease `lease` in run `id`, if stored, with the run
    /// and the names of its players.
    pub async fn game(
        &self,
        id: u64,
        lease: u64,
        index: u32,
    ) -> Result<(RunStatus, [String; 2], Option<ExportedGame>), StoreError> {
        self.on()
            .call(move |conn| {
                let status = run_rows::load(conn, id)?;
                let mut players = game_export::default_players();
                let stored = match games::load_one(conn, id, lease, index)? {
                    Some(game) => Some(ExportedGame {
                        rules: game_export::lease_rules(conn, &status, lease, &mut players)?,
                        builds: lease_results::lease_builds(conn, lease)?,
                        game,
                    }),
                    None => None,
                };
                Ok((status, players, stored))
            })
            .await
    }

    /// How many games of run `id` the archive stores and their compressed
    /// bytes ([`games::stored_bytes`]): a result refused or ignored stores
    /// none, an accepted one what its run keeps.
    pub async fn stored_games(&self, id: u64) -> Result<StoredGames, StoreError> {
        let (bytes, games) = self
            .on()
            .call(move |conn| games::stored_bytes(conn, id))
            .await?;
        Ok(StoredGames { games, bytes })
    }

    /// Every stored game of run `id` that passes `wanted` ([`game_export::export`]).
    pub async fn export(&self, id: u64, wanted: GameQuery) -> Result<Export, StoreError> {
        self.on()
            .call(move |conn| game_export::export(conn, id, &wanted))
            .await
    }

    /// Every stored game of run `id` as training positions through
    /// `exporter` ([`datagen_export::export_run`]), on the read connection's
    /// thread; the exporter's counts and output once finished.
    pub async fn datagen_export<W: std::io::Write + Send + 'static>(
        &self,
        id: u64,
        mut exporter: Exporter<W>,
    ) -> Result<Result<(ExportCounts, W), DatagenExportError>, StoreError> {
        self.on()
            .call(move |conn| {
                Ok(datagen_export::export_run(conn, id, &mut exporter)
                    .and_then(|()| exporter.finish()))
            })
            .await
    }

    /// The run `id` and the store filter of `query`, to export its games
    /// page by page ([`Queries::export_page`]).
    pub async fn export_start(
        &self,
        id: u64,
        query: GameQuery,
    ) -> Result<(RunStatus, GameFilter), StoreError> {
        self.on()
            .call(move |conn| {
                let run = run_rows::load(conn, id)?;
                Ok((run, game_export::filter(conn, &query)?))
            })
            .await
    }

    /// The next page of an export ([`game_export::export_page`]): the page,
    /// the last row's id when more may follow, and the players' names.
    pub async fn export_page(
        &self,
        run: RunStatus,
        filter: GameFilter,
        after: i64,
        mut players: [String; 2],
    ) -> Result<(Export, Option<i64>, [String; 2]), StoreError> {
        self.on()
            .call(move |conn| {
                let (export, last) = game_export::export_page(
                    conn,
                    &run,
                    &filter,
                    after,
                    game_export::PAGE_GAMES,
                    &mut players,
                )?;
                Ok((export, last, players))
            })
            .await
    }
}
