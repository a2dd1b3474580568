//! Whether a worker may take a run's leases: what the run's
//! [`WorkerPolicy`] asks (a speed, instruction-set flags), whether one game
//! fits its cores and memory ([`xq_proto::capacity`]), and whether the
//! worker's machine runs a build of each engine the run plays
//! ([`xq_proto::EngineRef::binary_for`], the choice the worker itself
//! makes), and whether it has the tools to build the run's source engines
//! ([`super::sources`]). Pure: the scheduler reads the worker once per request
//! ([`Applicant`]) and asks of each candidate run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use xq_proto::capacity::{Capacity, GameNeeds};
use xq_proto::{Flags, Machine};

use super::RunSpec;
use super::policy::SpeedRule;

/// What admission knows of a worker: what it registered, and the speeds it
/// measured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applicant {
    /// The CPUs it may use (its `--threads`).
    pub threads: u32,
    /// Its machine; `None`: a worker that reported none.
    pub machine: Option<Machine>,
    /// The build tools it reported (none: it builds no source engine).
    pub tools: BTreeSet<String>,
    /// Its speed with each run's base engine that it measured, nodes per
    /// second by run id ([`crate::store::speeds`]).
    pub measured: BTreeMap<u64, u64>,
}

impl Applicant {
    /// What it offers a game.
    pub fn capacity(&self) -> Capacity {
        Capacity::of(self.threads, self.machine.as_ref())
    }
}

/// Why a worker gets no lease of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It measured the run's base engine slower than the run's
    /// `refuse_below_nps` (0: the measurement failed).
    TooSlow { min_nps: u64, nps: u64 },
    /// One game of the run needs more cores or memory than it offers.
    TooSmall { needs: GameNeeds, has: Capacity },
    /// The run requires flags and the worker reported no machine.
    NoMachine { required: Flags },
    /// The worker's machine lacks these required flags.
    MissingFlags(Flags),
    /// No build of this engine of the run runs on the worker's machine.
    NoBuild { engine: String },
    /// The run's source engines need tools to build that the worker lacks
    /// (`git` among them; a worker that builds nothing reports none).
    CannotBuild { missing: Vec<String> },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::TooSlow { min_nps, nps: 0 } => write!(
                f,
                "its speed with the run's base engine could not be measured, the run needs \
                 {min_nps} nodes per second"
            ),
            Refusal::TooSlow { min_nps, nps } => write!(
                f,
                "{nps} nodes per second with the run's base engine is below the run's {min_nps}"
            ),
            Refusal::TooSmall { needs, has } if needs.cores > has.cores => write!(
                f,
                "one game needs {} cores (the search threads of the engine to move), the worker \
                 offers {}",
                needs.cores, has.cores
            ),
            Refusal::TooSmall { needs, has } => write!(
                f,
                "one game needs {} MiB (both players' hash and {} MiB each beyond it), the worker \
                 has {} MiB for engines",
                needs.memory_mib,
                xq_proto::capacity::ENGINE_MARGIN_MIB,
                has.engine_memory_mib().unwrap_or(0)
            ),
            Refusal::NoMachine { required } => {
                write!(f, "no machine reported, the run requires {required}")
            }
            Refusal::MissingFlags(missing) => write!(f, "the machine lacks {missing}"),
            Refusal::NoBuild { engine } => {
                write!(f, "no build of engine '{engine}' runs on the machine")
            }
            Refusal::CannotBuild { missing } => {
                write!(
                    f,
                    "cannot build the run's source engines: no {}",
                    missing.join(", ")
                )
            }
        }
    }
}

