//! The ARCH values engine builds are tagged with, in the vocabulary of
//! Stockfish's and Pikafish's Makefiles (`make build ARCH=x86-64-avx2`):
//! the one table of each value's instruction-set architecture, the flags its
//! builds need and its rank; and which of them a [`Machine`] runs.
//!
//! The flags each needs are the Makefiles' (`x86-64-avx512` also enables
//! `avx2` and `pext`, so it needs `bmi2`; `x86-64-vnni512` needs AVX512-VNNI
//! on top of it). A higher rank is a faster build; ranks compare values of
//! one instruction-set architecture only. The order follows Stockfish's
//! `get_native_properties.sh`, which picks the first value a CPU runs; it
//! prefers `x86-64-avx2` over `x86-64-bmi2` on AMD CPUs before Zen 3, whose
//! `pext` is slow, which this table does not model.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::machine::{Flag, Flags, ISA_AARCH64, ISA_X86_64, Machine};

/// An ARCH value ([`Arch::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    X86_64Avx512Icl,
    X86_64Vnni512,
    X86_64Avx512,
    X86_64AvxVnni,
    X86_64Bmi2,
    X86_64Avx2,
    X86_64Sse41Popcnt,
    X86_64Ssse3,
    X86_64Sse3Popcnt,
    X86_64,
    Armv8Dotprod,
    Armv8,
}

/// One row of the table.
struct Row {
    arch: Arch,
    name: &'static str,
    isa: &'static str,
    needs: Flags,
    rank: u8,
}

const SSE41_POPCNT: Flags = Flags::of(&[Flag::Ssse3, Flag::Sse41, Flag::Popcnt]);
const AVX2: Flags = SSE41_POPCNT.with(Flags::of(&[Flag::Avx2]));
const BMI2: Flags = AVX2.with(Flags::of(&[Flag::Bmi2]));
const AVX512: Flags = BMI2.with(Flags::of(&[Flag::Avx512]));
const VNNI512: Flags = AVX512.with(Flags::of(&[Flag::Vnni]));
const NEON: Flags = Flags::of(&[Flag::Neon]);

/// The table: one row per [`Arch`] value, best first within each
/// instruction-set architecture.
const TABLE: [Row; 12] = [
    Row {
        arch: Arch::X86_64Avx512Icl,
        name: "x86-64-avx512icl",
        isa: ISA_X86_64,
        needs: VNNI512.with(Flags::of(&[Flag::Avx512Icl])),
        rank: 10,
    },
    Row {
        arch: Arch::X86_64Vnni512,
        name: "x86-64-vnni512",
        isa: ISA_X86_64,
        needs: VNNI512,
        rank: 9,
    },
    Row {
        arch: Arch::X86_64Avx512,
        name: "x86-64-avx512",
        isa: ISA_X86_64,
        needs: AVX512,
        rank: 8,
    },
    Row {
        arch: Arch::X86_64AvxVnni,
        name: "x86-64-avxvnni",
        isa: ISA_X86_64,
        needs: BMI2.with(Flags::of(&[Flag::AvxVnni])),
        rank: 7,
    },
    Row {
        arch: Arch::X86_64Bmi2,
        name: "x86-64-bmi2",
        isa: ISA_X86_64,
        needs: BMI2,
        rank: 6,
    },
    Row {
        arch: Arch::X86_64Avx2,
        name: "x86-64-avx2",
        isa: ISA_X86_64,
        needs: AVX2,
        rank: 5,
    },
    Row {
        arch: Arch::X86_64Sse41Popcnt,
        name: "x86-64-sse41-popcnt",
        isa: ISA_X86_64,
        needs: SSE41_POPCNT,
        rank: 4,
    },
    Row {
        arch: Arch::X86_64Ssse3,
        name: "x86-64-ssse3",
        isa: ISA_X86_64,
        needs: Flags::of(&[Flag::Ssse3]),
        rank: 3,
    },
    Row {
        arch: Arch::X86_64Sse3Popcnt,
        name: "x86-64-sse3-popcnt",
        isa: ISA_X86_64,
        needs: Flags::of(&[Flag::Sse3, Flag::Popcnt]),
        rank: 2,
    },
    Row {
        arch: Arch::X86_64,
        name: "x86-64",
        isa: ISA_X86_64,
        needs: Flags::EMPTY,
        rank: 1,
    },
    Row {
        arch: Arch::Armv8Dotprod,
        name: "armv8-dotprod",
        isa: ISA_AARCH64,
        needs: NEON.with(Flags::of(&[Flag::Dotprod])),
        rank: 2,
    },
    Row {
        arch: Arch::Armv8,
        name: "armv8",
        isa: ISA_AARCH64,
        needs: NEON,
        rank: 1,
    },
];

/// An ARCH name that is not in the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ARCH {}: the values are {}", crate::quote(.0), known_arches())]
pub struct UnknownArch(pub String);

/// The ARCH names, comma-separated, for messages and help.
pub fn known_arches() -> String {
    Arch::ALL.map(Arch::name).join(", ")
}

