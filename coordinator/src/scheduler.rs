//! The scheduler: the rules that turn store rows into leases and results
//! into run progress. Every public method is one SQLite transaction.
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
//! ([`Scheduler::modify_run`]); the next lease sees the change.
//!
//! # Slices and openings
//!
//! A lease covers `batch_pairs` pairs (fewer at the end of a run). Its
//! opening offset is the run's `pairs_issued` (fresh pairs handed out so
//! far), so every pair of a run uses a distinct opening index. When a lease
//! expires or is released, its slice is handed out again, before any fresh
//! one, with the same offset and size (the lease row records the slice).
//! Variants runs hand out one variant per lease and go round the variants
//! on the same openings ([`runs::variants`]); the lease row records the
//! variant too.
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
//! deadline by the lease time-to-live.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use xq_proto::capacity::{SpeedCheck, SpeedMethod};
use xq_proto::engine_source::FailedBuild;
use xq_proto::{BatchOutcome, Invalid, OpeningSlice, OpeningSource, Totals, WorkSpec};

use crate::archive::{self, OpeningBooks};

use crate::access;
use crate::events::{Actor, EventKind};
use crate::git::GitConfig;
use crate::pace::{PaceConfig, Paces};
use crate::runs::health::WorkerHealth;
use crate::runs::{
    Lease, LeaseState, RunChange, RunKind, RunSpec, RunState, RunStatus, Slice, SliceWork,
    SpsaHistoryRow,
};
use crate::runs::{admission, exclusion, sources};
use crate::store::games::KeptGames;
use crate::store::leases::{self, NewLease};
use crate::store::runs::{self as run_rows, Candidate, Cause};
use crate::store::workers::{self, NewWorker};
use crate::store::{Store, StoreError, now_ms};
use crate::store::{
    build_failures, engines, events, games, health, history, lease_results, serving, speeds,
};

/// Timing of leases, and the rules of runs' source engines.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerConfig {
    /// A lease lapses this long after it was handed out or last heartbeat.
    pub lease_ttl: Duration,
    /// How often workers are told to send heartbeats (well below `lease_ttl`).
    pub heartbeat_interval: Duration,
    /// How long a worker waits before asking again when there is no work.
    pub idle_retry: Duration,
    /// Which repositories source engines may name, and how a branch is
    /// resolved to its commit when a run is created.
    pub git: GitConfig,
    /// Failed builds on this many distinct workers stop a run; at least 1.
    pub build_failures_to_stop: u32,
    /// How leases are sized by each worker's pace.
    pub pace: PaceConfig,
}

impl Default for SchedulerConfig {
    /// Leases of 60 s, heartbeats every 10 s, idle workers ask every 2 s;
    /// https repositories only; a run stops after failed builds on
    /// [`sources::DEFAULT_FAILURES_TO_STOP`] workers; leases sized to about
    /// 30 minutes of play ([`PaceConfig::default`]).
    fn default() -> Self {
        SchedulerConfig {
            lease_ttl: Duration::from_secs(60),
            heartbeat_interval: Duration::from_secs(10),
            idle_retry: Duration::from_secs(2),
            git: GitConfig::default(),
            build_failures_to_stop: sources::DEFAULT_FAILURES_TO_STOP,
            pace: PaceConfig::default(),
        }
    }
}

impl SchedulerConfig {
    /// Leases of `ttl` (at least 1 s) with heartbeats every sixth of it (at
    /// least 200 ms), as `serve --lease-secs` sets them: a lease lapses after
    /// six missed heartbeats, and a fleet of N workers sends 6·N/ttl
    /// heartbeats a second.
    pub fn with_lease_ttl(self, ttl: Duration) -> Self {
        let ttl = ttl.max(Duration::from_secs(1));
        SchedulerConfig {
            lease_ttl: ttl,
            heartbeat_interval: (ttl / 6).max(Duration::from_millis(200)),
            ..self
        }
    }
}

/// What became of a submission; only `Accepted` changed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitStatus {
    Accepted,
    Duplicate,
    ExpiredIgnored,
    CancelledIgnored,
}

/// A lease as handed to a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub lease_id: u64,
    pub run_id: u64,
    pub kind: RunKind,
    pub work: WorkSpec,
    pub deadline_ms: i64,
    /// What the worker measures before it plays; `None`: nothing.
    pub speed: Option<SpeedCheck>,
}

/// A lease's state as a heartbeat answers it; `None` = unknown to this worker.
pub type HeartbeatAnswer = (u64, Option<LeaseState>, i64);

/// The scheduler over a store; cheap to clone.
#[derive(Debug, Clone)]
pub struct Scheduler {
    store: Store,
    /// A read-only connection to the same file, for what a result is checked
    /// against: those reads do not queue behind the writer's calls.
    reads: Store,
    config: SchedulerConfig,
    /// Ids of runs that changed (results counted, stopped), for watchers.
    changes: broadcast::Sender<u64>,
    /// Runs' parsed openings, for the opening check of their games.
    books: OpeningBooks,
    /// The workers' paces, which size their leases.
    paces: Arc<Paces>,
}

fn ms(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

/// The run a worker should get next (see the module docs).
pub fn pick(candidates: &[Candidate]) -> Option<&Candidate> {
    let progress = |c: &Candidate| match c.target_pairs {
        Some(t) if t > 0 => (c.pairs_counted + c.pairs_in_flight) as f64 / t as f64,
        _ => 0.0,
    };
    // a.in_flight / a.share against b's, without division or overflow.
    let load = |c: &Candidate, other: &Candidate| {
        u128::from(c.pairs_in_flight) * u128::from(other.share.max(1))
    };
    candidates.iter().filter(|c| c.has_work()).min_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(load(a, b).cmp(&load(b, a)))
            .then(progress(a).total_cmp(&progress(b)))
            .then(a.id.cmp(&b.id))
    })
}

