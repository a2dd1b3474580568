//! A player: the built-in engine with a parameter set, a search limit and a hash size.

use xq_engine::params::Params;
use xq_proto::Limit;

use crate::external::EngineConfig;

/// One side of a match.
#[derive(Clone, Debug)]
pub struct PlayerConfig {
    /// The name used in reports and PGN.
    pub name: String,
    /// Evaluation and search parameters.
    pub params: Params,
    pub limit: Limit,
    /// Transposition table size in MB.
    pub hash_mb: usize,
    /// The built-in engine's search threads (at least 1); an external
    /// engine's are among its options.
    pub threads: usize,
    /// An external engine process instead of the built-in engine (whose
    /// `params` and `hash_mb` are then unused).
    pub engine: Option<EngineConfig>,
    /// Whether the engine values a draw by the rule set's scoring
    /// ([`xq_engine::SearchRules::scoring_aware`]).
    pub draw_contempt: bool,
}
