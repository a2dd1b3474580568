//! Which of an engine's executables a machine takes
//! ([`EngineRef::binary_for`]): the best of its builds for instruction sets
//! ([`crate::work::EngineBinary`], each tagged with the ARCH value it
//! needs), else its untagged one. The pure choice both the scheduler (whether
//! a worker can play a run at all) and the worker (what it downloads) make.
//!
//! An [`EngineRef`] names its untagged executable in `sha256` and `size`
//! (empty when the engine has only tagged builds) and its tagged builds in
//! `binaries`. All of them are builds of one engine: one protocol, one set
//! of options, one bench signature.

use crate::arch::Arch;
use crate::machine::Machine;
use crate::work::{EngineRef, PlayerSpec};

/// The executable a machine takes for an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chosen<'a> {
    /// The build's ARCH value; `None`: the untagged executable.
    pub arch: Option<Arch>,
    pub sha256: &'a str,
    pub size: u64,
}

impl EngineRef {
    /// Whether the engine has an untagged executable, which any machine may
    /// take.
    pub fn has_untagged(&self) -> bool {
        !self.sha256.is_empty()
    }

    /// The executable `machine` takes: the highest-ranked tagged build it
    /// runs ([`Machine::runs`]), else the untagged one. A worker that
    /// reported no machine (`None`) takes only the untagged one. `None` when
    /// nothing fits: such a machine cannot play the engine.
    pub fn binary_for(&self, machine: Option<&Machine>) -> Option<Chosen<'_>> {
        let tagged = machine.and_then(|m| {
            self.binaries
                .iter()
                .filter(|b| m.runs(b.arch))
                .max_by_key(|b| b.arch.rank())
        });
        match tagged {
            Some(b) => Some(Chosen {
                arch: Some(b.arch),
                sha256: &b.sha256,
                size: b.size,
            }),
            None if self.has_untagged() => Some(Chosen {
                arch: None,
                sha256: &self.sha256,
                size: self.size,
            }),
            None => None,
        }
    }

    /// The engine as `machine` plays it: the executable of
    /// [`EngineRef::binary_for`] as its one, untagged, executable, and the
    /// ARCH value chosen. `None` when nothing fits.
    pub fn resolved_for(&self, machine: Option<&Machine>) -> Option<(Option<Arch>, EngineRef)> {
        let chosen = self.binary_for(machine)?;
        let engine = EngineRef {
            sha256: chosen.sha256.to_owned(),
            size: chosen.size,
            binaries: Vec::new(),
            ..self.clone()
        };
        Some((chosen.arch, engine))
    }
}

/// The ARCH value of the build each of `players`' engines takes on
/// `machine` ([`EngineRef::binary_for`], the worker's own choice); `None`
/// for a player that plays no tagged build: the built-in engine, an engine
/// without tagged builds, one built from source on the worker, or the
/// untagged executable.
pub fn builds_for(players: &[PlayerSpec; 2], machine: Option<&Machine>) -> [Option<Arch>; 2] {
    players.each_ref().map(|p| {
        p.engine
            .as_ref()
            .filter(|e| !e.binaries.is_empty() && e.source.is_none())
            .and_then(|e| e.binary_for(machine))
            .and_then(|chosen| chosen.arch)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::machine::{Flag, Flags, ISA_AARCH64, ISA_X86_64};
    use crate::work::{EngineBinary, Protocol};

    fn sha(n: usize) -> String {
        format!("{n:064x}")
    }

    fn engine(untagged: bool, arches: &[Arch]) -> EngineRef {
        EngineRef {
            name: "pikafish".to_owned(),
            sha256: if untagged { sha(99) } else { String::new() },
            size: if untagged { 99 } else { 0 },
            signature: Some(crate::Signature::Bench(1234)),
            protocol: Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            source: None,
            binaries: arches
                .iter()
                .map(|&arch| EngineBinary {
                    arch,
                    sha256: sha(arch as usize),
                    size: arch as u64 + 1,
                })
                .collect(),
        }
    }

    fn machine(isa: &str, flags: &str) -> Machine {
        Machine {
            cpu_model: String::new(),
            isa: isa.to_owned(),
            flags: flags.parse().unwrap(),
            cores: 2,
            memory_mib: 1024,
        }
    }

    #[test]
    fn a_machine_takes_its_best_build_and_falls_back_to_the_untagged_one() {
        let e = engine(
            true,
            &[Arch::X86_64Avx2, Arch::X86_64Vnni512, Arch::X86_64Bmi2],
        );
        let haswell = machine(ISA_X86_64, "ssse3,sse41,popcnt,avx2,bmi2");
        assert_eq!(
            e.binary_for(Some(&haswell)).unwrap().arch,
            Some(Arch::X86_64Bmi2)
        );
        let nehalem = machine(ISA_X86_64, "ssse3,sse41,sse42,popcnt");
        let chosen = e.binary_for(Some(&nehalem)).unwrap();
        assert_eq!((chosen.arch, chosen.sha256), (None, sha(99).as_str()));
        assert_eq!(e.binary_for(None).unwrap().arch, None, "an old worker");
        let arm = machine(ISA_AARCH64, "neon,dotprod");
        assert_eq!(e.binary_for(Some(&arm)).unwrap().arch, None);
    }

    #[test]
    fn without_an_untagged_build_a_machine_that_runs_none_gets_nothing() {
        let e = engine(false, &[Arch::X86_64Avx2, Arch::Armv8Dotprod]);
        let old = machine(ISA_X86_64, "popcnt,sse41,ssse3");
        assert_eq!(e.binary_for(Some(&old)), None);
        assert_eq!(e.binary_for(None), None);
        let arm = machine(ISA_AARCH64, "neon,dotprod");
        let (arch, played) = e.resolved_for(Some(&arm)).unwrap();
        assert_eq!(arch, Some(Arch::Armv8Dotprod));
        assert_eq!(played.sha256, sha(Arch::Armv8Dotprod as usize));
        assert_eq!(played.size, Arch::Armv8Dotprod as u64 + 1);
        assert!(played.binaries.is_empty());
        assert_eq!(
            (played.name, played.signature),
            ("pikafish".to_owned(), Some(crate::Signature::Bench(1234)))
        );
    }

    fn any_flags() -> impl Strategy<Value = Flags> {
        proptest::collection::vec(proptest::sample::select(Flag::ALL.to_vec()), 0..10)
            .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        /// The chosen build runs on the machine, and no build it runs ranks
        /// higher; nothing is chosen only when no build fits.
        #[test]
        fn the_choice_runs_and_nothing_runnable_ranks_higher(
            flags in any_flags(),
            arm in any::<bool>(),
            untagged in any::<bool>(),
            picks in proptest::sample::subsequence(Arch::ALL.to_vec(), 0..=Arch::ALL.len()),
        ) {
            let m = Machine { flags, ..machine(if arm { ISA_AARCH64 } else { ISA_X86_64 }, "") };
            let e = engine(untagged, &picks);
            let runnable: Vec<Arch> = picks.iter().copied().filter(|a| m.runs(*a)).collect();
            match e.binary_for(Some(&m)) {
                Some(Chosen { arch: Some(a), .. }) => {
                    prop_assert!(m.flags.is_superset(a.needs()));
                    prop_assert_eq!(a.isa(), m.isa.as_str());
                    prop_assert!(runnable.iter().all(|r| r.rank() <= a.rank()));
                }
                Some(Chosen { arch: None, .. }) => {
                    prop_assert!(untagged);
                    prop_assert!(runnable.is_empty());
                }
                None => prop_assert!(!untagged && runnable.is_empty()),
            }
        }
    }
}
