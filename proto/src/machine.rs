//! A worker's machine as it reports it at registration: the CPU's model, its
//! instruction-set flags under normalised names ([`Flag`], a set of them
//! [`Flags`]), the instruction-set architecture the worker was built for,
//! its cores and memory. From the flags follow its x86-64 level
//! ([`X86Level`]) and, by the one table of [`crate::arch`], the engine
//! builds it runs (`Machine::runs`, `Machine::best_arch`).
//!
//! The flags are a small closed vocabulary: what the ARCH values of engine
//! builds and the x86-64 levels need, each a name the kernel's
//! `/proc/cpuinfo` spelling maps to (the worker's `machine` module does
//! that). A composite flag stands for several of the kernel's: `avx512` is
//! AVX-512 F and BW (what Stockfish's and Pikafish's `x86-64-avx512` builds
//! use), `avx512icl` Ice Lake's AVX-512 extensions.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The instruction-set architecture name of an x86-64 machine, as Rust's
/// `std::env::consts::ARCH` gives it.
pub const ISA_X86_64: &str = "x86_64";
/// The instruction-set architecture name of a 64-bit ARM machine.
pub const ISA_AARCH64: &str = "aarch64";

/// Most flag names a machine may report.
pub const MAX_FLAGS: usize = 64;
/// Longest flag name, in bytes.
pub const MAX_FLAG_BYTES: usize = 32;
/// Longest CPU model name, in bytes.
pub const MAX_CPU_MODEL_BYTES: usize = 128;
/// Longest instruction-set architecture name, in bytes.
pub const MAX_ISA_BYTES: usize = 16;

/// An instruction-set feature, by its normalised name ([`Flag::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flag {
    /// SSE3 (the kernel's `pni`).
    Sse3,
    Ssse3,
    /// SSE4.1 (`sse4_1`).
    Sse41,
    /// SSE4.2 (`sse4_2`).
    Sse42,
    Popcnt,
    Avx,
    Avx2,
    Bmi1,
    /// BMI2, whose `pext` the `x86-64-bmi2` builds use.
    Bmi2,
    Fma,
    /// AVX-512 Foundation and Byte/Word (`avx512f` and `avx512bw`).
    Avx512,
    /// AVX512-VNNI (`avx512_vnni`), what `x86-64-vnni512` builds need.
    Vnni,
    /// AVX-VNNI, the VEX form (`avx_vnni`), what `x86-64-avxvnni` builds need.
    AvxVnni,
    /// Ice Lake's AVX-512: VL, DQ, CD, IFMA, VBMI, VBMI2, VNNI, BITALG,
    /// VPOPCNTDQ, GFNI, VAES and VPCLMULQDQ, all of them.
    Avx512Icl,
    /// ARM Advanced SIMD (the kernel's `asimd`).
    Neon,
    /// ARM dot product (`asimddp`).
    Dotprod,
}

impl Flag {
    /// Every flag, in the order a set lists them.
    pub const ALL: [Flag; 16] = [
        Flag::Sse3,
        Flag::Ssse3,
        Flag::Sse41,
        Flag::Sse42,
        Flag::Popcnt,
        Flag::Avx,
        Flag::Avx2,
        Flag::Bmi1,
        Flag::Bmi2,
        Flag::Fma,
        Flag::Avx512,
        Flag::Vnni,
        Flag::AvxVnni,
        Flag::Avx512Icl,
        Flag::Neon,
        Flag::Dotprod,
    ];

