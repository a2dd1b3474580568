//! Whether a worker may take a run's leases: what the run's
//! [`WorkerPolicy`] asks (a speed, instruction-set flags) and whether the
//! worker's machine runs a build of each engine the run plays
//! ([`xq_proto::EngineRef::binary_for`], the choice the worker itself
//! makes), and whether it has the tools to build the run's source engines
//! ([`super::sources`]). Pure: the scheduler reads the worker once per request
//! ([`Applicant`]) and asks of each candidate run.

use std::collections::BTreeSet;
use std::fmt;

use xq_proto::{Flags, Machine};

use super::RunSpec;
use super::policy::SpeedRule;

/// What admission knows of a worker, as it registered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applicant {
    /// Its bench nodes per second; `None`: not measured.
    pub bench_nps: Option<u64>,
    /// Its machine; `None`: a worker that reported none.
    pub machine: Option<Machine>,
    /// The build tools it reported (none: it builds no source engine).
    pub tools: BTreeSet<String>,
}

/// Why a worker gets no lease of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Slower than the run's `refuse_below_nps`, or not measured.
    TooSlow { min_nps: u64, nps: Option<u64> },
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
            Refusal::TooSlow { min_nps, nps } => match nps {
                Some(n) => write!(f, "{n} nodes per second is below the run's {min_nps}"),
                None => write!(
                    f,
                    "no measured speed, the run needs {min_nps} nodes per second"
                ),
            },
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

/// `Ok` when `who` may play a lease of the run `spec` describes, else the
/// first reason why not.
pub fn admits(spec: &RunSpec, who: &Applicant) -> Result<(), Refusal> {
    let policy = &spec.workers;
    if let Some(SpeedRule::RefuseBelow { min_nps }) = policy.speed
        && who.bench_nps.is_none_or(|n| n < min_nps)
    {
        return Err(Refusal::TooSlow {
            min_nps,
            nps: who.bench_nps,
        });
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
            bench_nps: Some(1_000_000),
            machine: Some(Machine {
                cpu_model: String::new(),
                isa: isa.to_owned(),
                flags: flags.parse().unwrap(),
                cores: 4,
                memory_mib: 8192,
            }),
            tools: BTreeSet::new(),
        }
    }

    fn avx2_only() -> EngineRef {
        EngineRef {
            name: "pika".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: Some(1),
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
        assert_eq!(admits(&run, &haswell), Ok(()));
        let zen1 = applicant("x86_64", "ssse3,sse41,popcnt,avx2");
        let refusal = admits(&run, &zen1).unwrap_err();
        assert_eq!(refusal, Refusal::MissingFlags("bmi2".parse().unwrap()));
        assert_eq!(refusal.to_string(), "the machine lacks bmi2");
        let old = Applicant {
            machine: None,
            ..haswell
        };
        let refusal = admits(&run, &old).unwrap_err();
        assert!(matches!(refusal, Refusal::NoMachine { .. }), "{refusal}");
        assert_eq!(admits(&spec(None, WorkerPolicy::default()), &old), Ok(()));
    }

    #[test]
    fn a_worker_must_run_a_build_of_every_engine() {
        let run = spec(Some(avx2_only()), WorkerPolicy::default());
        assert_eq!(
            admits(&run, &applicant("x86_64", "ssse3,sse41,popcnt,avx2")),
            Ok(())
        );
        let refusal = admits(&run, &applicant("x86_64", "ssse3,sse41,popcnt")).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "no build of engine 'pika' runs on the machine"
        );
        assert!(admits(&run, &applicant("aarch64", "neon,dotprod")).is_err());
        assert!(admits(&run, &Applicant::default()).is_err(), "no machine");
        let with_untagged = EngineRef {
            sha256: "b".repeat(64),
            size: 2,
            ..avx2_only()
        };
        let run = spec(Some(with_untagged), WorkerPolicy::default());
        assert_eq!(admits(&run, &Applicant::default()), Ok(()));
    }

    #[test]
    fn refusal_admits_only_measured_workers_at_least_as_fast() {
        let policy = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1000 }),
            ..WorkerPolicy::default()
        };
        let run = spec(None, policy);
        let at = |nps| Applicant {
            bench_nps: nps,
            ..Applicant::default()
        };
        assert_eq!(admits(&run, &at(Some(1000))), Ok(()));
        assert_eq!(
            admits(&run, &at(Some(999))),
            Err(Refusal::TooSlow {
                min_nps: 1000,
                nps: Some(999)
            })
        );
        assert!(admits(&run, &at(None)).is_err());
        assert_eq!(
            admits(&spec(None, WorkerPolicy::default()), &at(None)),
            Ok(())
        );
    }
}
