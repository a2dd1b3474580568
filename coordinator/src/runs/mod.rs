//! Runs as domain types: what a run is ([`RunSpec`]), where it stands
//! ([`RunStatus`]), and per kind ([`sprt`], [`spsa`], [`games`], [`variants`])
//! how a lease's players are chosen and how a counted result moves the run.
//!
//! Totals are always from the first player's view: the engine under test
//! (SPRT, games), θ+ (SPSA) or the engine with Red in a pair's first game
//! (variants, whose per-variant statistics are from Red's view).

pub mod games;
pub mod sprt;
pub mod spsa;
pub mod variants;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xq_proto::{Adjudication, EngineRef, Limit, OpeningSource, PlayerSpec, Totals};

use crate::spsa::{SpsaParamSpec, SpsaState};
use crate::stats::sprt::{SprtOutcome, SprtParams};
pub use variants::{VariantTotals, VariantsSpec};

/// Default game pairs per lease for SPRT and fixed-games runs.
pub const DEFAULT_BATCH_PAIRS: u32 = 8;
/// Default game pairs per SPSA lease (one flip vector).
pub const DEFAULT_SPSA_BATCH_PAIRS: u32 = 4;
/// Largest batch accepted.
pub const MAX_BATCH_PAIRS: u32 = 1024;

/// Parameter overrides by name, engine units.
pub type Params = BTreeMap<String, i64>;

/// Everything that defines a run; stored as JSON and compared whole to find
/// an identical run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub name: String,
    /// Higher first.
    pub priority: i32,
    /// Pairs per lease (resolved: never 0).
    pub batch_pairs: u32,
    pub settings: MatchSettings,
    pub kind: KindSpec,
}

/// How games are played, for both players of every lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchSettings {
    pub limit: Limit,
    pub hash_mb: u32,
    pub rules: String,
    pub openings: OpeningSource,
    pub seed: u64,
    pub adjudication: Adjudication,
    /// Whether engines value a draw by the rule set's scoring.
    pub draw_contempt: bool,
}

/// An external engine chosen for a player: a registry name and extra options;
/// `registered` is the registry's entry, filled in when the run is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSel {
    pub name: String,
    pub options: BTreeMap<String, String>,
    pub registered: Option<EngineRef>,
}

/// Who plays in an SPRT or fixed-games run: external engines (or the built-in
/// engine when absent) and per-player limits (or the run's limit).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Lineup {
    pub dev: Option<EngineSel>,
    pub base: Option<EngineSel>,
    pub dev_limit: Option<Limit>,
    pub base_limit: Option<Limit>,
}

impl Lineup {
    /// Players 0 (dev) and 1 (base) with these settings and parameters.
    pub fn players(
        &self,
        settings: &MatchSettings,
        dev: &Params,
        base: &Params,
    ) -> [PlayerSpec; 2] {
        let seat = |params: &Params, sel: &Option<EngineSel>, limit: Option<Limit>| {
            let mut p = settings.player(params.clone());
            if let Some(l) = limit {
                p.limit = l;
            }
            p.engine = sel.as_ref().and_then(|s| {
                s.registered.clone().map(|mut e| {
                    e.options.extend(s.options.clone());
                    e
                })
            });
            p
        };
        [
            seat(dev, &self.dev, self.dev_limit),
            seat(base, &self.base, self.base_limit),
        ]
    }

    /// The selections whose registry entries are still to be filled in.
    pub fn selections_mut(&mut self) -> impl Iterator<Item = &mut EngineSel> {
        self.dev.iter_mut().chain(self.base.iter_mut())
    }
}

impl MatchSettings {
    /// A player with these settings and `params`.
    pub fn player(&self, params: Params) -> PlayerSpec {
        PlayerSpec {
            params,
            limit: self.limit,
            hash_mb: self.hash_mb,
            engine: None,
        }
    }
}

/// The experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KindSpec {
    Sprt(SprtSpec),
    Spsa(SpsaSpec),
    Games(GamesSpec),
    Variants(VariantsSpec),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SprtSpec {
    pub dev_params: Params,
    pub base_params: Params,
    /// External engines and per-player limits.
    #[serde(default)]
    pub lineup: Lineup,
    pub sprt: SprtParams,
    /// Stop after this many pairs if no bound is reached.
    pub max_pairs: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaSpec {
    /// Integer parameters (the wire carries whole numbers).
    pub params: Vec<SpsaParamSpec>,
    /// Games in the whole run (2 per iteration).
    pub games: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GamesSpec {
    pub dev_params: Params,
    pub base_params: Params,
    /// External engines and per-player limits.
    #[serde(default)]
    pub lineup: Lineup,
    pub pairs: u64,
}

/// The kinds, as stored in `runs.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Sprt,
    Spsa,
    Games,
    Variants,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Sprt => "sprt",
            RunKind::Spsa => "spsa",
            RunKind::Games => "games",
            RunKind::Variants => "variants",
        }
    }
}

impl KindSpec {
    pub fn kind(&self) -> RunKind {
        match self {
            KindSpec::Sprt(_) => RunKind::Sprt,
            KindSpec::Spsa(_) => RunKind::Spsa,
            KindSpec::Games(_) => RunKind::Games,
            KindSpec::Variants(_) => RunKind::Variants,
        }
    }

    /// Pairs the run needs in all; `None` = open-ended.
    pub fn target_pairs(&self) -> Option<u64> {
        match self {
            KindSpec::Sprt(s) => s.max_pairs,
            KindSpec::Spsa(s) => Some(s.games / 2),
            KindSpec::Games(g) => Some(g.pairs),
            KindSpec::Variants(v) => Some(v.target_pairs()),
        }
    }
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Active,
    Finished,
    Stopped,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Active => "active",
            RunState::Finished => "finished",
            RunState::Stopped => "stopped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(RunState::Active),
            "finished" => Some(RunState::Finished),
            "stopped" => Some(RunState::Stopped),
            _ => None,
        }
    }
}

/// A run as stored, with the live count of pairs in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStatus {
    pub id: u64,
    pub spec: RunSpec,
    pub state: RunState,
    pub totals: Totals,
    pub target_pairs: Option<u64>,
    /// Pairs in active leases.
    pub pairs_in_flight: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// SPRT runs, once a result was counted.
    pub sprt: Option<SprtOutcome>,
    /// SPSA runs.
    pub spsa: Option<SpsaState>,
    /// Why the system stopped the run, if it did (e.g. an engine mismatch).
    pub flag: Option<String>,
    /// Variants runs: one entry per variant, in the spec's order.
    pub variants: Vec<VariantTotals>,
}

/// One applied SPSA result.
#[derive(Debug, Clone, PartialEq)]
pub struct SpsaHistoryRow {
    pub lease_id: u64,
    /// Pairs applied after this row.
    pub iter: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// θ after the update, in the spec's parameter order.
    pub theta: Vec<f64>,
    pub unix_ms: i64,
}