impl Scheduler {
    pub fn new(store: Store, config: SchedulerConfig) -> Self {
        let (changes, _) = broadcast::channel(256);
        let reads = store.reader().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "no second connection: results are looked up on the writer's");
            store.clone()
        });
        Scheduler {
            store,
            reads,
            config,
            changes,
            books: OpeningBooks::default(),
            paces: Arc::new(Paces::new(config.pace)),
        }
    }

    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// Notifications of changed runs (by id).
    pub fn subscribe(&self) -> broadcast::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self, run_id: u64) {
        // No receivers is fine.
        let _ = self.changes.send(run_id);
    }

    pub async fn register(&self, worker: NewWorker) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| workers::insert(conn, &worker, now_ms()))
            .await
    }

    /// Creates a run, or with `reuse` returns an active run with an identical
    /// spec: `(id, reused)`.
    /// Creates a run of `spec` by `actor` (its user is the run's author)
    /// and logs it; with `reuse`, an identical active run is returned
    /// instead. Returns the run's id and whether it was reused.
    ///
    /// Source engines must name repositories of the allowed schemes; a
    /// branch or tag is resolved to its commit first (`git ls-remote`,
    /// outside the store's thread), and the run's spec holds the commit.
    pub async fn create_run(
        &self,
        spec: RunSpec,
        reuse: bool,
        actor: Actor,
    ) -> Result<(u64, bool), StoreError> {
        let mut spec = spec;
        self.resolve_sources(&mut spec).await?;
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                if let OpeningSource::Book { sha256, .. } = &spec.settings.openings {
                    crate::store::assets::check_book(&tx, sha256)?;
                }
                let registry = engines::registry(&tx, &spec.kind.ops().engines())?;
                let initial = spec.kind.ops_mut().prepare(&registry, &spec.settings)?;
                if reuse && let Some(id) = run_rows::find_active_identical(&tx, &spec)? {
                    return Ok((id, true));
                }
                let now = now_ms();
                let state = starting_state(&tx, &actor)?;
                let id = run_rows::insert(&tx, &spec, actor.user, state, now)?;
                run_rows::save_effects(&tx, id, None, initial, now)?;
                let detail = format!("{} run {:?}", spec.kind.kind().as_str(), spec.name);
                events::log(&tx, &actor, EventKind::Create, Some(id), &detail, now)?;
                tx.commit()?;
                Ok((id, false))
            })
            .await
    }

    /// Checks that every source engine of `spec` names a repository of an
    /// allowed scheme, and resolves each branch or tag to its commit (one
    /// `git ls-remote` per repository and ref).
    async fn resolve_sources(&self, spec: &mut RunSpec) -> Result<(), StoreError> {
        let git = self.config.git;
        let Some(lineup) = spec.kind.ops_mut().lineup_mut() else {
            return Ok(());
        };
        let mut resolved: std::collections::HashMap<(String, String), String> = Default::default();
        for source in lineup.sources_mut() {
            if !git.protocols.allows(source.scheme()) {
                return Err(StoreError::invalid(
                    "engines.source.repo",
                    format!(
                        "{}: this coordinator takes repositories over {} only \
                         (serve --git-protocols)",
                        xq_proto::quote(&source.repo),
                        git.protocols.names().join(", ")
                    ),
                ));
            }
            if source.is_resolved() {
                continue;
            }
            let Some(git_ref) = source.git_ref.clone() else {
                return Err(StoreError::invalid(
                    "engines.source.commit",
                    "give a commit, or a branch or tag to resolve",
                ));
            };
            let key = (source.repo.clone(), git_ref.clone());
            let commit = match resolved.get(&key) {
                Some(c) => c.clone(),
                None => {
                    let c = crate::git::resolve(&source.repo, &git_ref, git)
                        .await
                        .map_err(|e| StoreError::invalid("engines.source.git_ref", e))?;
                    tracing::info!(repo = %source.repo, git_ref, commit = %c, "resolved a source's ref");
                    resolved.insert(key, c.clone());
                    c
                }
            };
            source.commit = commit;
        }
        Ok(())
    }

    /// Stops the run of `lease_id`, held by `worker_id`, with `message` (an
    /// engine did not match its registered signature on that worker).
    pub async fn flag_lease_run(
        &self,
        worker_id: u64,
        lease_id: u64,
        message: String,
    ) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let lease = leases::load(&tx, lease_id)?
                    .filter(|l| l.worker_id == worker_id)
                    .ok_or_else(|| {
                        StoreError::NotFound(format!(
                            "worker {worker_id} holds no lease {lease_id}"
                        ))
                    })?;
                run_rows::flag_run(&tx, lease.run_id, &message, now_ms())?;
                tx.commit()?;
                Ok(lease.run_id)
            })
            .await
    }

    /// Records that a source engine of lease `lease_id`, which `worker_id`
    /// must hold, did not build there: the failure is stored with its log,
    /// the worker's leases of the run are handed back and it gets no more
    /// of them. Once builds failed on [`SchedulerConfig::build_failures_to_stop`]
    /// distinct workers, an active run is stopped with the failure as its
    /// flag and a `stop` event by the system. Returns the run's id and
    /// whether this failure stopped it.
    pub async fn build_failed(
        &self,
        worker_id: u64,
        lease_id: u64,
        failed: FailedBuild,
    ) -> Result<(u64, bool), StoreError> {
        let threshold = u64::from(self.config.build_failures_to_stop.max(1));
        let (run_id, stopped) = self
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let lease = leases::load(&tx, lease_id)?
                    .filter(|l| l.worker_id == worker_id && l.state == LeaseState::Active)
                    .ok_or_else(|| {
                        StoreError::NotFound(format!(
                            "worker {worker_id} holds no active lease {lease_id}"
                        ))
                    })?;
                let run = run_rows::load(&tx, lease.run_id)?;
                let source = sources::of(&run.spec)
                    .into_iter()
                    .find(|s| s.commit == failed.commit)
                    .cloned()
                    .ok_or_else(|| {
                        StoreError::invalid(
                            "commit",
                            format!("{} is no source of run {}", failed.commit, run.id),
                        )
                    })?;
                build_failures::insert(
                    &tx,
                    run.id,
                    worker_id,
                    lease_id,
                    &source.repo,
                    &failed,
                    now,
                )?;
                leases::release_all(&tx, run.id, worker_id, now)?;
                let failed_on = build_failures::workers_failed(&tx, run.id)?;
                let stop = run.state == RunState::Active && failed_on >= threshold;
                if stop {
                    let flag = sources::stop_flag(&source, &failed, failed_on);
                    run_rows::flag_run(&tx, run.id, &flag, now)?;
                    events::log(
                        &tx,
                        &Actor::system(),
                        EventKind::Stop,
                        Some(run.id),
                        &flag,
                        now,
                    )?;
                }
                tx.commit()?;
                Ok((run.id, stop))
            })
            .await?;
        self.changed(run_id);
        Ok((run_id, stopped))
    }

    /// The failed builds of run `id` ([`build_failures::for_run`]).
    pub async fn build_failures(
        &self,
        id: u64,
    ) -> Result<Vec<build_failures::StoredFailure>, StoreError> {
        self.store
            .call(move |conn| build_failures::for_run(conn, id))
            .await
    }

    pub async fn get_run(&self, id: u64) -> Result<RunStatus, StoreError> {
        self.store.call(move |conn| run_rows::load(conn, id)).await
    }

    pub async fn list_runs(&self) -> Result<Vec<RunStatus>, StoreError> {
        self.store.call(|conn| run_rows::list(conn)).await
    }

    /// Failures among `id`'s stored games, by worker, loser and reason.
    pub async fn failures(&self, id: u64) -> Result<Vec<games::FailureCount>, StoreError> {
        self.store
            .call(move |conn| games::failure_counts(conn, id))
            .await
    }

    /// Every worker's results and health in run `id` ([`health::for_run`]).
    pub async fn worker_health(&self, id: u64) -> Result<Vec<WorkerHealth>, StoreError> {
        self.store.call(move |conn| health::for_run(conn, id)).await
    }

    /// Who can serve run `id` now ([`serving`]).
    pub async fn serving(&self, id: u64) -> Result<serving::Serving, StoreError> {
        self.store
            .call(move |conn| {
                let now = now_ms();
                let run = run_rows::load(conn, id)?;
                serving::for_run(conn, &run, now)
            })
            .await
    }

    /// An SPRT's LLR after every counted result, oldest first.
    pub async fn llr_history(&self, id: u64) -> Result<Vec<history::LlrPoint>, StoreError> {
        self.store.call(move |conn| history::llr(conn, id)).await
    }

    pub async fn spsa_history(&self, id: u64) -> Result<Vec<SpsaHistoryRow>, StoreError> {
        self.store
            .call(move |conn| run_rows::spsa_history(conn, id))
            .await
    }

    /// Stops an active run and cancels its leases; a run that already ended
    /// is left as it is.
    /// Stops run `id` for `actor` and logs it; a run no longer active is
    /// left as it is. A developer may stop only their own runs
    /// ([`access::may_manage`]): another's is `Forbidden`.
    pub async fn stop_run(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change_run(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            if !matches!(run.state, RunState::Active | RunState::Pending) {
                return Ok(false);
            }
            run_rows::set_state(tx, id, RunState::Stopped, now)?;
            events::log(tx, actor, EventKind::Stop, Some(id), "", now)?;
            Ok(true)
        })
        .await
    }

    /// Resumes stopped run `id` for `actor` (who may manage it, as for a
    /// stop) where it stood, and logs it; an untrusted developer's resumed
    /// test waits for approval again. A run in another state is `Invalid`.
    pub async fn resume_run(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change_run(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            if run.state != RunState::Stopped {
                return Err(StoreError::invalid(
                    "run_id",
                    format!(
                        "run {id} is {}; only a stopped run resumes",
                        run.state.as_str()
                    ),
                ));
            }
            run_rows::set_state(tx, id, starting_state(tx, actor)?, now)?;
            events::log(tx, actor, EventKind::Resume, Some(id), "", now)?;
            Ok(true)
        })
        .await
    }

    /// Changes run `id`'s cap, priority or share for `actor` (who may manage
    /// it, as for a stop) and logs one `modify` event that says `old → new` for
    /// each field that changed. Only an active, pending or stopped run
    /// changes (else `Invalid`); a cap below the pairs already handed out, or
    /// one the run's kind refuses, is `Invalid` ([`RunChange::apply`]). A cap
    /// the counted pairs reach finishes the run, as the result that reached
    /// it would have. Values the run already has change nothing and log
    /// nothing. The next lease is cut and chosen under the change.
    pub async fn modify_run(
        &self,
        id: u64,
        change: RunChange,
        actor: Actor,
    ) -> Result<RunStatus, StoreError> {
        self.change_run(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            if !matches!(
                run.state,
                RunState::Active | RunState::Pending | RunState::Stopped
            ) {
                return Err(StoreError::invalid(
                    "run_id",
                    format!(
                        "run {id} is {}; only an active, pending or stopped run changes",
                        run.state.as_str()
                    ),
                ));
            }
            let issued = run_rows::pairs_issued(tx, id)?;
            let changed = change.apply(run, run.share, issued)?;
            if changed.detail.is_empty() {
                return Ok(false);
            }
            run_rows::modify(tx, id, &changed.spec, changed.share, now)?;
            events::log(tx, actor, EventKind::Modify, Some(id), &changed.detail, now)?;
            let at_cap = changed.spec.kind.target_pairs();
            if at_cap.is_some_and(|t| run.totals.pairs >= t) {
                run_rows::set_state(tx, id, RunState::Finished, now)?;
                tracing::info!(run_id = id, "run finished at its changed cap");
            }
            Ok(true)
        })
        .await
    }

    /// Approves pending run `id` for `actor` (an approver or admin who is
    /// not its author): it becomes active and gets workers.
    pub async fn approve_run(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change_run(id, actor, move |tx, actor, run, now| {
            check_approver(tx, actor, run)?;
            run_rows::set_state(tx, id, RunState::Active, now)?;
            events::log(tx, actor, EventKind::Approve, Some(id), "", now)?;
            Ok(true)
        })
        .await
    }

    /// Rejects pending run `id` for `actor` with `reason`, which its author sees.
    pub async fn reject_run(
        &self,
        id: u64,
        actor: Actor,
        reason: String,
    ) -> Result<RunStatus, StoreError> {
        self.change_run(id, actor, move |tx, actor, run, now| {
            check_approver(tx, actor, run)?;
            run_rows::reject(tx, id, &reason, now)?;
            events::log(tx, actor, EventKind::Reject, Some(id), &reason, now)?;
            Ok(true)
        })
        .await
    }

    /// One change of run `id` by `actor`, in one transaction: `change` sees
    /// the run as stored, refuses it or makes the change (with its event)
    /// and says whether it changed anything. Returns the run after it.
    async fn change_run<F>(&self, id: u64, actor: Actor, change: F) -> Result<RunStatus, StoreError>
    where
        F: FnOnce(&rusqlite::Connection, &Actor, &RunStatus, i64) -> Result<bool, StoreError>
            + Send
            + 'static,
    {
        let status = self
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let before = run_rows::load(&tx, id)?;
                if !change(&tx, &actor, &before, now)? {
                    return Ok(before);
                }
                let after = run_rows::load(&tx, id)?;
                tx.commit()?;
                Ok(after)
            })
            .await?;
        self.changed(id);
        Ok(status)
    }

    /// Hands the worker the next slice of the fairest run, or `None`.
    pub async fn request_work(&self, worker_id: u64) -> Result<Option<Grant>, StoreError> {
        let ttl = ms(self.config.lease_ttl);
        let paces = Arc::clone(&self.paces);
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                workers::touch(&tx, worker_id, now)?;
                leases::expire_overdue(&tx, now)?;
                let applicant = workers::applicant(&tx, worker_id)?;
                let mut candidates = run_rows::candidates(&tx, worker_id)?;
                let (pick, run) = loop {
                    let Some(pick) = pick(&candidates).cloned() else {
                        tx.commit()?;
                        return Ok(None);
                    };
                    let run = run_rows::load(&tx, pick.id)?;
                    match admission::admits(run.id, &run.spec, &applicant) {
                        Ok(()) => break (pick, run),
                        Err(why) => {
                            tracing::debug!(worker_id, run_id = run.id, %why, "no lease of the run");
                            candidates.retain(|c| c.id != pick.id);
                        }
                    }
                };
                let slice = match leases::take_requeued(&tx, run.id)? {
                    Some(slice) => slice,
                    None => {
                        let ops = run.spec.kind.ops();
                        let batch = match ops.sized_by_time() {
                            true => paces.pairs(worker_id, run.id, run.spec.batch_pairs),
                            false => run.spec.batch_pairs,
                        };
                        let slice = ops
                            .next_slice(batch, pick.pairs_issued)
                            .ok_or_else(|| {
                                StoreError::Schema(format!("run {} has no slice", run.id))
                            })?;
                        run_rows::advance_issued(&tx, run.id, slice.pairs)?;
                        slice
                    }
                };
                let grant = grant(&tx, &run, worker_id, &slice, now, now + ttl)?;
                tx.commit()?;
                Ok(Some(grant))
            })
            .await
    }

    /// Records progress and extends the worker's active leases.
    pub async fn heartbeat(
        &self,
        worker_id: u64,
        progress: Vec<(u64, u32)>,
    ) -> Result<Vec<HeartbeatAnswer>, StoreError> {
        let ttl = ms(self.config.lease_ttl);
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                workers::touch(&tx, worker_id, now)?;
                leases::expire_overdue(&tx, now)?;
                let mut answers = Vec::with_capacity(progress.len());
                for (lease_id, pairs_done) in progress {
                    let answer = match leases::load(&tx, lease_id)? {
                        Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                            let deadline = now + ttl;
                            leases::extend(&tx, lease_id, pairs_done.min(l.pairs), deadline)?;
                            (lease_id, Some(LeaseState::Active), deadline)
                        }
                        Some(l) if l.worker_id == worker_id => (lease_id, Some(l.state), 0),
                        _ => (lease_id, None, 0),
                    };
                    answers.push(answer);
                }
                tx.commit()?;
                Ok(answers)
            })
            .await
    }

    /// Hands a lease back so its slice is handed out again; returns its state
    /// afterwards (`None`: not this worker's lease).
    pub async fn release(
        &self,
        worker_id: u64,
        lease_id: u64,
    ) -> Result<Option<LeaseState>, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let state = match leases::load(&tx, lease_id)? {
                    Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                        leases::set_state(&tx, lease_id, LeaseState::Released, now)?;
                        Some(LeaseState::Released)
                    }
                    Some(l) if l.worker_id == worker_id => Some(l.state),
                    _ => None,
                };
                tx.commit()?;
                Ok(state)
            })
            .await
    }

    /// Records the speed `worker_id` measured with the base engine of its
    /// lease `lease_id`'s run (`nps`, 0 if the measurement failed) and
    /// answers the factor its time limits are scaled by. A worker below the
    /// run's minimum gets `TooSlow`: the lease is handed back, and the run
    /// leases it nothing more ([`admission`]). The worker must hold the
    /// lease (else `NotFound`).
    pub async fn engine_speed(
        &self,
        worker_id: u64,
        lease_id: u64,
        nps: u64,
        method: SpeedMethod,
    ) -> Result<f64, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let lease = match leases::load(&tx, lease_id)? {
                    Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => l,
                    _ => {
                        return Err(StoreError::NotFound(format!(
                            "worker {worker_id} holds no active lease {lease_id}"
                        )));
                    }
                };
                let run = run_rows::load(&tx, lease.run_id)?;
                let check = run.spec.workers.speed_check().ok_or_else(|| {
                    StoreError::Precondition(format!(
                        "run {} has no speed rule: lease {lease_id} asks for no measurement",
                        run.id
                    ))
                })?;
                let slice = run.spec.kind.ops().slice_work(&run, &lease.slice())?;
                let engine = slice.players[usize::from(check.player)]
                    .engine
                    .as_ref()
                    .map_or_else(|| "built-in".to_owned(), |e| e.name.clone());
                let factor = check.factor(nps);
                let speed = speeds::Speed {
                    engine,
                    nps,
                    factor,
                    method,
                    measured_ms: now,
                };
                speeds::record(&tx, run.id, worker_id, &speed)?;
                if check.too_slow(nps) {
                    leases::set_state(&tx, lease_id, LeaseState::Released, now)?;
                    tx.commit()?;
                    return Err(StoreError::Precondition(format!(
                        "{nps} nodes per second with engine '{}' is below run {}'s minimum of {}; \
                         the lease is handed back and the run leases this worker nothing more",
                        speed.engine, run.id, check.min_nps
                    )));
                }
                tx.commit()?;
                Ok(factor)
            })
            .await
    }

    /// Counts a lease's result exactly once (see the module docs).
    pub async fn submit(
        &self,
        worker_id: u64,
        lease_id: u64,
        outcome: BatchOutcome,
    ) -> Result<SubmitStatus, StoreError> {
        let (kept, outcome) = self.check_games(worker_id, lease_id, outcome).await?;
        let (status, lease) = self
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                workers::touch(&tx, worker_id, now)?;
                let lease = leases::load(&tx, lease_id)?
                    .ok_or_else(|| StoreError::NotFound(format!("no lease {lease_id}")))?;
                if lease.worker_id != worker_id {
                    return Err(StoreError::Forbidden(format!(
                        "lease {lease_id} is not held by worker {worker_id}"
                    )));
                }
                let status = match lease.state {
                    LeaseState::Done => SubmitStatus::Duplicate,
                    LeaseState::Expired | LeaseState::Released => SubmitStatus::ExpiredIgnored,
                    LeaseState::Cancelled => SubmitStatus::CancelledIgnored,
                    LeaseState::Active if lease.deadline_ms < now => {
                        leases::set_state(&tx, lease_id, LeaseState::Expired, now)?;
                        SubmitStatus::ExpiredIgnored
                    }
                    LeaseState::Active => {
                        leases::set_state(&tx, lease_id, LeaseState::Done, now)?;
                        count_result(&tx, &lease, &outcome, now)?;
                        games::insert(
                            &tx,
                            lease.run_id,
                            lease_id,
                            worker_id,
                            &outcome.games,
                            &kept,
                        )?;
                        SubmitStatus::Accepted
                    }
                };
                tx.commit()?;
                Ok((status, lease))
            })
            .await?;
        if status == SubmitStatus::Accepted {
            let took =
                Duration::from_millis(now_ms().saturating_sub(lease.created_ms).max(0) as u64);
            self.paces
                .record(worker_id, lease.run_id, lease.pairs, took);
            self.changed(lease.run_id);
        }
        Ok(status)
    }
}