impl Arch {
    /// Every value, in the table's order.
    pub const ALL: [Arch; 12] = [
        Arch::X86_64Avx512Icl,
        Arch::X86_64Vnni512,
        Arch::X86_64Avx512,
        Arch::X86_64AvxVnni,
        Arch::X86_64Bmi2,
        Arch::X86_64Avx2,
        Arch::X86_64Sse41Popcnt,
        Arch::X86_64Ssse3,
        Arch::X86_64Sse3Popcnt,
        Arch::X86_64,
        Arch::Armv8Dotprod,
        Arch::Armv8,
    ];

    fn row(self) -> &'static Row {
        TABLE
            .iter()
            .find(|r| r.arch == self)
            .expect("every ARCH value has its row")
    }

    /// The Makefile's name, e.g. `x86-64-avx2` or `armv8-dotprod`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The instruction-set architecture its builds are for
    /// ([`crate::machine::Machine::isa`]'s names).
    pub fn isa(self) -> &'static str {
        self.row().isa
    }

    /// The flags a machine needs to run its builds.
    pub fn needs(self) -> Flags {
        self.row().needs
    }

    /// Its place among the values of its instruction-set architecture: a
    /// higher rank is a faster build, at least 1.
    pub fn rank(self) -> u8 {
        self.row().rank
    }

    /// The value named `name`.
    pub fn parse(name: &str) -> Result<Arch, UnknownArch> {
        Arch::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| UnknownArch(name.to_owned()))
    }
}

impl Machine {
    /// Whether a build for `arch` runs here: same ISA, and every flag it
    /// needs.
    pub fn runs(&self, arch: Arch) -> bool {
        arch.isa() == self.isa && self.flags.is_superset(arch.needs())
    }

    /// The highest-ranked ARCH value whose builds run here; `None` on an
    /// ISA the table does not know.
    pub fn best_arch(&self) -> Option<Arch> {
        Arch::ALL
            .into_iter()
            .filter(|a| self.runs(*a))
            .max_by_key(|a| a.rank())
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Arch {
    type Err = UnknownArch;

    fn from_str(s: &str) -> Result<Arch, UnknownArch> {
        Arch::parse(s)
    }
}

impl Serialize for Arch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Arch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Arch, D::Error> {
        let name = String::deserialize(d)?;
        Arch::parse(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_has_one_row_with_a_distinct_name_and_rank() {
        for (i, arch) in Arch::ALL.into_iter().enumerate() {
            assert_eq!(TABLE[i].arch, arch, "row {i} in the order of ALL");
            assert_eq!(Arch::parse(arch.name()), Ok(arch));
            assert!(arch.rank() >= 1);
        }
        for a in Arch::ALL {
            for b in Arch::ALL.into_iter().filter(|b| *b != a) {
                assert_ne!(a.name(), b.name());
                if a.isa() == b.isa() {
                    assert_ne!(a.rank(), b.rank(), "{a} and {b}");
                }
            }
        }
    }

    #[test]
    fn within_an_isa_the_table_is_best_first() {
        for pair in Arch::ALL.windows(2) {
            if pair[0].isa() == pair[1].isa() {
                assert!(pair[0].rank() > pair[1].rank(), "{pair:?}");
            }
        }
    }

    #[test]
    fn each_value_needs_what_its_makefile_enables() {
        let names = |a: Arch| a.needs().to_string();
        assert_eq!(names(Arch::X86_64), "");
        assert_eq!(names(Arch::X86_64Sse41Popcnt), "ssse3,sse41,popcnt");
        assert_eq!(names(Arch::X86_64Bmi2), "ssse3,sse41,popcnt,avx2,bmi2");
        assert_eq!(
            names(Arch::X86_64Vnni512),
            "ssse3,sse41,popcnt,avx2,bmi2,avx512,vnni"
        );
        assert_eq!(
            names(Arch::X86_64AvxVnni),
            "ssse3,sse41,popcnt,avx2,bmi2,avxvnni"
        );
        assert_eq!(names(Arch::Armv8Dotprod), "neon,dotprod");
        let err = Arch::parse("x86-64-modern").unwrap_err();
        assert!(err.to_string().contains("x86-64-sse41-popcnt"), "{err}");
        assert_eq!(
            serde_json::to_string(&Arch::Armv8).unwrap(),
            "\"armv8\"".to_owned()
        );
    }

    #[test]
    fn a_machine_runs_the_values_of_its_isa_whose_flags_it_has() {
        let arm = Machine {
            cpu_model: String::new(),
            isa: ISA_AARCH64.to_owned(),
            flags: Flags::of(&[Flag::Neon, Flag::Dotprod, Flag::Popcnt]),
            cores: 4,
            memory_mib: 0,
        };
        assert_eq!(arm.x86_level(), None);
        assert_eq!(arm.best_arch(), Some(Arch::Armv8Dotprod));
        assert!(!arm.runs(Arch::X86_64), "another ISA");
        let haswell = Machine {
            isa: ISA_X86_64.to_owned(),
            flags: "sse3,ssse3,sse41,sse42,popcnt,avx,avx2,bmi1,bmi2,fma"
                .parse()
                .unwrap(),
            ..arm.clone()
        };
        assert_eq!(haswell.best_arch(), Some(Arch::X86_64Bmi2));
        assert!(haswell.runs(Arch::X86_64Sse3Popcnt) && !haswell.runs(Arch::X86_64Avx512));
        let riscv = Machine {
            isa: "riscv64".to_owned(),
            ..arm
        };
        assert_eq!(riscv.best_arch(), None);
    }
}