    /// The normalised name: lowercase, e.g. `sse41`, `avx512`, `dotprod`.
    pub const fn name(self) -> &'static str {
        match self {
            Flag::Sse3 => "sse3",
            Flag::Ssse3 => "ssse3",
            Flag::Sse41 => "sse41",
            Flag::Sse42 => "sse42",
            Flag::Popcnt => "popcnt",
            Flag::Avx => "avx",
            Flag::Avx2 => "avx2",
            Flag::Bmi1 => "bmi1",
            Flag::Bmi2 => "bmi2",
            Flag::Fma => "fma",
            Flag::Avx512 => "avx512",
            Flag::Vnni => "vnni",
            Flag::AvxVnni => "avxvnni",
            Flag::Avx512Icl => "avx512icl",
            Flag::Neon => "neon",
            Flag::Dotprod => "dotprod",
        }
    }

    /// The flag named `name` ([`Flag::name`]), or `None`.
    pub fn parse(name: &str) -> Option<Flag> {
        Flag::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The instruction-set architecture whose machines have it.
    pub fn isa(self) -> &'static str {
        match self {
            Flag::Neon | Flag::Dotprod => ISA_AARCH64,
            _ => ISA_X86_64,
        }
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A flag name that is not one of [`Flag::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown CPU flag {}: the flags are {}", crate::quote(.0), known_flags())]
pub struct UnknownFlag(pub String);

/// The flag names, comma-separated, for messages and help.
pub fn known_flags() -> String {
    Flags::of(&Flag::ALL).to_string()
}

/// A set of [`Flag`]s. Written as its names in [`Flag::ALL`]'s order,
/// comma-separated (`popcnt,avx2,bmi2`), and stored as a JSON list of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u32);

impl Flags {
    /// No flag.
    pub const EMPTY: Flags = Flags(0);

    /// The set of `list`.
    pub const fn of(list: &[Flag]) -> Flags {
        let mut bits = 0;
        let mut i = 0;
        while i < list.len() {
            bits |= list[i].bit();
            i += 1;
        }
        Flags(bits)
    }

    /// The union of two sets.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    pub fn contains(self, flag: Flag) -> bool {
        self.0 & flag.bit() != 0
    }

    pub fn insert(&mut self, flag: Flag) {
        self.0 |= flag.bit();
    }

    /// Whether every flag of `other` is in this set.
    pub fn is_superset(self, other: Flags) -> bool {
        other.0 & !self.0 == 0
    }

    /// The flags of this set that `other` lacks.
    pub fn without(self, other: Flags) -> Flags {
        Flags(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The flags in [`Flag::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Flag> {
        Flag::ALL.into_iter().filter(move |f| self.contains(*f))
    }

    /// The set of `names`, each a [`Flag::name`]; the first unknown one is
    /// the error.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Flags, UnknownFlag> {
        names
            .into_iter()
            .map(|n| Flag::parse(n).ok_or_else(|| UnknownFlag(n.to_owned())))
            .collect()
    }

    /// A comma-separated list of flag names (`popcnt,avx2`; spaces around
    /// names are ignored, an empty text is the empty set).
    pub fn parse_list(text: &str) -> Result<Flags, UnknownFlag> {
        Flags::from_names(text.split(',').map(str::trim).filter(|n| !n.is_empty()))
    }
}

impl FromIterator<Flag> for Flags {
    fn from_iter<I: IntoIterator<Item = Flag>>(iter: I) -> Flags {
        let mut set = Flags::EMPTY;
        for f in iter {
            set.insert(f);
        }
        set
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, flag) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(flag.name())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Flags({self})")
    }
}

impl std::str::FromStr for Flags {
    type Err = UnknownFlag;

    fn from_str(s: &str) -> Result<Flags, UnknownFlag> {
        Flags::parse_list(s)
    }
}

impl Serialize for Flags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Flag::name))
    }
}

impl<'de> Deserialize<'de> for Flags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flags, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        Flags::from_names(names.iter().map(String::as_str)).map_err(serde::de::Error::custom)
    }
}

/// An x86-64 microarchitecture level of the psABI. A level is judged by the
/// flags of this vocabulary: v2 by SSE3, SSSE3, SSE4.1, SSE4.2 and POPCNT;
/// v3 also by AVX, AVX2, BMI1, BMI2 and FMA; v4 also by AVX-512 F and BW.
/// (The smaller features the psABI lists beside them, such as CX16, LZCNT,
/// MOVBE or AVX-512 CD, DQ and VL, come with those on every CPU made.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum X86Level {
    V1,
    V2,
    V3,
    V4,
}

impl X86Level {
    /// Lowest first.
    pub const ALL: [X86Level; 4] = [X86Level::V1, X86Level::V2, X86Level::V3, X86Level::V4];

    /// `x86-64-v1` … `x86-64-v4`.
    pub fn name(self) -> &'static str {
        match self {
            X86Level::V1 => "x86-64-v1",
            X86Level::V2 => "x86-64-v2",
            X86Level::V3 => "x86-64-v3",
            X86Level::V4 => "x86-64-v4",
        }
    }

    /// The flags the level needs (each level's include the lower ones').
    pub fn needs(self) -> Flags {
        const V2: Flags = Flags::of(&[
            Flag::Sse3,
            Flag::Ssse3,
            Flag::Sse41,
            Flag::Sse42,
            Flag::Popcnt,
        ]);
        const V3: Flags = V2.with(Flags::of(&[
            Flag::Avx,
            Flag::Avx2,
            Flag::Bmi1,
            Flag::Bmi2,
            Flag::Fma,
        ]));
        match self {
            X86Level::V1 => Flags::EMPTY,
            X86Level::V2 => V2,
            X86Level::V3 => V3,
            X86Level::V4 => V3.with(Flags::of(&[Flag::Avx512])),
        }
    }

    /// The highest level whose flags `flags` has.
    pub fn of(flags: Flags) -> X86Level {
        X86Level::ALL
            .into_iter()
            .rev()
            .find(|l| flags.is_superset(l.needs()))
            .unwrap_or(X86Level::V1)
    }
}

