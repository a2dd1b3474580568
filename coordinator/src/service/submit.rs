//! SubmitResult: a lease's result, checked off the writer and counted
//! exactly once (see [exactly once](super#exactly-once)).
//!
//! # What one submission reads
//!
//! The lease row once, on the read connection, with the check of the games
//! (its holder, slice and run never change). The run row once, in the
//! writing transaction, after the result's totals are added: the kind counts
//! the result on the run as it now stands. The check of the games needs
//! only what a run's change never touches, and takes it from the run as the
//! lease that it answers, or the last result, read it ([`super::Snapshots`]);
//! only a run not read since the coordinator started is read for it too.
//! The writing transaction ends the lease with one conditional statement
//! ([`leases::finish`]) rather than reading it again.

use std::sync::Arc;
use std::time::Duration;

use xq_proto::engine_binaries;
use xq_proto::{Arch, BatchOutcome, Invalid, OpeningSource, Totals};

use super::check_lane::Admission;
use super::lease::{Leases, opening_slice};
use crate::archive;
use crate::events::{Actor, EventKind};
use crate::runs::{Lease, LeaseState, RunState, RunStatus, exclusion};
use crate::store::games::KeptGames;
use crate::store::leases::Finished;
use crate::store::runs::{self as run_rows, Cause};
use crate::store::{StoreError, events, games, health, lease_results, leases, now_ms};
use crate::store::{speeds, workers};

/// What became of a submission; only `Accepted` changed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitStatus {
    Accepted,
    Duplicate,
    ExpiredIgnored,
    CancelledIgnored,
}

/// A result that passed its check, ready to count.
struct Checked {
    lease: Lease,
    kept: KeptGames,
    outcome: BatchOutcome,
    /// The build each player's engine took on the worker's machine.
    builds: [Option<Arch>; 2],
}

impl Leases<'_> {
    /// Counts a lease's result exactly once (see [exactly
    /// once](super#exactly-once)) and tells the run's watchers.
    ///
    /// Waits for a place in the check lane ([`super::check_lane`]); the
    /// server admits results before reading them and calls
    /// [`Leases::submit_admitted`].
    pub async fn submit(
        &self,
        worker_id: u64,
        lease_id: u64,
        outcome: BatchOutcome,
    ) -> Result<SubmitStatus, StoreError> {
        let admission = self.core.checks.admit().await;
        self.submit_admitted(admission, worker_id, lease_id, outcome)
            .await
    }

    /// [`Leases::submit`] for a result that already holds its place in the
    /// check lane, which it keeps until it is answered.
    pub async fn submit_admitted(
        &self,
        _admission: Admission,
        worker_id: u64,
        lease_id: u64,
        outcome: BatchOutcome,
    ) -> Result<SubmitStatus, StoreError> {
        let Checked {
            lease,
            kept,
            outcome,
            builds,
        } = self.check_games(worker_id, lease_id, outcome).await?;
        let run_id = lease.run_id;
        let beats = std::sync::Arc::clone(&self.core.beats);
        let (status, lease, run) = self
            .core
            .store
            .call_bulk(move |conn| {
                let settled = beats.settle(conn)?;
                let now = settled.ms();
                let tx = conn.savepoint()?;
                workers::touch(&tx, worker_id, now)?;
                let (status, run) = match leases::finish(&tx, lease_id, settled)? {
                    Finished::Unknown => {
                        return Err(StoreError::NotFound(format!("no lease {lease_id}")));
                    }
                    Finished::Was(LeaseState::Done) => (SubmitStatus::Duplicate, None),
                    Finished::Was(LeaseState::Cancelled) => (SubmitStatus::CancelledIgnored, None),
                    Finished::Was(_) | Finished::Lapsed => (SubmitStatus::ExpiredIgnored, None),
                    Finished::Done => {
                        let run = count_result(&tx, &lease, &outcome, &builds, now)?;
                        games::insert(
                            &tx,
                            lease.run_id,
                            lease_id,
                            worker_id,
                            &outcome.games,
                            &kept,
                        )?;
                        (SubmitStatus::Accepted, Some(run))
                    }
                };
                tx.commit()?;
                Ok((status, lease, run))
            })
            .await?;
        if let Some(run) = run {
            self.core.snapshots.put(Arc::new(run));
        }
        if status == SubmitStatus::Accepted {
            let took =
                Duration::from_millis(now_ms().saturating_sub(lease.created_ms).max(0) as u64);
            self.core.paces.record(worker_id, run_id, lease.pairs, took);
            self.core.changed(run_id);
        }
        Ok(status)
    }

    /// Checks a result's shape against its lease ([`BatchOutcome::check`]:
    /// one game record per counted game) and replays its games under the
    /// lease's rules against its counts (see [`crate::archive`]), off the
    /// store's thread, on the check lane, whatever the run keeps: a refused result is
    /// [`StoreError::Invalid`] and nothing is counted. Returns the lease, the
    /// games the run keeps, compressed there too, and the outcome.
    async fn check_games(
        &self,
        worker_id: u64,
        lease_id: u64,
        outcome: BatchOutcome,
    ) -> Result<Checked, StoreError> {
        let books = self.core.books.clone();
        let snapshots = self.core.snapshots.clone();
        let (lease, rules, openings, book_lines, keep, builds) = self
            .core
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
                let run = match snapshots.get(lease.run_id) {
                    Some(run) => run,
                    None => {
                        let run = Arc::new(run_rows::load(conn, lease.run_id)?);
                        snapshots.put(Arc::clone(&run));
                        run
                    }
                };
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
                let machine = workers::machine(conn, worker_id)?;
                let builds = engine_binaries::builds_for(&work.players, machine.as_ref());
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
                    lease,
                    work.rules,
                    openings,
                    book_lines,
                    run.spec.keep_games,
                    builds,
                ))
            })
            .await?;
        outcome.check(lease.pairs)?;
        let books = self.core.books.clone();
        let run_id = lease.run_id;
        let plies = outcome.totals.total_plies;
        let (kept, outcome) = self
            .core
            .checks
            .run(plies, move || {
                let book = books
                    .get(run_id, book_lines.as_ref().unwrap_or(&openings.source))
                    .map_err(|e| Invalid::new("run.openings", e))?;
                archive::check_openings(&openings, &book, &rules, &outcome.games)?;
                archive::check(&rules, &outcome)?;
                let kept = KeptGames::new(&outcome.games, |g| keep.keeps(g.result, g.reason));
                Ok::<_, Invalid>((kept, outcome))
            })
            .await?
            .map_err(StoreError::Invalid)?;
        Ok(Checked {
            lease,
            kept,
            outcome,
            builds,
        })
    }
}