impl Scheduler {
    /// Checks a result's shape against its lease ([`BatchOutcome::check`]:
    /// one game record per counted game) and replays its games under the
    /// lease's rules against its counts (see [`crate::archive`]), off the
    /// store's thread, whatever the run keeps: a refused result is
    /// [`StoreError::Invalid`] and nothing is counted. Returns the games the
    /// run keeps, compressed there too, and the outcome.
    async fn check_games(
        &self,
        worker_id: u64,
        lease_id: u64,
        outcome: BatchOutcome,
    ) -> Result<(KeptGames, BatchOutcome), StoreError> {
        let books = self.books.clone();
        let (pairs, run_id, rules, openings, book_lines, keep) = self
            .reads
            .call(move |conn| {
                let lease = leases::load(conn, lease_id)?
                    .ok_or_else(|| StoreError::NotFound(format!("no lease {lease_id}")))?;
                if lease.worker_id != worker_id {
                    workers::check_known(conn, worker_id)?;
                    return Err(StoreError::Forbidden(format!(
                        "lease {lease_id} is not held by worker {worker_id}"
                    )));
                }
                let run = run_rows::load(conn, lease.run_id)?;
                if run.spec.workers.speed_check().is_some()
                    && speeds::get(conn, run.id, worker_id)?.is_none()
                {
                    return Err(StoreError::Precondition(format!(
                        "run {} scales or refuses workers by speed, and worker {worker_id} \
                         reported no speed (ReportEngineSpeed) before playing lease {lease_id}: \
                         its games are not counted",
                        run.id
                    )));
                }
                let slice = lease.slice();
                let work = run.spec.kind.ops().slice_work(&run, &slice)?;
                let openings = opening_slice(&run, &slice, work.per_game);
                let book_lines = match &openings.source {
                    OpeningSource::Book {
                        sha256,
                        random_plies,
                    } if !books.contains(run.id) => Some(
                        crate::store::assets::book_lines(conn, sha256)?
                            .with_random_plies(*random_plies),
                    ),
                    _ => None,
                };
                Ok((
                    lease.pairs,
                    run.id,
                    work.rules,
                    openings,
                    book_lines,
                    run.spec.keep_games,
                ))
            })
            .await?;
        outcome.check(pairs)?;
        let books = self.books.clone();
        tokio::task::spawn_blocking(move || {
            let book = books
                .get(run_id, book_lines.as_ref().unwrap_or(&openings.source))
                .map_err(|e| Invalid::new("run.openings", e))?;
            archive::check_openings(&openings, &book, &rules, &outcome.games)?;
            archive::check(&rules, &outcome)?;
            let kept = KeptGames::new(&outcome.games, |g| keep.keeps(g.result, g.reason));
            Ok::<_, Invalid>((kept, outcome))
        })
        .await
        .map_err(|e| StoreError::Join(format!("the game check failed: {e}")))?
        .map_err(StoreError::Invalid)
    }
}

