//! What a run asks of its workers: whether flagged workers are excluded
//! ([`super::exclusion`]), for timed runs how a worker's measured speed with
//! the run's base engine bears on its leases (the worker measures it with
//! that engine's own bench before its first lease, [`SpeedCheck`]), and the
//! instruction-set flags its machine must have. [`super::admission`]
//! applies it to a worker.

use serde::{Deserialize, Serialize};
use xq_proto::capacity::SpeedCheck;
use xq_proto::machine::MAX_FLAGS;
use xq_proto::{Flag, Flags, Invalid, Limit, pb};

use super::RunKind;

/// A run's rules for its workers; the default asks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerPolicy {
    /// Exclude workers that [`super::health`] flags: their results are set
    /// aside and the run recounted without them. Not for SPSA runs.
    #[serde(default)]
    pub exclude_flagged: bool,
    /// Timed runs: what a worker's speed changes.
    #[serde(default)]
    pub speed: Option<SpeedRule>,
    /// Flags a worker's machine must have (fishtest's arch filter); a
    /// worker that reported no machine has none. Left out of stored specs
    /// when empty, so specs stored before it still compare equal.
    #[serde(default, skip_serializing_if = "no_flags")]
    pub require_flags: Flags,
}

fn no_flags(flags: &Flags) -> bool {
    flags.is_empty()
}

/// How a timed run treats a worker's speed with the run's base engine (nodes
/// per second, one search thread, by that engine's own bench).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedRule {
    /// Scale the worker's time limits by `reference_nps / worker_nps`
    /// ([`xq_proto::capacity::time_factor`]), so every worker searches about
    /// as many nodes per move as a machine of `reference_nps` would
    /// (fishtest's time-control scaling). A worker whose measurement failed
    /// plays the limits as they are.
    Scale { reference_nps: u64 },
    /// Hand no work to a worker slower than `min_nps` (or whose measurement
    /// failed).
    RefuseBelow { min_nps: u64 },
}

impl WorkerPolicy {
    pub fn is_default(&self) -> bool {
        *self == WorkerPolicy::default()
    }

    /// Checks the policy against the run's kind and limit.
    pub fn check(&self, kind: RunKind, limit: Limit) -> Result<(), Invalid> {
        if self.exclude_flagged && kind == RunKind::Spsa {
            return Err(Invalid::new(
                "spec.workers.exclude_flagged",
                "SPSA runs cannot exclude workers: every applied result has already moved θ \
                 and cannot be taken back",
            ));
        }
        let isas: Vec<&str> = self.require_flags.iter().map(Flag::isa).collect();
        if isas.windows(2).any(|w| w[0] != w[1]) {
            return Err(Invalid::new(
                "spec.workers.require_flags",
                format!(
                    "{} are flags of different instruction-set architectures: no machine has them all",
                    self.require_flags
                ),
            ));
        }
        if self.speed.is_some() && !limit.is_timed() {
            return Err(Invalid::new(
                "spec.workers",
                format!(
                    "a speed rule needs a timed limit (movetime or tc); {limit} plays the same on \
                     every machine"
                ),
            ));
        }
        Ok(())
    }

    /// What the run's leases ask the worker to measure: its speed with
    /// player 1's engine (the base engine, or the opponent); `None` without
    /// a speed rule.
    pub fn speed_check(&self) -> Option<SpeedCheck> {
        let (reference_nps, min_nps) = match self.speed? {
            SpeedRule::Scale { reference_nps } => (reference_nps, 0),
            SpeedRule::RefuseBelow { min_nps } => (0, min_nps),
        };
        Some(SpeedCheck {
            player: 1,
            reference_nps,
            min_nps,
        })
    }
}

impl TryFrom<pb::WorkerPolicy> for WorkerPolicy {
    type Error = Invalid;

    fn try_from(p: pb::WorkerPolicy) -> Result<Self, Invalid> {
        let pb::WorkerPolicy {
            exclude_flagged,
            scale_to_nps,
            refuse_below_nps,
            require_flags,
        } = p;
        if require_flags.len() > MAX_FLAGS {
            return Err(Invalid::new(
                "spec.workers.require_flags",
                format!("{} names, at most {MAX_FLAGS}", require_flags.len()),
            ));
        }
        let require_flags = Flags::from_names(require_flags.iter().map(String::as_str))
            .map_err(|e| Invalid::new("spec.workers.require_flags", e))?;
        let speed = match (scale_to_nps, refuse_below_nps) {
            (0, 0) => None,
            (n, 0) => Some(SpeedRule::Scale { reference_nps: n }),
            (0, n) => Some(SpeedRule::RefuseBelow { min_nps: n }),
            _ => {
                return Err(Invalid::new(
                    "spec.workers",
                    "scale_to_nps and refuse_below_nps exclude each other",
                ));
            }
        };
        Ok(WorkerPolicy {
            exclude_flagged,
            speed,
            require_flags,
        })
    }
}

