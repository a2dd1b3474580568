//! What a lease asks a worker to play: [`WorkSpec`] and its parts.
//!
//! Results are from the first player's view (`players[0]`). Pair `i` of a
//! lease (0-based) uses opening index `openings.offset + i`, played once with
//! each player as Red (with [`OpeningSlice::per_game`], game `k` of pair `i`
//! uses index `2·(offset + i) + k`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xq_engine::rules::RuleSet;

use crate::arch::Arch;
use crate::{Adjudication, EngineSource, Limit, OpeningSource, Signature};

/// The game pairs of one lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkSpec {
    /// `players[0]` is the first player, whose view every result takes.
    pub players: [PlayerSpec; 2],
    /// The rules every game is played under (on the wire and in JSON: its
    /// preset name, e.g. `"standard+conversion"`).
    #[serde(with = "crate::rule_set::preset")]
    pub rules: RuleSet,
    pub openings: OpeningSlice,
    /// Game pairs to play (2 games each); equals `openings.count`.
    pub pairs: u32,
    pub adjudication: Adjudication,
    /// Whether both engines value a draw by the rule set's scoring
    /// ([`xq_engine::SearchRules::scoring_aware`]).
    pub draw_contempt: bool,
}

/// One engine configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerSpec {
    /// Parameter overrides by name, in engine units; others keep defaults.
    pub params: BTreeMap<String, i64>,
    pub limit: Limit,
    /// Transposition table size, MiB; at least 1.
    pub hash_mb: u32,
    /// An external engine instead of the built-in one.
    pub engine: Option<EngineRef>,
    /// Search threads, 1..=[`crate::capacity::MAX_ENGINE_THREADS`]; the
    /// built-in engine searches on one.
    #[serde(default = "one_thread")]
    pub threads: u32,
}

fn one_thread() -> u32 {
    1
}

/// Which protocol an external engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    #[default]
    Uci,
    Ucci,
}

impl Protocol {
    /// `uci` or `ucci`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Uci => "uci",
            Protocol::Ucci => "ucci",
        }
    }

    /// The protocol called `name` (`uci` or `ucci`).
    pub fn parse(name: &str) -> Option<Protocol> {
        match name {
            "uci" => Some(Protocol::Uci),
            "ucci" => Some(Protocol::Ucci),
            _ => None,
        }
    }
}

/// How an external engine numbers ranks in coordinate moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Coords {
    /// Ranks 0–9 and FEN letters N/B (UCCI, ElephantEye, Pikafish, `xq-engine`).
    #[default]
    #[serde(rename = "0-9")]
    FromZero,
    /// Ranks 1–10 and FEN letters H/E (Fairy-Stockfish, Sjaak II).
    #[serde(rename = "1-10")]
    FromOne,
}

/// Why a dialect name was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown coordinate dialect '{0}': expected 0-9 (UCCI, ElephantEye, Pikafish) or 1-10 \
     (Fairy-Stockfish, Sjaak II)"
)]
pub struct CoordsError(String);

impl Coords {
    /// `0-9` or `1-10`.
    pub fn name(self) -> &'static str {
        match self {
            Coords::FromZero => "0-9",
            Coords::FromOne => "1-10",
        }
    }

    /// The other dialect.
    pub fn other(self) -> Coords {
        match self {
            Coords::FromZero => Coords::FromOne,
            Coords::FromOne => Coords::FromZero,
        }
    }
}

impl std::str::FromStr for Coords {
    type Err = CoordsError;

    fn from_str(s: &str) -> Result<Coords, CoordsError> {
        match s {
            "0-9" => Ok(Coords::FromZero),
            "1-10" => Ok(Coords::FromOne),
            _ => Err(CoordsError(s.to_string())),
        }
    }
}

