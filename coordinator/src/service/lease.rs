//! RequestWork: a worker gets the next slice of the fairest run that admits
//! it (see [the fair share](super#fair-share)), as a lease.

use std::sync::Arc;
use std::time::Duration;

use xq_proto::capacity::SpeedCheck;
use xq_proto::{OpeningSlice, WorkSpec};

use super::Core;
use super::cadence::Cadence;
use crate::runs::admission;
use crate::runs::{RunKind, RunStatus, Slice, SliceWork};
use crate::store::leases::{self, NewLease};
use crate::store::runs::{self as run_rows, Candidate};
use crate::store::{StoreError, workers};

/// A worker's leases ([`Core::leases`]): this module hands them out;
/// [`super::heartbeat`], [`super::submit`], [`super::release`],
/// [`super::speeds`] and [`super::builds`] take the worker's calls on them.
#[derive(Debug, Clone, Copy)]
pub struct Leases<'a> {
    pub(super) core: &'a Core,
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
    /// How often to heartbeat it: the deadline is a lease life of this
    /// cadence away ([`super::cadence`]).
    pub heartbeat_interval: Duration,
}

/// The run a worker should get next (see [the fair share](super#fair-share)).
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

impl Leases<'_> {
    /// Hands the worker the next slice of the fairest run, or `None`. The
    /// run it reads is kept for the check of the lease's result.
    pub async fn request_work(&self, worker_id: u64) -> Result<Option<Grant>, StoreError> {
        let cadence = self.core.cadence.seen(worker_id);
        let paces = Arc::clone(&self.core.paces);
        let checks = self.core.checks.clone();
        let beats = Arc::clone(&self.core.beats);
        let granted = self
            .core
            .store
            .call(move |conn| {
                let settled = beats.settle(conn)?;
                let now = settled.ms();
                let tx = conn.savepoint()?;
                workers::touch(&tx, worker_id, now)?;
                leases::expire_overdue(&tx, settled)?;
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
                            true => {
                                let plies = (2.0 * run.totals.mean_plies()).ceil() as u64;
                                let checked = checks.pairs_within_budget(plies);
                                paces.pairs(worker_id, run.id, run.spec.batch_pairs, checked)
                            }
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
                let grant = grant(&tx, &run, worker_id, &slice, now, cadence)?;
                tx.commit()?;
                Ok(Some((grant, Arc::new(run))))
            })
            .await?;
        Ok(granted.map(|(grant, run)| {
            self.core.snapshots.put(run);
            grant
        }))
    }
}

/// The openings of `slice` of `run`, as its lease carries them.
pub(super) fn opening_slice(run: &RunStatus, slice: &Slice, per_game: bool) -> OpeningSlice {
    let settings = &run.spec.settings;
    OpeningSlice {
        source: settings.openings.clone(),
        seed: settings.seed,
        offset: slice.offset,
        count: slice.pairs.into(),
        per_game,
    }
}