impl From<WorkerPolicy> for pb::WorkerPolicy {
    fn from(p: WorkerPolicy) -> Self {
        let (scale_to_nps, refuse_below_nps) = match p.speed {
            None => (0, 0),
            Some(SpeedRule::Scale { reference_nps }) => (reference_nps, 0),
            Some(SpeedRule::RefuseBelow { min_nps }) => (0, min_nps),
        };
        pb::WorkerPolicy {
            exclude_flagged: p.exclude_flagged,
            scale_to_nps,
            refuse_below_nps,
            require_flags: p
                .require_flags
                .iter()
                .map(|f| f.name().to_owned())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_proto::TimeControl;

    #[test]
    fn a_slower_worker_gets_more_time_and_a_faster_one_less() {
        let policy = WorkerPolicy {
            speed: Some(SpeedRule::Scale {
                reference_nps: 1_000_000,
            }),
            ..WorkerPolicy::default()
        };
        let check = policy.speed_check().unwrap();
        assert_eq!(check.player, 1, "the base engine is measured");
        let tc = Limit::Clock(TimeControl {
            base_ms: 10_000,
            inc_ms: 100,
            moves_to_go: None,
        });
        assert_eq!(
            tc.time_scaled(check.factor(500_000)),
            Limit::Clock(TimeControl {
                base_ms: 20_000,
                inc_ms: 200,
                moves_to_go: None
            })
        );
        assert_eq!(
            Limit::MoveTimeMs(100).time_scaled(check.factor(4_000_000)),
            Limit::MoveTimeMs(25)
        );
        assert_eq!(check.factor(0), 1.0, "not measured: as it is");
        assert_eq!(check.factor(1), 8.0, "clamped");
        assert!(!check.too_slow(1));
        let refuse = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1_000 }),
            ..WorkerPolicy::default()
        }
        .speed_check()
        .unwrap();
        assert_eq!(refuse.factor(10), 1.0, "refusing scales nothing");
        assert!(refuse.too_slow(999) && refuse.too_slow(0) && !refuse.too_slow(1_000));
        assert_eq!(WorkerPolicy::default().speed_check(), None);
    }

    #[test]
    fn spsa_exclusion_and_speed_rules_on_untimed_runs_are_refused_with_the_reason() {
        let exclude = WorkerPolicy {
            exclude_flagged: true,
            ..WorkerPolicy::default()
        };
        let err = exclude.check(RunKind::Spsa, Limit::Nodes(100)).unwrap_err();
        assert!(err.to_string().contains("cannot be taken back"), "{err}");
        exclude.check(RunKind::Sprt, Limit::Nodes(100)).unwrap();
        let speed = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1 }),
            ..WorkerPolicy::default()
        };
        let err = speed.check(RunKind::Games, Limit::Nodes(100)).unwrap_err();
        assert!(err.to_string().contains("timed limit"), "{err}");
        speed.check(RunKind::Games, Limit::MoveTimeMs(100)).unwrap();
        let both = pb::WorkerPolicy {
            exclude_flagged: false,
            scale_to_nps: 1,
            refuse_below_nps: 1,
            require_flags: Vec::new(),
        };
        assert!(WorkerPolicy::try_from(both).is_err());
    }

    #[test]
    fn required_flags_are_known_names_of_one_isa_and_round_trip() {
        let wire = |names: &[&str]| pb::WorkerPolicy {
            require_flags: names.iter().map(|n| (*n).to_owned()).collect(),
            ..pb::WorkerPolicy::default()
        };
        let policy = WorkerPolicy::try_from(wire(&["bmi2", "avx2"])).unwrap();
        assert_eq!(policy.require_flags.to_string(), "avx2,bmi2");
        assert_eq!(pb::WorkerPolicy::from(policy), wire(&["avx2", "bmi2"]));
        policy.check(RunKind::Sprt, Limit::Nodes(100)).unwrap();
        let err = WorkerPolicy::try_from(wire(&["avx2", "avx-512"])).unwrap_err();
        assert_eq!(err.field, "spec.workers.require_flags");
        assert!(err.reason.contains("\"avx-512\""), "{}", err.reason);
        let err = WorkerPolicy::try_from(wire(&["avx2"; 65])).unwrap_err();
        assert!(err.reason.contains("65 names"), "{}", err.reason);
        let mixed = WorkerPolicy::try_from(wire(&["avx2", "dotprod"])).unwrap();
        let err = mixed.check(RunKind::Games, Limit::Nodes(100)).unwrap_err();
        assert!(err.to_string().contains("no machine has them all"), "{err}");
        let json = serde_json::to_string(&WorkerPolicy::default()).unwrap();
        assert!(!json.contains("require_flags"), "{json}");
        let stored = serde_json::to_string(&policy).unwrap();
        assert!(
            stored.contains(r#""require_flags":["avx2","bmi2"]"#),
            "{stored}"
        );
        assert_eq!(
            serde_json::from_str::<WorkerPolicy>(&stored).unwrap(),
            policy
        );
    }
}