impl std::fmt::Display for Coords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An external engine, as a lease names it: a registered executable, or a
/// source the worker builds.
///
/// Invariants (checked on the wire): `name` is 1 to 64 characters; exactly
/// one of a registered engine (an untagged executable, `sha256` 64 lowercase
/// hex digits, and/or up to [`MAX_BINARIES`] tagged builds of distinct ARCH
/// values) and a `source` is given; a source engine has an empty `sha256`,
/// `size` 0, no builds and a declared `signature` (or none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineRef {
    pub name: String,
    /// SHA-256 of the untagged executable, lowercase hex; empty for none
    /// (only tagged builds, or a source engine).
    pub sha256: String,
    /// Size of the untagged executable in bytes; 0 for none.
    pub size: u64,
    /// What a worker measures of its build before playing it, declared
    /// once ([`Signature`]: its bench's node count, with the assets its
    /// options name set, or a fixed search's); `None`: none, the engine is
    /// checked by its SHA-256 only.
    #[serde(default)]
    pub signature: Option<Signature>,
    pub protocol: Protocol,
    /// Options set after the handshake; a value `asset:<sha256>` names an
    /// asset of the registry, set as its cached copy's path.
    pub options: BTreeMap<String, String>,
    /// How it numbers ranks; `None` to detect it at the handshake.
    #[serde(default)]
    pub coords: Option<Coords>,
    /// Its builds tagged with the ARCH value each needs (`binary_for` says
    /// which one a machine takes). Left out
    /// of stored specs when empty, so that specs stored before them still
    /// compare equal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binaries: Vec<EngineBinary>,
    /// The commit a worker builds it from, instead of a registered
    /// executable. Left out of stored JSON when absent, so specs stored
    /// before it still compare equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EngineSource>,
}

impl EngineRef {
    /// The signature as `engine list` and the web view show it
    /// ([`Signature::text`]).
    pub fn signature_text(&self) -> String {
        Signature::text(self.signature)
    }

    /// The options that name an asset, as (option, asset SHA-256), by option name.
    pub fn asset_options(&self) -> impl Iterator<Item = (&str, &str)> {
        self.options
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), crate::blob::asset_sha256(v)?)))
    }
}

/// Most tagged builds of one engine: one per ARCH value.
pub const MAX_BINARIES: usize = Arch::ALL.len();

/// A build of an engine for the machines that run its ARCH value.
///
/// Invariant (checked on the wire): `sha256` is 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineBinary {
    pub arch: Arch,
    /// SHA-256 of the executable, lowercase hex.
    pub sha256: String,
    /// Size of the executable in bytes.
    pub size: u64,
}

/// Whether `s` is a SHA-256 in lowercase hex.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The openings of a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpeningSlice {
    pub source: OpeningSource,
    /// The run's opening seed; with the index it fixes every opening.
    pub seed: u64,
    /// Index of the first opening (pairs of the run handed out before).
    pub offset: u64,
    /// Openings in the slice (= pairs); at least 1.
    pub count: u64,
    /// Each game takes its own opening: game `k` of pair `i` uses index
    /// `2·(offset + i) + k` (variants runs, whose identical players would
    /// otherwise replay each opening's game move for move).
    pub per_game: bool,
}

/// The opening index of game `game` (0-based; pair `game / 2`) of a slice
/// starting at `offset`: `offset + game / 2`, or with `per_game`
/// `2·offset + game`.
pub fn opening_index(offset: u64, per_game: bool, game: u64) -> u64 {
    if per_game {
        offset.saturating_mul(2).saturating_add(game)
    } else {
        offset.saturating_add(game / 2)
    }
}

impl OpeningSlice {
    /// The opening index of the slice's game `game` ([`opening_index`]).
    pub fn index_of_game(&self, game: u64) -> u64 {
        opening_index(self.offset, self.per_game, game)
    }
}

impl WorkSpec {
    /// A small valid lease (two built-in players, 8 pairs), for tests and
    /// examples.
    pub fn example() -> WorkSpec {
        let player = |v| PlayerSpec {
            params: BTreeMap::from([("chariot_value".to_owned(), v)]),
            limit: Limit::Clock(crate::TimeControl {
                base_ms: 10_000,
                inc_ms: 100,
                moves_to_go: None,
            }),
            hash_mb: 16,
            threads: 1,
            engine: None,
        };
        WorkSpec {
            players: [player(900), player(880)],
            rules: RuleSet::STANDARD,
            openings: OpeningSlice {
                source: OpeningSource::Builtin { random_plies: 4 },
                seed: 7,
                offset: 16,
                count: 8,
                per_game: true,
            },
            pairs: 8,
            adjudication: Adjudication {
                max_plies: 300,
                ..Adjudication::OFF
            },
            draw_contempt: false,
        }
    }
}