/// Stores a lease of `slice` of `run` for the worker, a lease life of
/// `cadence` from `now`, and returns it. A run with a speed rule asks the worker to measure itself
/// ([`crate::runs::WorkerPolicy::speed_check`]) and scale its limits by the
/// factor [`Leases::engine_speed`] answers.
fn grant(
    conn: &rusqlite::Connection,
    run: &RunStatus,
    worker_id: u64,
    slice: &Slice,
    now: i64,
    cadence: Cadence,
) -> Result<Grant, StoreError> {
    let deadline_ms = now.saturating_add(cadence.ttl_ms());
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
        heartbeat_interval: cadence.interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::testing::*;
    use crate::store::engines;

    #[tokio::test]
    async fn a_fast_worker_gets_leases_of_the_target_time_and_a_slow_one_single_batches() {
        let config = SchedulerConfig {
            pace: PaceConfig {
                target: Duration::from_secs(1),
                max_pairs: 40,
            },
            ..SchedulerConfig::default()
        };
        let s = Core::new(Store::open_in_memory().unwrap(), config);
        let fast = register(&s, "fast", None).await;
        let slow = register(&s, "slow", None).await;
        let (run, _) = s
            .runs()
            .create(games_spec(100, 3), false, Actor::system())
            .await
            .unwrap();
        let mut leases = Vec::new();
        for w in [fast, slow, fast, slow, fast, fast] {
            let g = s.leases().request_work(w).await.unwrap().unwrap();
            leases.push(g.work.pairs);
            if w == slow {
                tokio::time::sleep(Duration::from_millis(1100)).await;
            }
            let status = s
                .leases()
                .submit(w, g.lease_id, draws(&g.work))
                .await
                .unwrap();
            assert_eq!(status, SubmitStatus::Accepted);
        }
        // One batch first; then the fast worker's leases are as large as
        // allowed in whole batches (39 of 40), the slow one's one batch, and
        // the last lease what the run has left.
        assert_eq!(leases, [3, 3, 39, 3, 39, 13]);
        let status = s.queries().get_run(run).await.unwrap();
        assert_eq!(status.totals.pairs, 100);
        assert_eq!(status.state, RunState::Finished);
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
        let (run, _) = s.runs().create(spec, false, Actor::system()).await.unwrap();
        let mut grants = Vec::new();
        while let Some(g) = s.leases().request_work(w).await.unwrap() {
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
        let err = s
            .leases()
            .submit(w, g.lease_id, with(None))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("results.variant"), "{err}");
        let stats = draws(&g.work).variant.unwrap();
        assert_eq!(stats.draws, 4);
        let mut bad = stats.clone();
        bad.pair_outcomes[4] = 1;
        let err = s
            .leases()
            .submit(w, g.lease_id, with(Some(bad)))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("results.variant.pair_outcomes"),
            "{err}"
        );
        let mut unlike = stats.clone();
        unlike.plies_histogram.rotate_right(1);
        let err = s
            .leases()
            .submit(w, g.lease_id, with(Some(unlike)))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not those of the games"), "{err}");
        let ok = s
            .leases()
            .submit(w, g.lease_id, with(Some(stats)))
            .await
            .unwrap();

        assert_eq!(ok, SubmitStatus::Accepted);
        let status = s.queries().get_run(run).await.unwrap();
        assert_eq!(status.progress.variants()[0].pairs, 0);
        assert_eq!(status.progress.variants()[1].pairs, 2);
        assert_eq!(status.progress.variants()[1].stats.draws, 4);
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
        s.runs()
            .create(tagged, false, Actor::system())
            .await
            .unwrap();
        assert_eq!(
            s.leases().request_work(old).await.unwrap(),
            None,
            "no machine"
        );
        assert_eq!(
            s.leases().request_work(nehalem).await.unwrap(),
            None,
            "no AVX2"
        );
        for w in [haswell, graviton] {
            let g = s.leases().request_work(w).await.unwrap().expect("a lease");
            let engine = g.work.players[0].engine.as_ref().expect("pika");
            assert_eq!(engine.binaries.len(), 2, "the worker picks its build");
        }

        let mut requiring = games_spec(8, 2);
        requiring.name = "requires avx2".to_owned();
        requiring.priority = 1;
        requiring.workers.require_flags = "avx2".parse().unwrap();
        let (id, _) = s
            .runs()
            .create(requiring, false, Actor::system())
            .await
            .unwrap();
        assert_eq!(s.leases().request_work(old).await.unwrap(), None);
        assert_eq!(s.leases().request_work(nehalem).await.unwrap(), None);
        assert_eq!(
            s.leases()
                .request_work(graviton)
                .await
                .unwrap()
                .unwrap()
                .run_id,
            1
        );
        assert_eq!(
            s.leases()
                .request_work(haswell)
                .await
                .unwrap()
                .unwrap()
                .run_id,
            id
        );
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
}