impl fmt::Display for X86Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A worker's machine.
///
/// Invariants (checked on the wire, [`Machine::validate`]): `cpu_model` is
/// at most [`MAX_CPU_MODEL_BYTES`] bytes without control characters (empty:
/// unknown); `isa` is 1 to [`MAX_ISA_BYTES`] bytes of `[a-z0-9_]`; `cores`
/// is at least 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU's model name, e.g. `Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz`.
    pub cpu_model: String,
    /// The instruction-set architecture the worker was built for, as Rust's
    /// `std::env::consts::ARCH` names it: [`ISA_X86_64`], [`ISA_AARCH64`], …
    pub isa: String,
    /// Its instruction-set flags.
    pub flags: Flags,
    /// Logical CPUs available to the worker process.
    pub cores: u32,
    /// Physical memory, MiB; 0 when unknown.
    pub memory_mib: u64,
}

impl Machine {
    /// The x86-64 level of an x86-64 machine; `None` for another ISA.
    pub fn x86_level(&self) -> Option<X86Level> {
        (self.isa == ISA_X86_64).then(|| X86Level::of(self.flags))
    }
}

/// Hex digits of a machine id (`RegisterRequest.machine_id`): 128 random
/// bits.
pub const MACHINE_ID_DIGITS: usize = 32;

/// Whether `text` is a machine id: [`MACHINE_ID_DIGITS`] lowercase hex
/// digits.
pub fn is_machine_id(text: &str) -> bool {
    text.len() == MACHINE_ID_DIGITS
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_ids_are_32_lowercase_hex_digits() {
        assert!(is_machine_id(&"0a".repeat(16)));
        for bad in [
            "",
            "0a",
            &"0A".repeat(16),
            &"0a".repeat(17),
            &"g0".repeat(16),
        ] {
            assert!(!is_machine_id(bad), "{bad}");
        }
    }

    #[test]
    fn every_flag_name_reads_back_and_the_names_are_distinct() {
        for f in Flag::ALL {
            assert_eq!(Flag::parse(f.name()), Some(f));
        }
        let all = Flags::of(&Flag::ALL);
        assert_eq!(all.len(), Flag::ALL.len());
        assert_eq!(all.to_string().parse::<Flags>(), Ok(all));
    }

    #[test]
    fn lists_parse_in_any_order_and_print_in_one() {
        let set = Flags::parse_list(" bmi2, popcnt ,avx2,").unwrap();
        assert_eq!(set.to_string(), "popcnt,avx2,bmi2");
        assert_eq!(Flags::parse_list("").unwrap(), Flags::EMPTY);
        let err = Flags::parse_list("popcnt,avx-512").unwrap_err();
        assert_eq!(err, UnknownFlag("avx-512".to_owned()));
        assert!(err.to_string().contains("\"avx-512\""), "{err}");
        assert!(err.to_string().contains("avx512icl"), "{err}");
    }

    #[test]
    fn sets_are_stored_as_lists_of_names() {
        let set = Flags::of(&[Flag::Neon, Flag::Dotprod]);
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, r#"["neon","dotprod"]"#);
        assert_eq!(serde_json::from_str::<Flags>(&json).unwrap(), set);
        assert!(serde_json::from_str::<Flags>(r#"["sve"]"#).is_err());
    }

    #[test]
    fn levels_follow_the_flags() {
        let v2 = X86Level::V2.needs();
        assert_eq!(X86Level::of(Flags::EMPTY), X86Level::V1);
        assert_eq!(X86Level::of(v2), X86Level::V2);
        assert_eq!(
            X86Level::of(v2.without(Flags::of(&[Flag::Sse42]))),
            X86Level::V1
        );
        assert_eq!(X86Level::of(X86Level::V4.needs()), X86Level::V4);
        let no_fma = X86Level::V4.needs().without(Flags::of(&[Flag::Fma]));
        assert_eq!(X86Level::of(no_fma), X86Level::V2, "v4 needs v3");
        for pair in X86Level::ALL.windows(2) {
            assert!(pair[1].needs().is_superset(pair[0].needs()));
        }
    }
}