/// The state a run that `actor` starts or resumes is in: pending for an
/// untrusted developer ([`access::needs_approval`]), else active.
fn starting_state(conn: &rusqlite::Connection, actor: &Actor) -> Result<RunState, StoreError> {
    let Some(user) = actor.user else {
        return Ok(RunState::Active);
    };
    let user = crate::store::users::by_id(conn, user)?;
    Ok(if access::needs_approval(user.role, user.trusted) {
        RunState::Pending
    } else {
        RunState::Active
    })
}

/// `Invalid` unless `run` is pending; `Forbidden` unless `actor` may
/// approve or reject it ([`access::may_approve`]).
fn check_approver(
    conn: &rusqlite::Connection,
    actor: &Actor,
    run: &RunStatus,
) -> Result<(), StoreError> {
    let id = run.id;
    if run.state != RunState::Pending {
        return Err(StoreError::invalid(
            "run_id",
            format!("run {id} is {}, not pending", run.state.as_str()),
        ));
    }
    let Some(user) = actor.user else {
        return Ok(());
    };
    let author = run_rows::author(conn, id)?;
    let crate::store::users::User { name, role, .. } = crate::store::users::by_id(conn, user)?;
    if access::may_approve(role, user, author) {
        return Ok(());
    }
    let why = if author == Some(user) {
        "its author may not approve or reject it".to_owned()
    } else {
        format!("a {} may not approve or reject tests", role.as_str())
    };
    Err(StoreError::Forbidden(format!("run {id} ({name}): {why}")))
}

/// `Forbidden` unless `actor` may change or stop run `id`.
fn check_manager(conn: &rusqlite::Connection, actor: &Actor, id: u64) -> Result<(), StoreError> {
    let Some(user) = actor.user else {
        return Ok(());
    };
    let author = run_rows::author(conn, id)?;
    let crate::store::users::User { name, role, .. } = crate::store::users::by_id(conn, user)?;
    if access::may_manage(role, user, author) {
        Ok(())
    } else {
        Err(StoreError::Forbidden(format!(
            "run {id} is not {}'s, and a {} may change or stop only their own runs",
            name,
            role.as_str()
        )))
    }
}

/// The openings of `slice` of `run`, as its lease carries them.
fn opening_slice(run: &RunStatus, slice: &Slice, per_game: bool) -> OpeningSlice {
    let settings = &run.spec.settings;
    OpeningSlice {
        source: settings.openings.clone(),
        seed: settings.seed,
        offset: slice.offset,
        count: slice.pairs.into(),
        per_game,
    }
}

/// Stores a lease of `slice` of `run` for the worker and returns it. A run
/// with a speed rule asks the worker to measure itself
/// ([`crate::runs::WorkerPolicy::speed_check`]) and scale its limits by the
/// factor [`Scheduler::engine_speed`] answers.
fn grant(
    conn: &rusqlite::Connection,
    run: &RunStatus,
    worker_id: u64,
    slice: &Slice,
    now: i64,
    deadline_ms: i64,
) -> Result<Grant, StoreError> {
    let SliceWork {
        players,
        rules,
        per_game,
        spsa_request,
    } = run.spec.kind.ops().slice_work(run, slice)?;
    let settings = &run.spec.settings;
    let work = WorkSpec {
        players,
        rules,
        openings: opening_slice(run, slice, per_game),
        pairs: slice.pairs,
        adjudication: settings.adjudication,
        draw_contempt: settings.draw_contempt,
    };
    let lease_id = leases::insert(
        conn,
        &NewLease {
            run_id: run.id,
            worker_id,
            slice: *slice,
            spsa_request: spsa_request.as_ref(),
            deadline_ms,
        },
        now,
    )?;
    Ok(Grant {
        lease_id,
        run_id: run.id,
        kind: run.spec.kind.kind(),
        work,
        deadline_ms,
        speed: run.spec.workers.speed_check(),
    })
}

/// Adds a lease's counts to its run, lets the run's kind count them too,
/// excludes the workers the run now sets aside ([`exclusion`]) and finishes
/// the run at its end. Runs inside the submission's transaction.
fn count_result(
    conn: &rusqlite::Connection,
    lease: &Lease,
    outcome: &BatchOutcome,
    now: i64,
) -> Result<(), StoreError> {
    let run_id = lease.run_id;
    lease_results::insert(conn, lease, outcome)?;
    run_rows::add_totals(conn, run_id, &outcome.totals, now)?;
    let run = run_rows::load(conn, run_id)?;
    let applied = run.spec.kind.ops().apply(&run, lease, outcome)?;
    let cause = Cause {
        lease_id: lease.id,
        run_pairs: run.totals.pairs,
        result: &outcome.totals,
    };
    run_rows::save_effects(conn, run_id, Some(cause), applied.effects, now)?;
    let mut finished = applied.finished;
    if run.spec.workers.exclude_flagged {
        let flagged = exclusion::to_exclude(&run, health::for_run(conn, run_id)?);
        if !flagged.is_empty() {
            for (worker, why) in &flagged {
                lease_results::exclude(conn, run_id, *worker, why, now)?;
                let detail = format!("worker {worker}: {}", why.as_str());
                events::log(
                    conn,
                    &Actor::system(),
                    EventKind::Exclude,
                    Some(run_id),
                    &detail,
                    now,
                )?;
                tracing::warn!(
                    run_id,
                    worker_id = worker,
                    reason = why.as_str(),
                    "worker excluded"
                );
            }
            finished = recount(conn, run_id, lease, now)?;
        }
    }
    if finished {
        run_rows::set_state(conn, run_id, RunState::Finished, now)?;
        tracing::info!(run_id, "run finished");
    }
    Ok(())
}

