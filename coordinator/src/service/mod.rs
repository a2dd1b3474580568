//! The core's operations: one path per operation for every door (the gRPC
//! services, the web view, reports and local mode).
//!
//! [`Core`] is a cheap-to-clone handle over the [`Store`]; its accessors
//! hand out small services whose methods are the domain operations, as
//! mini-redis's `Db` offers `get` and `set` and hides its state:
//!
//! * [`Core::workers`]: a worker registers ([`register`]).
//! * [`Core::leases`]: what a worker does with its work: asks for it
//!   ([`lease`]), heartbeats ([`heartbeat`]), submits a result
//!   ([`submit`]), hands a lease back ([`release`]), reports its engine's
//!   speed ([`speeds`]), a failed build or an engine that did not match its
//!   signature ([`builds`]).
//! * [`Core::runs`]: a run's administration: create, stop, resume,
//!   approve, reject, modify ([`run_admin`]); the state a run moves to is
//!   [`RunState::transition`](crate::runs::RunState::transition)'s table.
//! * [`Core::queries`]: read-only views of runs, their histories, results,
//!   workers and games ([`queries`]), for gRPC's `GetRun`, the web view
//!   and the reports.
//! * [`Core::accounts`]: users, tokens, sessions and signing in
//!   ([`accounts`]); [`Core::events`]: the log of who did what ([`events`]).
//! * [`registry::Registry`]: engines, assets, blobs and worker releases,
//!   built beside the core with the server's upload quota.
//!
//! Each mutating method makes at most one permission check first, then one
//! store transaction that makes the change and writes its event with its
//! actor, then tells the watchers ([`Core::subscribe`]) which run changed.
//! Read methods are one call and write nothing.
//!
//! # Fair share
//!
//! Among active runs that have a slice to hand out, a worker gets the run
//! with the highest priority; among equals, the one with the fewest pairs in
//! flight per unit of throughput share (`in flight / share`, so runs of
//! equal priority get pairs in flight, and so workers, in proportion to
//! their shares, and runs of equal shares split them evenly), then the one
//! furthest from its target (`(counted + in flight) / target`; open-ended
//! SPRT runs count as 0), then the oldest. The author or an approver may
//! change a run's priority, share and cap while it runs
//! ([`Runs::modify`]); the next lease sees the change.
//!
//! # Slices and openings
//!
//! A lease covers `batch_pairs` pairs (fewer at the end of a run). Its
//! opening offset is the run's `pairs_issued` (fresh pairs handed out so
//! far), so every pair of a run uses a distinct opening index. When a lease
//! expires or is released, its slice is handed out again, before any fresh
//! one, with the same offset and size (the lease row records the slice).
//! Variants runs hand out one variant per lease and go round the variants
//! on the same openings ([`crate::runs::variants`]); the lease row records
//! the variant too.
//!
//! # Exactly once
//!
//! A result is counted in the same transaction that moves its lease from
//! `active` to `done`, so it is counted at most once, and only for a lease
//! that still held: a repeated submission finds `done` (DUPLICATE), a late
//! one finds `expired`/`released` or a passed deadline (EXPIRED_IGNORED), one
//! for a finished or stopped run finds `cancelled` (CANCELLED_IGNORED).
//! None of those change anything, and neither does a refused submission:
//! another worker's lease (`Forbidden`), or counts that do not fit the lease
//! or are not those of the games that must come with them (`Invalid`), all
//! checked before the lease's state. Heartbeats extend an active lease's
//! deadline to the lease time-to-live after their arrival, whenever their
//! write comes ([`heartbeat`], [`crate::store::beats`]); past a fleet size
//! the interval and the time-to-live stretch together ([`cadence`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;

use crate::archive::OpeningBooks;
use crate::pace::Paces;
use crate::runs::RunStatus;
use crate::store::beats::Beats;
use cadence::FleetCadence;

pub mod accounts;
pub mod builds;
pub mod cadence;
pub mod check_lane;
pub mod config;
pub mod events;
pub mod heartbeat;
pub mod lease;
pub mod queries;
pub mod register;
pub mod registry;
pub mod release;
pub mod result_readers;
pub mod run_admin;
pub mod speeds;
pub mod submit;

#[cfg(test)]
mod testing;

/// What the doors hold and name without reaching into the store: its
/// handle (opened by `serve`, local mode and the tests, then handed to
/// [`Core::new`]), how it is opened, its error, and the clock and format
/// the core stamps changes with.
pub use crate::store::{Durability, Store, StoreError, StoreOptions, now_ms, utc};
pub use check_lane::{Admission, CheckConfig, CheckLane};
pub use config::SchedulerConfig;
pub use heartbeat::{HeartbeatAnswer, HeartbeatReply};
pub use lease::{Grant, pick};
pub use queries::Queries;
pub use register::{Joined, NewWorker, Registered};
pub use run_admin::Runs;
pub use submit::SubmitStatus;

