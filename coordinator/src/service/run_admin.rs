//! A run's administration: create, stop, resume, approve, reject, modify.
//! Each is one permission check against the actor, then one transaction
//! that makes the change with its event, then the watchers hear of it. The
//! state a run moves to is [`RunState::transition`]'s table.

use super::Core;
use crate::access;
use crate::events::{Actor, EventKind};
use crate::runs::{RunAction, RunChange, RunSpec, RunState, RunStatus, Transition};
use crate::store::runs as run_rows;
use crate::store::{StoreError, engines, events, now_ms};
use xq_proto::OpeningSource;

/// Runs' life cycle ([`Core::runs`]).
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    pub(super) core: &'a Core,
}

impl Runs<'_> {
    /// Creates a run of `spec` by `actor` (its user is the run's author)
    /// and logs it; with `reuse`, an identical active run is returned
    /// instead. Returns the run's id and whether it was reused.
    ///
    /// Source engines must name repositories of the allowed schemes; a
    /// branch or tag is resolved to its commit first (`git ls-remote`,
    /// outside the store's thread), and the run's spec holds the commit.
    pub async fn create(
        &self,
        spec: RunSpec,
        reuse: bool,
        actor: Actor,
    ) -> Result<(u64, bool), StoreError> {
        let mut spec = spec;
        self.resolve_sources(&mut spec).await?;
        self.core
            .store
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
        let git = self.core.config.git;
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

    /// Stops run `id` for `actor` and logs it; a run no longer active or
    /// pending is left as it is. A developer may stop only their own runs
    /// ([`access::may_manage`]): another's is `Forbidden`.
    pub async fn stop(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            let Transition::To(state) = transition(run, RunAction::Stop)? else {
                return Ok(false);
            };
            run_rows::set_state(tx, id, state, now)?;
            events::log(tx, actor, EventKind::Stop, Some(id), "", now)?;
            Ok(true)
        })
        .await
    }

    /// Resumes stopped run `id` for `actor` (who may manage it, as for a
    /// stop) where it stood, and logs it; an untrusted developer's resumed
    /// test waits for approval again. A run in another state is `Invalid`.
    pub async fn resume(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            transition(run, RunAction::Resume)?;
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
    pub async fn modify(
        &self,
        id: u64,
        change: RunChange,
        actor: Actor,
    ) -> Result<RunStatus, StoreError> {
        self.change(id, actor, move |tx, actor, run, now| {
            check_manager(tx, actor, id)?;
            transition(run, RunAction::Modify)?;
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
    pub async fn approve(&self, id: u64, actor: Actor) -> Result<RunStatus, StoreError> {
        self.change(id, actor, move |tx, actor, run, now| {
            let to = transition(run, RunAction::Approve)?;
            check_approver(tx, actor, run)?;
            let Transition::To(state) = to else {
                return Ok(false);
            };
            run_rows::set_state(tx, id, state, now)?;
            events::log(tx, actor, EventKind::Approve, Some(id), "", now)?;
            Ok(true)
        })
        .await
    }

    /// Rejects pending run `id` for `actor` with `reason`, which its author sees.
    pub async fn reject(
        &self,
        id: u64,
        actor: Actor,
        reason: String,
    ) -> Result<RunStatus, StoreError> {
        self.change(id, actor, move |tx, actor, run, now| {
            transition(run, RunAction::Reject)?;
            check_approver(tx, actor, run)?;
            run_rows::reject(tx, id, &reason, now)?;
            events::log(tx, actor, EventKind::Reject, Some(id), &reason, now)?;
            Ok(true)
        })
        .await
    }

    /// One change of run `id` by `actor`, in one transaction: `change` sees
    /// the run as stored, refuses it or makes the change (with its event)
    /// and says whether it changed anything. Returns the run after it, and
    /// tells the run's watchers.
    async fn change<F>(&self, id: u64, actor: Actor, change: F) -> Result<RunStatus, StoreError>
    where
        F: FnOnce(&rusqlite::Connection, &Actor, &RunStatus, i64) -> Result<bool, StoreError>
            + Send
            + 'static,
    {
        let status = self
            .core
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
        self.core.changed(id);
        Ok(status)
    }
}

/// Where `action` takes `run` ([`RunState::transition`]); a refusal is
/// `Invalid`, naming the run's state.
fn transition(run: &RunStatus, action: RunAction) -> Result<Transition, StoreError> {
    run.state
        .transition(action)
        .map_err(|refused| StoreError::invalid("run_id", refused.message(run.id)))
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

/// `Forbidden` unless `actor` may approve or reject `run`
/// ([`access::may_approve`]).
fn check_approver(
    conn: &rusqlite::Connection,
    actor: &Actor,
    run: &RunStatus,
) -> Result<(), StoreError> {
    let id = run.id;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::testing::*;

    #[tokio::test]
    async fn a_source_of_a_scheme_the_coordinator_does_not_allow_is_refused() {
        let (s, _) = setup(Duration::from_secs(60)).await;
        let err = s
            .runs()
            .create(source_spec("file:///srv/engine"), false, Actor::system())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("over https only"), "{err}");
        let allowing = Core::new(
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
            .runs()
            .create(source_spec("file:///srv/engine"), false, Actor::system())
            .await
            .expect("a resolved commit needs no git at creation");
    }

    /// A games run of 20 pairs in leases of 4: the cap changes between
    /// leases, never below the pairs handed out, and the next lease is cut
    /// to it; the run finishes at the new cap, and a finished run no longer
    /// changes. Each change is one event saying old → new.
    #[tokio::test]
    async fn a_changed_cap_cuts_the_next_lease_and_finishes_the_run_at_it() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        let (run, _) = s
            .runs()
            .create(games_spec(20, 4), false, Actor::system())
            .await
            .unwrap();
        let first = s.leases().request_work(w).await.unwrap().unwrap();
        let second = s.leases().request_work(w).await.unwrap().unwrap();
        let cap = |pairs| RunChange::new(Some(pairs), None, None).unwrap();
        let err = s
            .runs()
            .modify(run, cap(6), Actor::system())
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        assert!(
            err.to_string()
                .contains("handed out 8 pairs (0 counted); a cap of 6"),
            "{err}"
        );
        let changed = s
            .runs()
            .modify(run, cap(10), Actor::system())
            .await
            .unwrap();
        assert_eq!(changed.target_pairs, Some(10));
        assert_eq!(changed.state, RunState::Active);
        let third = s.leases().request_work(w).await.unwrap().unwrap();
        assert_eq!((third.work.openings.offset, third.work.pairs), (8, 2));
        assert_eq!(s.leases().request_work(w).await.unwrap(), None);
        for g in [&first, &second, &third] {
            submit_draws(&s, w, g).await;
        }
        let done = s.queries().get_run(run).await.unwrap();
        assert_eq!((done.state, done.totals.pairs), (RunState::Finished, 10));
        let err = s
            .runs()
            .modify(run, cap(12), Actor::system())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("run 1 is finished"), "{err}");

        let (early, _) = s
            .runs()
            .create(games_spec(20, 4), false, Actor::system())
            .await
            .unwrap();
        let g = s.leases().request_work(w).await.unwrap().unwrap();
        submit_draws(&s, w, &g).await;
        let at_cap = s
            .runs()
            .modify(early, cap(4), Actor::system())
            .await
            .unwrap();
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
            .runs()
            .create(games_spec(100, 4), false, Actor::system())
            .await
            .unwrap();
        let mut other = games_spec(100, 4);
        other.name = "other".to_owned();
        let (b, _) = s
            .runs()
            .create(other, false, Actor::system())
            .await
            .unwrap();
        assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, a);
        let change = RunChange::new(None, Some(0), Some(300)).unwrap();
        let shared = s.runs().modify(b, change, Actor::system()).await.unwrap();
        assert_eq!((shared.spec.priority, shared.share), (0, 300));
        assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, b);
        assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, a);
        let up = RunChange::new(None, Some(5), None).unwrap();
        let raised = s.runs().modify(a, up, Actor::system()).await.unwrap();
        assert_eq!(raised.spec.priority, 5);
        for _ in 0..3 {
            assert_eq!(s.leases().request_work(w).await.unwrap().unwrap().run_id, a);
        }
        let same = s.runs().modify(a, up, Actor::system()).await.unwrap();
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
        let (t, _) = s.runs().create(sprt, false, Actor::system()).await.unwrap();
        let capped = s
            .runs()
            .modify(
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
        let (u, _) = s.runs().create(tune, false, Actor::system()).await.unwrap();
        let err = s
            .runs()
            .modify(
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