/// Rebuilds the run's totals from its counted results and lets its kind
/// recount its own state; returns whether the run is at its end.
fn recount(
    conn: &rusqlite::Connection,
    run_id: u64,
    lease: &Lease,
    now: i64,
) -> Result<bool, StoreError> {
    let kept = lease_results::counted(conn, run_id)?;
    let mut sum = Totals::default();
    for r in &kept {
        sum.merge(&r.totals);
    }
    run_rows::reset_totals(conn, run_id)?;
    run_rows::add_totals(conn, run_id, &sum, now)?;
    let run = run_rows::load(conn, run_id)?;
    let applied = run.spec.kind.ops().recount(&run, &kept, lease)?;
    let cause = Cause {
        lease_id: lease.id,
        run_pairs: run.totals.pairs,
        result: &Totals::default(),
    };
    run_rows::save_effects(conn, run_id, Some(cause), applied.effects, now)?;
    Ok(applied.finished)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::runs::{self, GamesSpec, KindSpec, MatchSettings};
    use xq_proto::variant_stats::VariantStats;
    use xq_proto::{Adjudication, Limit, OpeningSource, Score};

    #[test]
    fn heartbeats_are_a_sixth_of_the_lease_ttl() {
        let default = SchedulerConfig::default();
        let same = SchedulerConfig::default().with_lease_ttl(default.lease_ttl);
        assert_eq!(same.heartbeat_interval, default.heartbeat_interval);
        let fleet = SchedulerConfig::default().with_lease_ttl(Duration::from_secs(360));
        assert_eq!(fleet.lease_ttl, Duration::from_secs(360));
        assert_eq!(fleet.heartbeat_interval, Duration::from_secs(60));
        let zero = SchedulerConfig::default().with_lease_ttl(Duration::ZERO);
        assert_eq!(zero.lease_ttl, Duration::from_secs(1));
        assert_eq!(zero.heartbeat_interval, Duration::from_millis(200));
    }

    fn games_spec(pairs: u64, batch_pairs: u32) -> RunSpec {
        RunSpec {
            name: "test".to_owned(),
            priority: 0,
            batch_pairs,
            settings: MatchSettings {
                limit: Limit::Nodes(1000),
                hash_mb: 1,
                rules: xq_engine::rules::RuleSet::STANDARD,
                openings: OpeningSource::Builtin { random_plies: 2 },
                seed: 1,
                adjudication: Adjudication::default(),
                draw_contempt: true,
                threads: 1,
            },
            kind: KindSpec::Games(GamesSpec {
                dev_params: BTreeMap::new(),
                base_params: BTreeMap::new(),
                lineup: Default::default(),
                pairs,
            }),
            workers: Default::default(),
            keep_games: Default::default(),
        }
    }

    /// Every game of `work` drawn, with its games.
    fn draws(work: &WorkSpec) -> BatchOutcome {
        xq_games::stand_in::adjudicated(work, |_| Score::Draw).unwrap()
    }

    /// Registers a worker named `name` that measured `bench_nps`.
    async fn register(s: &Scheduler, name: &str, bench_nps: Option<u64>) -> u64 {
        register_with(s, name, bench_nps, None, &[]).await
    }

    /// Registers a worker that reported `machine` and the build `tools`.
    async fn register_with(
        s: &Scheduler,
        name: &str,
        bench_nps: Option<u64>,
        machine: Option<xq_proto::Machine>,
        tools: &[&str],
    ) -> u64 {
        s.register(NewWorker {
            name: name.to_owned(),
            threads: 1,
            version: "0".to_owned(),
            signature: 0,
            bench_nps,
            token_key: None,
            machine,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            target: String::new(),
            updated_from: None,
        })
        .await
        .unwrap()
    }

    /// Leases of `batch_pairs` each (no sizing by time), `ttl` long.
    async fn setup(ttl: Duration) -> (Scheduler, u64) {
        let config = SchedulerConfig {
            lease_ttl: ttl,
            pace: PaceConfig {
                target: Duration::ZERO,
                ..PaceConfig::default()
            },
            ..SchedulerConfig::default()
        };
        let scheduler = Scheduler::new(Store::open_in_memory().unwrap(), config);
        let worker = register(&scheduler, "w", None).await;
        (scheduler, worker)
    }

    #[tokio::test]
    async fn a_fast_worker_gets_leases_of_the_target_time_and_a_slow_one_single_batches() {
        let config = SchedulerConfig {
            pace: PaceConfig {
                target: Duration::from_secs(1),
                max_pairs: 40,
            },
            ..SchedulerConfig::default()
        };
        let s = Scheduler::new(Store::open_in_memory().unwrap(), config);
        let fast = register(&s, "fast", None).await;
        let slow = register(&s, "slow", None).await;
        let (run, _) = s
            .create_run(games_spec(100, 3), false, Actor::system())
            .await
            .unwrap();
        let mut leases = Vec::new();
        for w in [fast, slow, fast, slow, fast, fast] {
            let g = s.request_work(w).await.unwrap().unwrap();
            leases.push(g.work.pairs);
            if w == slow {
                tokio::time::sleep(Duration::from_millis(1100)).await;
            }
            let status = s.submit(w, g.lease_id, draws(&g.work)).await.unwrap();
            assert_eq!(status, SubmitStatus::Accepted);
        }
        // One batch first; then the fast worker's leases are as large as
        // allowed in whole batches (39 of 40), the slow one's one batch, and
        // the last lease what the run has left.
        assert_eq!(leases, [3, 3, 39, 3, 39, 13]);
        let status = s.get_run(run).await.unwrap();
        assert_eq!(status.totals.pairs, 100);
        assert_eq!(status.state, RunState::Finished);
    }

    #[tokio::test]
    async fn slices_advance_and_results_count_exactly_once() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let (run, _) = s
            .create_run(games_spec(10, 4), false, Actor::system())
            .await
            .unwrap();
        let mut offsets = Vec::new();
        let mut grants = Vec::new();
        while let Some(g) = s.request_work(w).await.unwrap() {
            offsets.push((g.work.openings.offset, g.work.pairs));
            grants.push(g);
        }
        assert_eq!(offsets, [(0, 4), (4, 4), (8, 2)]);
        for g in &grants {
            let status = s.submit(w, g.lease_id, draws(&g.work)).await.unwrap();
            assert_eq!(status, SubmitStatus::Accepted);
        }
        let again = s
            .submit(w, grants[0].lease_id, draws(&grants[0].work))
            .await
            .unwrap();
        assert_eq!(again, SubmitStatus::Duplicate);
        let run = s.get_run(run).await.unwrap();
        assert_eq!(run.totals.pairs, 10);
        assert_eq!(run.totals.wdl.draws, 20);
        assert_eq!(run.state, RunState::Finished);
    }

    #[tokio::test]
    async fn an_expired_slice_is_handed_out_again_and_its_late_result_ignored() {
        let (s, w) = setup(Duration::from_millis(1)).await;
        s.create_run(games_spec(4, 4), false, Actor::system())
            .await
            .unwrap();
        let first = s.request_work(w).await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = s.request_work(w).await.unwrap().unwrap();
        assert_eq!(second.work.openings.offset, first.work.openings.offset);
        assert_ne!(second.lease_id, first.lease_id);
        let late = s
            .submit(w, first.lease_id, draws(&first.work))
            .await
            .unwrap();
        assert_eq!(late, SubmitStatus::ExpiredIgnored);
    }

    #[tokio::test]
    async fn released_slices_are_handed_out_again_lowest_opening_first() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        s.create_run(games_spec(12, 4), false, Actor::system())
            .await
            .unwrap();
        let mut leases = Vec::new();
        for _ in 0..3 {
            leases.push(s.request_work(w).await.unwrap().unwrap());
        }
        s.release(w, leases[0].lease_id).await.unwrap();
        let retaken = s.request_work(w).await.unwrap().unwrap();
        assert_eq!(retaken.work.openings.offset, 0);
        // Lapsed now: opening 4 (an older lease) and opening 0 (a newer one).
        s.release(w, leases[1].lease_id).await.unwrap();
        s.release(w, retaken.lease_id).await.unwrap();
        let mut again = Vec::new();
        for _ in 0..2 {
            let g = s.request_work(w).await.unwrap().unwrap();
            again.push(g.work.openings.offset);
        }
        assert_eq!(again, [0, 4]);
    }

    #[tokio::test]
    async fn a_result_that_does_not_fit_the_lease_is_refused() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        s.create_run(games_spec(4, 4), false, Actor::system())
            .await
            .unwrap();
        let g = s.request_work(w).await.unwrap().unwrap();
        let short = WorkSpec {
            pairs: 3,
            ..g.work.clone()
        };
        let err = s.submit(w, g.lease_id, draws(&short)).await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        let mut without = draws(&g.work);
        without.games.clear();
        let err = s.submit(w, g.lease_id, without.clone()).await.unwrap_err();
        assert!(err.to_string().contains("results.games"), "{err}");
        without.games = draws(&g.work).games[..7].to_vec();
        let err = s.submit(w, g.lease_id, without).await.unwrap_err();
        assert!(err.to_string().contains("7 game records"), "{err}");
        assert_eq!(s.get_run(g.run_id).await.unwrap().totals.pairs, 0);
        let mut unkept = games_spec(4, 4);
        unkept.name = "keeps none".to_owned();
        unkept.keep_games = xq_proto::Retention::None;
        unkept.priority = 1;
        s.create_run(unkept, false, Actor::system()).await.unwrap();
        let none = s.request_work(w).await.unwrap().unwrap();
        let mut without = draws(&none.work);
        without.games.clear();
        let err = s.submit(w, none.lease_id, without).await.unwrap_err();
        assert!(
            err.to_string().contains("results.games"),
            "a run that keeps no games still checks them: {err}"
        );
        assert_eq!(
            s.submit(w, g.lease_id, draws(&g.work)).await.unwrap(),
            SubmitStatus::Accepted
        );
    }

    #[tokio::test]
    async fn variants_leases_go_round_the_variants_and_need_their_statistics() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let mut spec = games_spec(0, 2);
        spec.kind = KindSpec::Variants(runs::VariantsSpec {
            rules: vec![
                xq_engine::rules::RuleSet::STANDARD,
                "conversion".parse().unwrap(),
            ],
            params: BTreeMap::new(),
            pairs: 3,
        });
        let (run, _) = s.create_run(spec, false, Actor::system()).await.unwrap();
        let mut grants = Vec::new();
        while let Some(g) = s.request_work(w).await.unwrap() {
            grants.push(g);
        }
        let slices: Vec<_> = grants
            .iter()
            .map(|g| {
                let rules = xq_proto::rule_set::name(&g.work.rules);
                (rules, g.work.openings.offset, g.work.pairs)
            })
            .collect();
        assert_eq!(
            slices,
            [
                ("standard".to_owned(), 0, 2),
                ("standard+conversion".to_owned(), 0, 2),
                ("standard".to_owned(), 2, 1),
                ("standard+conversion".to_owned(), 2, 1)
            ]
        );
        let g = &grants[1];
        let with = |stats: Option<VariantStats>| BatchOutcome {
            variant: stats,
            ..draws(&g.work)
        };
        let err = s.submit(w, g.lease_id, with(None)).await.unwrap_err();
        assert!(err.to_string().contains("results.variant"), "{err}");
        let stats = draws(&g.work).variant.unwrap();
        assert_eq!(stats.draws, 4);
        let mut bad = stats.clone();
        bad.pair_outcomes[4] = 1;
        let err = s.submit(w, g.lease_id, with(Some(bad))).await.unwrap_err();
        assert!(
            err.to_string().contains("results.variant.pair_outcomes"),
            "{err}"
        );
        let mut unlike = stats.clone();
        unlike.plies_histogram.rotate_right(1);
        let err = s
            .submit(w, g.lease_id, with(Some(unlike)))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not those of the games"), "{err}");
        let ok = s.submit(w, g.lease_id, with(Some(stats))).await.unwrap();

        assert_eq!(ok, SubmitStatus::Accepted);
        let status = s.get_run(run).await.unwrap();
        assert_eq!(status.progress.variants()[0].pairs, 0);
        assert_eq!(status.progress.variants()[1].pairs, 2);
        assert_eq!(status.progress.variants()[1].stats.draws, 4);
    }

    /// The outcome of `work` with these pentanomial counts (index 2 = DD),
    /// with its games; `p` sums to the lease's pairs.
    fn from_pentanomial(work: &WorkSpec, p: [u64; 5]) -> BatchOutcome {
        use Score::{Draw, Loss, Win};
        let kinds = [
            [Loss, Loss],
            [Loss, Draw],
            [Draw, Draw],
            [Draw, Win],
            [Win, Win],
        ];
        let scores: Vec<Score> = p
            .iter()
            .zip(kinds)
            .flat_map(|(&n, pair)| std::iter::repeat_n(pair, n as usize).flatten())
            .collect();
        assert_eq!(scores.len(), 2 * work.pairs as usize);
        xq_games::stand_in::adjudicated(work, |i| scores[i as usize]).unwrap()
    }

    /// Six workers play a run that excludes flagged workers; worker 0
    /// reports plausible counts (every lease a valid pentanomial) drawn
    /// from a distribution about 90 Elo better for the first player. It is
    /// flagged and excluded, its slices are played again by the others, and
    /// the run's totals (and LLR) are exactly the honest workers' sum.
    async fn a_biased_worker_is_excluded(spec: RunSpec) -> (Scheduler, RunStatus, Vec<u64>) {
        use rand::SeedableRng;
        let (s, first) = setup(Duration::from_secs(60)).await;
        let mut workers = vec![first];
        for i in 1..6 {
            workers.push(register(&s, &format!("w{i}"), None).await);
        }
        let (run, _) = s.create_run(spec, false, Actor::system()).await.unwrap();
        let honest = [0.05, 0.2, 0.5, 0.2, 0.05];
        let biased = [0.02, 0.1, 0.48, 0.3, 0.1];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
        let mut honest_sum = xq_proto::Totals::default();
        let mut biased_after_exclusion = 0;
        loop {
            let mut any = false;
            for (i, &w) in workers.iter().enumerate() {
                let was_excluded = s
                    .worker_health(run)
                    .await
                    .unwrap()
                    .iter()
                    .any(|h| h.standing.excluded());
                let Some(g) = s.request_work(w).await.unwrap() else {
                    continue;
                };
                if i == 0 && was_excluded {
                    biased_after_exclusion += 1;
                }
                any = true;
                let probs = if i == 0 { &biased } else { &honest };
                let outcome = from_pentanomial(
                    &g.work,
                    crate::stats::sprt::draw_pairs(probs, g.work.pairs.into(), &mut rng),
                );
                let status = s.submit(w, g.lease_id, outcome.clone()).await.unwrap();
                assert_eq!(status, SubmitStatus::Accepted);
                if i != 0 {
                    honest_sum.merge(&outcome.totals);
                }
            }
            if !any {
                break;
            }
        }
        assert_eq!(biased_after_exclusion, 0, "an excluded worker got work");
        let status = s.get_run(run).await.unwrap();
        assert_eq!(status.state, RunState::Finished);
        let t = &status.totals;
        assert_eq!(
            (
                t.pairs,
                t.pentanomial,
                t.wdl.wins,
                t.wdl.draws,
                t.wdl.losses
            ),
            (
                honest_sum.pairs,
                honest_sum.pentanomial,
                honest_sum.wdl.wins,
                honest_sum.wdl.draws,
                honest_sum.wdl.losses
            )
        );
        let health = s.worker_health(run).await.unwrap();
        let excluded: Vec<u64> = health
            .iter()
            .filter(|h| h.standing.excluded())
            .map(|h| h.sums.worker_id)
            .collect();
        assert_eq!(excluded, [workers[0]], "{health:#?}");
        assert!(health[0].standing.flag().unwrap().contains("residual"));
        (s, status, workers)
    }

    #[tokio::test]
    async fn a_games_run_excludes_a_biased_worker_and_plays_its_slices_again() {
        let mut spec = games_spec(1200, 20);
        spec.workers.exclude_flagged = true;
        let (_, status, _) = a_biased_worker_is_excluded(spec).await;
        assert_eq!(status.totals.pairs, 1200);
    }

    #[tokio::test]
    async fn an_sprt_run_recounts_its_llr_without_the_excluded_worker() {
        use crate::stats::sprt::SprtParams;
        use crate::stats::{EloModel, Results};
        let mut spec = games_spec(0, 20);
        let sprt = SprtParams::new(0.0, 5.0, 0.05, 0.05, EloModel::Normalized).unwrap();
        spec.kind = KindSpec::Sprt(runs::SprtSpec {
            dev_params: BTreeMap::new(),
            base_params: BTreeMap::new(),
            lineup: Default::default(),
            sprt,
            max_pairs: Some(1200),
        });
        spec.workers.exclude_flagged = true;
        let (_, status, _) = a_biased_worker_is_excluded(spec).await;
        let expected = sprt
            .evaluate(&Results::Pentanomial(status.totals.pentanomial))
            .unwrap();
        assert_eq!(status.progress.sprt().unwrap().llr, expected.llr);
    }

    #[tokio::test]
    async fn without_the_policy_a_biased_worker_is_flagged_but_counted() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let other = register(&s, "other", None).await;
        let (run, _) = s
            .create_run(games_spec(400, 100), false, Actor::system())
            .await
            .unwrap();
        for (worker, p) in [
            (w, [5, 20, 50, 20, 5]),
            (other, [5, 20, 50, 20, 5]),
            (w, [5, 20, 50, 20, 5]),
            (other, [0, 5, 40, 40, 15]),
        ] {
            let g = s.request_work(worker).await.unwrap().unwrap();
            s.submit(worker, g.lease_id, from_pentanomial(&g.work, p))
                .await
                .unwrap();
        }
        let status = s.get_run(run).await.unwrap();
        assert_eq!(status.totals.pairs, 400);
        let health = s.worker_health(run).await.unwrap();
        assert_eq!(health.len(), 2);
        assert!(health.iter().all(|h| !h.standing.excluded()));
        assert_eq!(health[1].sums.pentanomial.0, [5, 25, 90, 60, 20]);
        assert_eq!(health[0].sums.leases, 2);
    }

    #[tokio::test]
    async fn workers_measure_on_their_first_lease_and_slow_ones_get_no_more() {
        use crate::runs::{SpeedRule, WorkerPolicy};
        use xq_proto::capacity::{SpeedCheck, SpeedMethod};
        let (s, slow) = setup(Duration::from_secs(60)).await;
        let fast = register(&s, "fast", Some(2_000_000)).await;
        let mut refusing = games_spec(8, 4);
        refusing.settings.limit = Limit::MoveTimeMs(100);
        refusing.workers = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1_000_000 }),
            ..WorkerPolicy::default()
        };
        let (run, _) = s
            .create_run(refusing.clone(), false, Actor::system())
            .await
            .unwrap();
        let g = s.request_work(slow).await.unwrap().unwrap();
        assert_eq!(
            g.speed,
            Some(SpeedCheck {
                player: 1,
                reference_nps: 0,
                min_nps: 1_000_000
            }),
            "not measured yet: measure first"
        );
        assert_eq!(g.work.players[0].limit, Limit::MoveTimeMs(100));
        let err = s
            .submit(slow, g.lease_id, from_pentanomial(&g.work, [0, 0, 0, 0, 4]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Precondition(m) if m.contains("reported no speed")),
            "a result without the speed it was played at: {err}"
        );
        let err = s
            .engine_speed(slow, g.lease_id, 999_999, SpeedMethod::Bench)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Precondition(m) if m.contains("999999 nodes per second")),
            "{err}"
        );
        assert_eq!(s.request_work(slow).await.unwrap(), None, "too slow");
        let g = s.request_work(fast).await.unwrap().unwrap();
        assert_eq!(g.work.pairs, 4, "the slow worker's slice went back");
        let factor = s
            .engine_speed(fast, g.lease_id, 1_500_000, SpeedMethod::Search)
            .await
            .unwrap();
        assert_eq!(factor, 1.0, "refusing scales nothing");
        let err = s
            .engine_speed(slow, g.lease_id, 1_500_000, SpeedMethod::Bench)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound(_)), "another's lease");

        let mut scaled = refusing;
        scaled.name = "scaled".to_owned();
        scaled.workers.speed = Some(SpeedRule::Scale {
            reference_nps: 1_000_000,
        });
        scaled.priority = 1;
        let (scaled, _) = s.create_run(scaled, false, Actor::system()).await.unwrap();
        let g = s.request_work(slow).await.unwrap().unwrap();
        assert_eq!(g.run_id, scaled);
        let factor = s
            .engine_speed(slow, g.lease_id, 400_000, SpeedMethod::Bench)
            .await
            .unwrap();
        assert_eq!(factor, 2.5);
        let serving = s.serving(scaled).await.unwrap();
        let play = &serving.workers[&slow];
        assert_eq!(
            play.speed.as_ref().map(|p| (p.nps, p.factor)),
            Some((400_000, 2.5))
        );
        assert_eq!(play.speed.as_ref().unwrap().engine, "built-in");
        assert_eq!((serving.active, serving.able), (2, 2));
        let serving = s.serving(run).await.unwrap();
        assert_eq!(
            (serving.active, serving.able),
            (2, 1),
            "the slow one cannot"
        );
    }

    #[tokio::test]
    async fn runs_go_to_machines_with_their_flags_and_a_build_of_their_engines() {
        use xq_proto::{Arch, EngineBinary, EngineRef, Machine, Protocol};
        let (s, old) = setup(Duration::from_secs(60)).await;
        let machine = |isa: &str, flags: &str| Machine {
            cpu_model: String::new(),
            isa: isa.to_owned(),
            flags: flags.parse().unwrap(),
            cores: 2,
            memory_mib: 2048,
        };
        let nehalem = machine("x86_64", "sse3,ssse3,sse41,sse42,popcnt");
        let nehalem = register_with(&s, "nehalem", None, Some(nehalem), &[]).await;
        let haswell = machine(
            "x86_64",
            "sse3,ssse3,sse41,sse42,popcnt,avx,avx2,bmi1,bmi2,fma",
        );
        let haswell = register_with(&s, "haswell", None, Some(haswell), &[]).await;
        let graviton = machine("aarch64", "neon,dotprod");
        let graviton = register_with(&s, "graviton", None, Some(graviton), &[]).await;

        let build = |arch: Arch, bytes: &'static [u8]| EngineRef {
            name: "pika".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: None,
            protocol: Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            binaries: vec![EngineBinary {
                arch,
                sha256: xq_proto::blob::sha256_hex(bytes),
                size: bytes.len() as u64,
            }],
            source: None,
        };
        for (arch, bytes) in [
            (Arch::X86_64Avx2, &b"avx2"[..]),
            (Arch::Armv8Dotprod, &b"arm"[..]),
        ] {
            let e = build(arch, bytes);
            s.store
                .call(move |conn| {
                    let owner = crate::store::users::named_or_admin(conn, None, 1)?;
                    let new = engines::NewEngine {
                        engine: e,
                        spins: Vec::new(),
                        variants: None,
                    };
                    engines::add(conn, &new, bytes, owner, &Actor::cli(), 1).map(|_| ())
                })
                .await
                .unwrap();
        }
        let mut tagged = games_spec(8, 2);
        if let KindSpec::Games(g) = &mut tagged.kind {
            g.lineup.dev = Some(runs::EngineSel {
                name: "pika".to_owned(),
                options: BTreeMap::new(),
                registered: None,
            });
        }
        s.create_run(tagged, false, Actor::system()).await.unwrap();
        assert_eq!(s.request_work(old).await.unwrap(), None, "no machine");
        assert_eq!(s.request_work(nehalem).await.unwrap(), None, "no AVX2");
        for w in [haswell, graviton] {
            let g = s.request_work(w).await.unwrap().expect("a lease");
            let engine = g.work.players[0].engine.as_ref().expect("pika");
            assert_eq!(engine.binaries.len(), 2, "the worker picks its build");
        }

        let mut requiring = games_spec(8, 2);
        requiring.name = "requires avx2".to_owned();
        requiring.priority = 1;
        requiring.workers.require_flags = "avx2".parse().unwrap();
        let (id, _) = s
            .create_run(requiring, false, Actor::system())
            .await
            .unwrap();
        assert_eq!(s.request_work(old).await.unwrap(), None);
        assert_eq!(s.request_work(nehalem).await.unwrap(), None);
        assert_eq!(s.request_work(graviton).await.unwrap().unwrap().run_id, 1);
        assert_eq!(s.request_work(haswell).await.unwrap().unwrap().run_id, id);
    }

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    /// A games run whose dev engine is built from `repo` at [`COMMIT`] with make.
    fn source_spec(repo: &str) -> RunSpec {
        let mut spec = games_spec(40, 2);
        let KindSpec::Games(g) = &mut spec.kind else {
            unreachable!()
        };
        g.lineup.dev = Some(runs::EngineSel {
            name: "engine@main".to_owned(),
            options: BTreeMap::new(),
            registered: Some(xq_proto::EngineRef {
                name: "engine@main".to_owned(),
                sha256: String::new(),
                size: 0,
                signature: Some(777),
                protocol: xq_proto::Protocol::Uci,
                options: BTreeMap::new(),
                coords: None,
                binaries: Vec::new(),
                source: Some(xq_proto::EngineSource {
                    repo: repo.to_owned(),
                    commit: COMMIT.to_owned(),
                    git_ref: Some("main".to_owned()),
                    build: "make engine".to_owned(),
                    binary: "engine".to_owned(),
                    needs: Vec::new(),
                }),
            }),
        });
        spec
    }

    fn failed(commit: &str) -> FailedBuild {
        FailedBuild {
            commit: commit.to_owned(),
            reason: "build command exited with status 2".to_owned(),
            log_tail: "main.cpp:3:1: error: expected ';' before '}' token\n".to_owned(),
        }
    }

    #[tokio::test]
    async fn a_source_run_goes_to_workers_that_can_build_it_and_failed_builds_stop_it() {
        let config = SchedulerConfig {
            build_failures_to_stop: 2,
            ..SchedulerConfig::default()
        };
        let s = Scheduler::new(Store::open_in_memory().unwrap(), config);
        let none = register(&s, "no-tools", None).await;
        let no_make = register_with(&s, "no-make", None, None, &["git", "g++"]).await;
        let b1 = register_with(&s, "b1", None, None, &["git", "make", "g++"]).await;
        let b2 = register_with(&s, "b2", None, None, &["git", "make"]).await;
        let (run, _) = s
            .create_run(
                source_spec("https://example.org/engine.git"),
                false,
                Actor::system(),
            )
            .await
            .unwrap();
        assert_eq!(s.request_work(none).await.unwrap(), None, "builds nothing");
        assert_eq!(s.request_work(no_make).await.unwrap(), None, "lacks make");
        let g1 = s.request_work(b1).await.unwrap().expect("b1 can build");
        let dev = g1.work.players[0].engine.as_ref().expect("dev engine");
        assert_eq!(dev.source.as_ref().map(|x| x.commit.as_str()), Some(COMMIT));

        let wrong = s
            .build_failed(b1, g1.lease_id, failed(&"f".repeat(40)))
            .await;
        assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
        let theirs = s.build_failed(b2, g1.lease_id, failed(COMMIT)).await;
        assert!(matches!(theirs, Err(StoreError::NotFound(_))), "{theirs:?}");
        assert_eq!(
            s.build_failed(b1, g1.lease_id, failed(COMMIT))
                .await
                .unwrap(),
            (run, false),
            "one worker of two"
        );
        let again = s.build_failed(b1, g1.lease_id, failed(COMMIT)).await;
        assert!(matches!(again, Err(StoreError::NotFound(_))), "handed back");
        assert_eq!(
            s.request_work(b1).await.unwrap(),
            None,
            "no more of it for b1"
        );
        let g2 = s
            .request_work(b2)
            .await
            .unwrap()
            .expect("b2 gets the slice again");
        assert_eq!(g2.work.openings.offset, g1.work.openings.offset);
        assert_eq!(
            s.build_failed(b2, g2.lease_id, failed(COMMIT))
                .await
                .unwrap(),
            (run, true)
        );
        let stopped = s.get_run(run).await.unwrap();
        assert_eq!(stopped.state, RunState::Stopped);
        let flag = stopped.flag.unwrap_or_default();
        assert!(
            flag.contains("failed on 2 workers") && flag.contains("expected ';'"),
            "{flag}"
        );
        let listed = s.build_failures(run).await.unwrap();
        assert_eq!(
            listed.iter().map(|f| f.worker_id).collect::<Vec<_>>(),
            [b1, b2]
        );
        assert!(listed[1].failed.log_tail.contains("expected ';'"));
        let events = s
            .store
            .call(move |conn| {
                events::list(
                    conn,
                    &crate::events::EventFilter {
                        run: Some(run),
                        kind: Some(EventKind::Stop),
                        limit: 10,
                        ..Default::default()
                    },
                )
            })
            .await
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            (events[0].actor.as_str(), events[0].detail.as_str()),
            ("system", flag.as_str())
        );
    }

    #[tokio::test]
    async fn a_source_of_a_scheme_the_coordinator_does_not_allow_is_refused() {
        let (s, _) = setup(Duration::from_secs(60)).await;
        let err = s
            .create_run(source_spec("file:///srv/engine"), false, Actor::system())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("over https only"), "{err}");
        let allowing = Scheduler::new(
            Store::open_in_memory().unwrap(),
            SchedulerConfig {
                git: crate::git::GitConfig {
                    protocols: crate::git::GitProtocols::parse("https,file").unwrap(),
                    ..Default::default()
                },
                ..SchedulerConfig::default()
            },
        );
        allowing
            .create_run(source_spec("file:///srv/engine"), false, Actor::system())
            .await
            .expect("a resolved commit needs no git at creation");
    }

    #[test]
    fn higher_priority_then_fewest_in_flight_wins() {
        let c = |id, priority, in_flight| Candidate {
            id,
            priority,
            target_pairs: Some(100),
            pairs_issued: 0,
            pairs_counted: 0,
            pairs_in_flight: in_flight,
            share: runs::change::DEFAULT_SHARE,
            has_requeued: false,
        };
        assert_eq!(pick(&[c(1, 0, 0), c(2, 1, 50)]).unwrap().id, 2);
        assert_eq!(pick(&[c(1, 0, 8), c(2, 0, 0)]).unwrap().id, 2);
        let full = Candidate {
            pairs_issued: 100,
            ..c(3, 5, 0)
        };
        assert_eq!(pick(&[full, c(4, 0, 0)]).unwrap().id, 4);
    }

    /// Runs of equal priority and shares 100 and 200, none of whose leases
    /// end: 300 picks of 8-pair leases go 1:2, and so do their pairs in
    /// flight; a higher priority still comes first whatever the shares.
    #[test]
    fn runs_of_equal_priority_get_pairs_in_flight_in_proportion_to_their_shares() {
        let c = |id, share| Candidate {
            id,
            priority: 0,
            target_pairs: None,
            pairs_issued: 0,
            pairs_counted: 0,
            pairs_in_flight: 0,
            share,
            has_requeued: false,
        };
        let mut runs = [c(1, 100), c(2, 200)];
        let mut picks = [0u32; 2];
        for _ in 0..300 {
            let id = pick(&runs).unwrap().id;
            let i = runs.iter().position(|r| r.id == id).unwrap();
            picks[i] += 1;
            runs[i].pairs_in_flight += 8;
        }
        assert_eq!(picks, [100, 200]);
        let urgent = Candidate {
            priority: 1,
            ..c(3, 1)
        };
        assert_eq!(pick(&[runs[1].clone(), urgent]).unwrap().id, 3);
    }

    /// A games run of 20 pairs in leases of 4: the cap changes between
    /// leases, never below the pairs handed out, and the next lease is cut
    /// to it; the run finishes at the new cap, and a finished run no longer
    /// changes. Each change is one event saying old → new.
    #[tokio::test]
    async fn a_changed_cap_cuts_the_next_lease_and_finishes_the_run_at_it() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let (run, _) = s
            .create_run(games_spec(20, 4), false, Actor::system())
            .await
            .unwrap();
        let first = s.request_work(w).await.unwrap().unwrap();
        let second = s.request_work(w).await.unwrap().unwrap();
        let cap = |pairs| RunChange::new(Some(pairs), None, None).unwrap();
        let err = s
            .modify_run(run, cap(6), Actor::system())
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        assert!(
            err.to_string()
                .contains("handed out 8 pairs (0 counted); a cap of 6"),
            "{err}"
        );
        let changed = s.modify_run(run, cap(10), Actor::system()).await.unwrap();
        assert_eq!(changed.target_pairs, Some(10));
        assert_eq!(changed.state, RunState::Active);
        let third = s.request_work(w).await.unwrap().unwrap();
        assert_eq!((third.work.openings.offset, third.work.pairs), (8, 2));
        assert_eq!(s.request_work(w).await.unwrap(), None);
        for g in [&first, &second, &third] {
            s.submit(w, g.lease_id, draws(&g.work)).await.unwrap();
        }
        let done = s.get_run(run).await.unwrap();
        assert_eq!((done.state, done.totals.pairs), (RunState::Finished, 10));
        let err = s
            .modify_run(run, cap(12), Actor::system())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("run 1 is finished"), "{err}");

        let (early, _) = s
            .create_run(games_spec(20, 4), false, Actor::system())
            .await
            .unwrap();
        let g = s.request_work(w).await.unwrap().unwrap();
        s.submit(w, g.lease_id, draws(&g.work)).await.unwrap();
        let at_cap = s.modify_run(early, cap(4), Actor::system()).await.unwrap();
        assert_eq!(
            at_cap.state,
            RunState::Finished,
            "the counted pairs reach it"
        );
        let log = s
            .store
            .call(|conn| {
                let filter = crate::events::EventFilter {
                    kind: Some(EventKind::Modify),
                    limit: 10,
                    ..Default::default()
                };
                events::list(conn, &filter)
            })
            .await
            .unwrap();
        let details: Vec<_> = log.iter().map(|e| (e.run, e.detail.as_str())).collect();
        assert_eq!(
            details,
            [(Some(early), "pairs 20 → 4"), (Some(run), "pairs 20 → 10")]
        );
    }

    /// Raising a run's priority hands it the next lease; a share alone only
    /// weighs among equals; values the run has already change nothing. An
    /// SPRT's cap is its max pairs; an SPSA run's length does not change.
    #[tokio::test]
    async fn priority_share_and_the_kinds_caps_change_as_documented() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let (a, _) = s
            .create_run(games_spec(100, 4), false, Actor::system())
            .await
            .unwrap();
        let mut other = games_spec(100, 4);
        other.name = "other".to_owned();
        let (b, _) = s.create_run(other, false, Actor::system()).await.unwrap();
        assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, a);
        let change = RunChange::new(None, Some(0), Some(300)).unwrap();
        let shared = s.modify_run(b, change, Actor::system()).await.unwrap();
        assert_eq!((shared.spec.priority, shared.share), (0, 300));
        assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, a);
        let up = RunChange::new(None, Some(5), None).unwrap();
        let raised = s.modify_run(a, up, Actor::system()).await.unwrap();
        assert_eq!(raised.spec.priority, 5);
        for _ in 0..3 {
            assert_eq!(s.request_work(w).await.unwrap().unwrap().run_id, a);
        }
        let same = s.modify_run(a, up, Actor::system()).await.unwrap();
        assert_eq!(same.updated_ms, raised.updated_ms, "nothing changed");

        use crate::stats::EloModel;
        use crate::stats::sprt::SprtParams;
        let mut sprt = games_spec(0, 4);
        sprt.name = "sprt".to_owned();
        sprt.kind = KindSpec::Sprt(runs::SprtSpec {
            dev_params: BTreeMap::new(),
            base_params: BTreeMap::new(),
            lineup: Default::default(),
            sprt: SprtParams::new(0.0, 5.0, 0.05, 0.05, EloModel::Normalized).unwrap(),
            max_pairs: None,
        });
        let (t, _) = s.create_run(sprt, false, Actor::system()).await.unwrap();
        let capped = s
            .modify_run(
                t,
                RunChange::new(Some(300), None, None).unwrap(),
                Actor::system(),
            )
            .await
            .unwrap();
        let KindSpec::Sprt(spec) = &capped.spec.kind else {
            panic!("an sprt run");
        };
        assert_eq!(
            (spec.max_pairs, capped.target_pairs),
            (Some(300), Some(300))
        );

        let mut tune = games_spec(0, 4);
        tune.name = "tune".to_owned();
        tune.kind = KindSpec::Spsa(runs::SpsaSpec {
            params: vec![crate::spsa::SpsaParamSpec {
                name: "chariot_value".to_owned(),
                start: 400.0,
                min: 100.0,
                max: 2000.0,
                c_end: 60.0,
                r_end: 0.002,
                integer: true,
            }],
            games: 400,
            engine: None,
            pairs_per_iteration: 4,
            verify: None,
        });
        let (u, _) = s.create_run(tune, false, Actor::system()).await.unwrap();
        let err = s
            .modify_run(
                u,
                RunChange::new(Some(300), None, None).unwrap(),
                Actor::system(),
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("gain schedule was fixed by its 400 games"),
            "{err}"
        );
    }
}