/// Adds a lease's counts to its run, lets the run's kind count them too,
/// excludes the workers the run now sets aside ([`exclusion`]) and finishes
/// the run at its end; the result is stored with the `builds` its players
/// played. Runs inside the submission's transaction; returns
/// the run as it read it (its spec and its state after the result).
fn count_result(
    conn: &rusqlite::Connection,
    lease: &Lease,
    outcome: &BatchOutcome,
    builds: &[Option<Arch>; 2],
    now: i64,
) -> Result<RunStatus, StoreError> {
    let run_id = lease.run_id;
    lease_results::insert(conn, lease, outcome, builds)?;
    run_rows::add_totals(conn, run_id, &outcome.totals, now)?;
    let mut run = run_rows::load(conn, run_id)?;
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
        run.state = RunState::Finished;
        tracing::info!(run_id, "run finished");
    }
    Ok(run)
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
    use super::*;
    use crate::service::testing::*;

    #[tokio::test]
    async fn slices_advance_and_results_count_exactly_once() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let (run, _) = s
            .runs()
            .create(games_spec(10, 4), false, Actor::system())
            .await
            .unwrap();
        let mut offsets = Vec::new();
        let mut grants = Vec::new();
        while let Some(g) = s.leases().request_work(w).await.unwrap() {
            offsets.push((g.work.openings.offset, g.work.pairs));
            grants.push(g);
        }
        assert_eq!(offsets, [(0, 4), (4, 4), (8, 2)]);
        for g in &grants {
            let status = s
                .leases()
                .submit(w, g.lease_id, draws(&g.work))
                .await
                .unwrap();
            assert_eq!(status, SubmitStatus::Accepted);
        }
        let again = s
            .leases()
            .submit(w, grants[0].lease_id, draws(&grants[0].work))
            .await
            .unwrap();
        assert_eq!(again, SubmitStatus::Duplicate);
        let run = s.queries().get_run(run).await.unwrap();
        assert_eq!(run.totals.pairs, 10);
        assert_eq!(run.totals.wdl.draws, 20);
        assert_eq!(run.state, RunState::Finished);
    }

    #[tokio::test]
    async fn an_expired_slice_is_handed_out_again_and_its_late_result_ignored() {
        let (s, w) = setup(Duration::from_millis(1)).await;
        s.runs()
            .create(games_spec(4, 4), false, Actor::system())
            .await
            .unwrap();
        let first = s.leases().request_work(w).await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = s.leases().request_work(w).await.unwrap().unwrap();
        assert_eq!(second.work.openings.offset, first.work.openings.offset);
        assert_ne!(second.lease_id, first.lease_id);
        let late = s
            .leases()
            .submit(w, first.lease_id, draws(&first.work))
            .await
            .unwrap();
        assert_eq!(late, SubmitStatus::ExpiredIgnored);
    }

    #[tokio::test]
    async fn a_result_that_does_not_fit_the_lease_is_refused() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        s.runs()
            .create(games_spec(4, 4), false, Actor::system())
            .await
            .unwrap();
        let g = s.leases().request_work(w).await.unwrap().unwrap();
        let short = WorkSpec {
            pairs: 3,
            ..g.work.clone()
        };
        let err = s
            .leases()
            .submit(w, g.lease_id, draws(&short))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        let mut without = draws(&g.work);
        without.games.clear();
        let err = s
            .leases()
            .submit(w, g.lease_id, without.clone())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("results.games"), "{err}");
        without.games = draws(&g.work).games[..7].to_vec();
        let err = s.leases().submit(w, g.lease_id, without).await.unwrap_err();
        assert!(err.to_string().contains("7 game records"), "{err}");
        assert_eq!(s.queries().get_run(g.run_id).await.unwrap().totals.pairs, 0);
        let mut unkept = games_spec(4, 4);
        unkept.name = "keeps none".to_owned();
        unkept.keep_games = xq_proto::Retention::None;
        unkept.priority = 1;
        s.runs()
            .create(unkept, false, Actor::system())
            .await
            .unwrap();
        let none = s.leases().request_work(w).await.unwrap().unwrap();
        let mut without = draws(&none.work);
        without.games.clear();
        let err = s
            .leases()
            .submit(w, none.lease_id, without)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("results.games"),
            "a run that keeps no games still checks them: {err}"
        );
        assert_eq!(submit_draws(&s, w, &g).await, SubmitStatus::Accepted);
    }

    /// Six workers play a run that excludes flagged workers; worker 0
    /// reports plausible counts (every lease a valid pentanomial) drawn
    /// from a distribution about 90 Elo better for the first player. It is
    /// flagged and excluded, its slices are played again by the others, and
    /// the run's totals (and LLR) are exactly the honest workers' sum.
    async fn a_biased_worker_is_excluded(spec: RunSpec) -> (Core, RunStatus, Vec<u64>) {
        use rand::SeedableRng;
        let (s, first) = setup(Duration::from_secs(60)).await;
        let mut workers = vec![first];
        for i in 1..6 {
            workers.push(register(&s, &format!("w{i}"), None).await);
        }
        let (run, _) = s.runs().create(spec, false, Actor::system()).await.unwrap();
        let honest = [0.05, 0.2, 0.5, 0.2, 0.05];
        let biased = [0.02, 0.1, 0.48, 0.3, 0.1];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
        let mut honest_sum = xq_proto::Totals::default();
        let mut biased_after_exclusion = 0;
        loop {
            let mut any = false;
            for (i, &w) in workers.iter().enumerate() {
                let was_excluded = s
                    .queries()
                    .worker_health(run)
                    .await
                    .unwrap()
                    .iter()
                    .any(|h| h.standing.excluded());
                let Some(g) = s.leases().request_work(w).await.unwrap() else {
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
                let status = s
                    .leases()
                    .submit(w, g.lease_id, outcome.clone())
                    .await
                    .unwrap();
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
        let status = s.queries().get_run(run).await.unwrap();
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
        let health = s.queries().worker_health(run).await.unwrap();
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
            .runs()
            .create(games_spec(400, 100), false, Actor::system())
            .await
            .unwrap();
        for (worker, p) in [
            (w, [5, 20, 50, 20, 5]),
            (other, [5, 20, 50, 20, 5]),
            (w, [5, 20, 50, 20, 5]),
            (other, [0, 5, 40, 40, 15]),
        ] {
            let g = s.leases().request_work(worker).await.unwrap().unwrap();
            s.leases()
                .submit(worker, g.lease_id, from_pentanomial(&g.work, p))
                .await
                .unwrap();
        }
        let status = s.queries().get_run(run).await.unwrap();
        assert_eq!(status.totals.pairs, 400);
        let health = s.queries().worker_health(run).await.unwrap();
        assert_eq!(health.len(), 2);
        assert!(health.iter().all(|h| !h.standing.excluded()));
        assert_eq!(health[1].sums.pentanomial.0, [5, 25, 90, 60, 20]);
        assert_eq!(health[0].sums.leases, 2);
    }
}