/// The core over a store; cheap to clone (the clones share everything).
#[derive(Debug, Clone)]
pub struct Core {
    /// The writer: every change, one transaction per operation.
    store: Store,
    /// A read-only connection to the same file, for what a result is checked
    /// against: those reads do not queue behind the writer's calls.
    reads: Store,
    /// A read-only connection for the queries (pages, `GetRun`, exports,
    /// watchers), so that neither writes nor result checks wait for them.
    views: Store,
    config: SchedulerConfig,
    /// Ids of runs that changed (results counted, stopped), for watchers.
    changes: broadcast::Sender<u64>,
    /// Runs' parsed openings, for the opening check of their games.
    books: OpeningBooks,
    /// The workers' paces, which size their leases.
    paces: Arc<Paces>,
    /// Active runs as a lease last read them, for what a result is checked
    /// against ([`submit`]).
    snapshots: Snapshots,
    /// Where results are admitted and checked, apart from the other calls.
    checks: CheckLane,
    /// Heartbeats recorded and not yet written ([`crate::store::beats`]).
    beats: Arc<Beats>,
    /// The fleet's count, which sets the heartbeat interval and lease life.
    cadence: Arc<FleetCadence>,
}

impl Core {
    /// The core over `store`, timed by `config`. Opens two read-only
    /// connections to the store's file (none in memory); without them the
    /// reads go to the writer.
    pub fn new(store: Store, config: SchedulerConfig) -> Self {
        Self::with_check_lane(store, config, CheckLane::new(config.checks))
    }

    /// [`Core::new`] with the check lane `checks` (shared with the caller).
    pub fn with_check_lane(store: Store, config: SchedulerConfig, checks: CheckLane) -> Self {
        let (changes, _) = broadcast::channel(256);
        let reader = || {
            store.reader().unwrap_or_else(|e| {
                tracing::warn!(error = %e, "no second connection: reads go to the writer's");
                store.clone()
            })
        };
        let (reads, views) = (reader(), reader());
        Core {
            reads,
            views,
            config,
            changes,
            books: OpeningBooks::default(),
            paces: Arc::new(Paces::new(config.pace)),
            snapshots: Snapshots::default(),
            checks,
            beats: Arc::default(),
            cadence: Arc::new(FleetCadence::new(&config)),
            store,
        }
    }

    /// Where results are admitted and checked.
    pub fn checks(&self) -> &CheckLane {
        &self.checks
    }

    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// Notifications of changed runs (by id).
    pub fn subscribe(&self) -> broadcast::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Workers joining the cluster.
    pub fn workers(&self) -> register::Workers<'_> {
        register::Workers { core: self }
    }

    /// A worker's leases: work, heartbeats, results, speeds, builds.
    pub fn leases(&self) -> lease::Leases<'_> {
        lease::Leases { core: self }
    }

    /// Runs' life cycle.
    pub fn runs(&self) -> Runs<'_> {
        Runs { core: self }
    }

    /// Read-only views of runs, workers and games.
    pub fn queries(&self) -> Queries<'_> {
        Queries { core: self }
    }

    /// Users, their tokens and sessions, signing in.
    pub fn accounts(&self) -> accounts::Accounts {
        accounts::Accounts::new(self.store.clone())
    }

    /// The log of who did what.
    pub fn events(&self) -> events::Events {
        events::Events::new(self.store.clone())
    }

    /// The read connection the queries use, for the doors' reads that are
    /// not services yet (tokens, engines, releases); the web view's pages
    /// share it.
    pub(crate) fn views(&self) -> &Store {
        &self.views
    }

    /// Writes the heartbeats recorded so far and expires the leases overdue,
    /// in the background (the heartbeat that asks does not wait).
    fn settle_later(&self) {
        let beats = Arc::clone(&self.beats);
        let store = self.store.clone();
        tokio::spawn(async move {
            let settled = store
                .call(move |conn| {
                    let settled = beats.settle(conn)?;
                    let tx = conn.savepoint()?;
                    crate::store::leases::expire_overdue(&tx, settled)?;
                    tx.commit()?;
                    Ok(())
                })
                .await;
            if let Err(e) = settled {
                tracing::warn!(error = %e, "heartbeats not written; the next ones will be");
            }
        });
    }

    /// Tells watchers that run `run_id` changed.
    fn changed(&self, run_id: u64) {
        // No receivers is fine.
        let _ = self.changes.send(run_id);
    }
}

/// Active runs as last read by a lease or a counted result, by id. A
/// result's check needs only what a run's change never touches (its
/// settings, its kind's players and rules, what it keeps, its speed rule;
/// [`crate::runs::RunChange`] changes the cap, priority and share), so any
/// snapshot of the run serves it, and the check need not read the run again.
/// Holds at most [`MAX_SNAPSHOTS`] runs (then starts over).
#[derive(Debug, Clone, Default)]
struct Snapshots(Arc<Mutex<HashMap<u64, Arc<RunStatus>>>>);

/// Most runs [`Snapshots`] keeps.
const MAX_SNAPSHOTS: usize = 64;

impl Snapshots {
    fn get(&self, run_id: u64) -> Option<Arc<RunStatus>> {
        let runs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        runs.get(&run_id).cloned()
    }

    /// Keeps `run` if it is active, else forgets it.
    fn put(&self, run: Arc<RunStatus>) {
        let mut runs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if run.state != crate::runs::RunState::Active {
            runs.remove(&run.id);
            return;
        }
        if runs.len() >= MAX_SNAPSHOTS && !runs.contains_key(&run.id) {
            runs.clear();
        }
        runs.insert(run.id, run);
    }
}