/// `Ok` when `who` may play a lease of run `run_id`, which `spec` describes,
/// else the first reason why not. A worker that has not measured its speed
/// in the run is admitted: its first lease asks it to.
pub fn admits(run_id: u64, spec: &RunSpec, who: &Applicant) -> Result<(), Refusal> {
    let policy = &spec.workers;
    if let Some(SpeedRule::RefuseBelow { min_nps }) = policy.speed
        && let Some(&nps) = who.measured.get(&run_id)
        && nps < min_nps
    {
        return Err(Refusal::TooSlow { min_nps, nps });
    }
    let needs = spec.settings.game_needs();
    let has = who.capacity();
    if has.games_at_once(needs) == 0 {
        return Err(Refusal::TooSmall { needs, has });
    }
    let required = policy.require_flags;
    if !required.is_empty() {
        let Some(machine) = &who.machine else {
            return Err(Refusal::NoMachine { required });
        };
        let missing = required.without(machine.flags);
        if !missing.is_empty() {
            return Err(Refusal::MissingFlags(missing));
        }
    }
    let missing: Vec<String> = super::sources::needs(spec)
        .into_iter()
        .filter(|t| !who.tools.contains(*t))
        .map(str::to_owned)
        .collect();
    if !missing.is_empty() {
        return Err(Refusal::CannotBuild { missing });
    }
    for engine in spec.kind.ops().registered() {
        if engine.source.is_none() && engine.binary_for(who.machine.as_ref()).is_none() {
            return Err(Refusal::NoBuild {
                engine: engine.name.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use xq_proto::{Adjudication, Arch, EngineBinary, EngineRef, Limit, OpeningSource, Protocol};

    use super::*;
    use crate::runs::{EngineSel, GamesSpec, KindSpec, Lineup, MatchSettings, WorkerPolicy};

    /// A games run whose dev plays `engine` (resolved) and whose policy is
    /// `workers`.
    fn spec(engine: Option<EngineRef>, workers: WorkerPolicy) -> RunSpec {
        RunSpec {
            name: "t".to_owned(),
            priority: 0,
            batch_pairs: 2,
            settings: MatchSettings {
                limit: Limit::MoveTimeMs(100),
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
                lineup: Lineup {
                    dev: engine.map(|e| EngineSel {
                        name: e.name.clone(),
                        options: BTreeMap::new(),
                        registered: Some(e),
                    }),
                    ..Lineup::default()
                },
                pairs: 8,
            }),
            workers,
            keep_games: Default::default(),
        }
    }

    fn applicant(isa: &str, flags: &str) -> Applicant {
        Applicant {
            threads: 4,
            machine: Some(Machine {
                cpu_model: String::new(),
                isa: isa.to_owned(),
                flags: flags.parse().unwrap(),
                cores: 4,
                memory_mib: 8192,
            }),
            tools: BTreeSet::new(),
            measured: BTreeMap::new(),
        }
    }

    fn avx2_only() -> EngineRef {
        EngineRef {
            name: "pika".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: Some(xq_proto::Signature::Bench(1)),
            protocol: Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            source: None,
            binaries: vec![EngineBinary {
                arch: Arch::X86_64Avx2,
                sha256: "a".repeat(64),
                size: 1,
            }],
        }
    }

    #[test]
    fn required_flags_admit_only_machines_that_have_them() {
        let policy = WorkerPolicy {
            require_flags: "avx2,bmi2".parse().unwrap(),
            ..WorkerPolicy::default()
        };
        let run = spec(None, policy);
        let haswell = applicant("x86_64", "ssse3,sse41,popcnt,avx2,bmi2");
        assert_eq!(admits(1, &run, &haswell), Ok(()));
        let zen1 = applicant("x86_64", "ssse3,sse41,popcnt,avx2");
        let refusal = admits(1, &run, &zen1).unwrap_err();
        assert_eq!(refusal, Refusal::MissingFlags("bmi2".parse().unwrap()));
        assert_eq!(refusal.to_string(), "the machine lacks bmi2");
        let old = Applicant {
            machine: None,
            ..haswell
        };
        let refusal = admits(1, &run, &old).unwrap_err();
        assert!(matches!(refusal, Refusal::NoMachine { .. }), "{refusal}");
        assert_eq!(
            admits(1, &spec(None, WorkerPolicy::default()), &old),
            Ok(())
        );
    }

    #[test]
    fn a_worker_must_run_a_build_of_every_engine() {
        let run = spec(Some(avx2_only()), WorkerPolicy::default());
        assert_eq!(
            admits(1, &run, &applicant("x86_64", "ssse3,sse41,popcnt,avx2")),
            Ok(())
        );
        let refusal = admits(1, &run, &applicant("x86_64", "ssse3,sse41,popcnt")).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "no build of engine 'pika' runs on the machine"
        );
        assert!(admits(1, &run, &applicant("aarch64", "neon,dotprod")).is_err());
        assert!(
            admits(1, &run, &Applicant::default()).is_err(),
            "no machine"
        );
        let with_untagged = EngineRef {
            sha256: "b".repeat(64),
            size: 2,
            ..avx2_only()
        };
        let run = spec(Some(with_untagged), WorkerPolicy::default());
        assert_eq!(admits(1, &run, &Applicant::default()), Ok(()));
    }

    #[test]
    fn refusal_admits_workers_not_yet_measured_or_at_least_as_fast() {
        let policy = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1000 }),
            ..WorkerPolicy::default()
        };
        let run = spec(None, policy);
        let at = |nps: Option<u64>| Applicant {
            measured: nps.map(|n| (1, n)).into_iter().collect(),
            ..Applicant::default()
        };
        assert_eq!(admits(1, &run, &at(Some(1000))), Ok(()));
        let refusal = admits(1, &run, &at(Some(999))).unwrap_err();
        assert_eq!(
            refusal,
            Refusal::TooSlow {
                min_nps: 1000,
                nps: 999
            }
        );
        assert!(
            refusal.to_string().contains("999 nodes per second"),
            "{refusal}"
        );
        assert_eq!(admits(1, &run, &at(None)), Ok(()), "measures on its lease");
        assert_eq!(
            admits(2, &run, &at(Some(999))),
            Ok(()),
            "another run's speed"
        );
        assert_eq!(
            admits(1, &spec(None, WorkerPolicy::default()), &at(Some(1))),
            Ok(())
        );
    }

    #[test]
    fn a_game_must_fit_the_workers_cores_and_memory() {
        let mut run = spec(Some(avx2_only()), WorkerPolicy::default());
        run.settings.threads = 2;
        let machine = |cores, memory_mib| Applicant {
            threads: cores,
            machine: Some(Machine {
                cores,
                memory_mib,
                ..applicant("x86_64", "ssse3,sse41,popcnt,avx2")
                    .machine
                    .unwrap()
            }),
            ..Applicant::default()
        };
        assert_eq!(admits(1, &run, &machine(2, 4096)), Ok(()));
        let refusal = admits(1, &run, &machine(1, 4096)).unwrap_err();
        assert!(
            refusal.to_string().contains("one game needs 2 cores"),
            "{refusal}"
        );
        run.settings.hash_mb = 2048;
        let refusal = admits(1, &run, &machine(2, 4096)).unwrap_err();
        assert!(
            refusal.to_string().contains("one game needs 4224 MiB"),
            "{refusal}"
        );
        assert_eq!(admits(1, &run, &machine(2, 8192)), Ok(()));
    }
}
