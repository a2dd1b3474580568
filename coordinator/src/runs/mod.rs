//! Runs as domain types: what a run is ([`RunSpec`]), where it stands
//! ([`RunStatus`]), and the [`Kind`] trait each kind implements in its own
//! file ([`sprt`], [`spsa`], [`games`], [`variants`], [`datagen`]): its spec and wire
//! form, how its slices are cut, who plays a slice, how a counted result
//! moves the run, and its part of the status.
//!
//! Adding a kind: its file (its spec, its [`Kind`] operations, its
//! progress and how it is stored, its [`KindInfo`]) and one line in the
//! list of kinds below (`kinds!`); see "Adding a run kind" in
//! `coordinator/ARCHITECTURE.md` for what lies outside this module.
//!
//! Totals are always from the first player's view: the engine under test
//! (SPRT, games), θ+ (SPSA) or the engine with Red in a pair's first game
//! (variants, whose per-variant statistics are from Red's view).

pub mod admission;
pub mod change;
pub mod error;
pub mod exclusion;
pub mod health;
pub mod lease;
pub mod policy;
pub mod sources;
pub mod transition;
pub mod wire;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xq_engine::rules::RuleSet;
use xq_proto::{
    Adjudication, BatchOutcome, EngineRef, EngineSource, Invalid, Limit, OpeningSource, PlayerSpec,
    Retention, Totals, pb,
};

use crate::spin_options::SpinOption;
use crate::spsa::{SpsaParamSpec, SpsaRequest, SpsaState};
use crate::stats::Results;
use crate::stats::elo::{EloEstimate, logistic_elo};
use crate::stats::sprt::{SprtOutcome, SprtParams};
pub use admission::{Applicant, Refusal};
pub use change::RunChange;
pub use error::RunError;
pub use lease::{Lease, LeaseState, StoredResult};
pub use policy::{SpeedRule, WorkerPolicy};
pub use transition::{Refused, RunAction, Transition};
pub use variants::VariantTotals;

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
    /// What the run asks of its workers. Absent from stored specs that ask
    /// nothing (and from every spec stored before schema version 11).
    #[serde(default, skip_serializing_if = "WorkerPolicy::is_default")]
    pub workers: WorkerPolicy,
    /// Which counted games the archive stores. Left out of the stored JSON
    /// when it is the default, so specs stored before it still compare
    /// equal.
    #[serde(default, skip_serializing_if = "Retention::is_all")]
    pub keep_games: Retention,
}

/// How games are played, for both players of every lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchSettings {
    pub limit: Limit,
    pub hash_mb: u32,
    /// Stored as its preset name.
    #[serde(with = "xq_proto::rule_set::preset")]
    pub rules: RuleSet,
    pub openings: OpeningSource,
    pub seed: u64,
    pub adjudication: Adjudication,
    /// Whether engines value a draw by the rule set's scoring. Absent from
    /// specs stored before schema version 4, which mean on.
    #[serde(default = "on")]
    pub draw_contempt: bool,
    /// Search threads per engine, 1..=[`xq_proto::capacity::MAX_ENGINE_THREADS`];
    /// more than one only when every player is an external engine. Left out
    /// of stored specs when 1, so specs stored before it compare equal.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub threads: u32,
}

fn on() -> bool {
    true
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A registered engine as a run's preparation reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    pub entry: EngineRef,
    /// The `UCI_Variant` values it offers; `None`: not recorded.
    pub variants: Option<Vec<String>>,
    /// The spin options it advertised.
    pub spins: Vec<SpinOption>,
}

/// The registry entries of the engines a spec names, by name; a name absent
/// here is not registered.
pub type Registry = BTreeMap<String, Registered>;

/// An external engine chosen for a player, with extra options: a registry
/// name, whose entry `registered` is filled in when the run is created, or
/// a source engine, which `registered` holds from the start (an `EngineRef`
/// with its `source`; its commit is resolved when the run is created, see
/// [`sources`]).
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

    /// A lease of dev against base under the run's rules.
    pub fn slice_work(&self, settings: &MatchSettings, dev: &Params, base: &Params) -> SliceWork {
        SliceWork {
            players: self.players(settings, dev, base),
            rules: settings.rules,
            per_game: false,
            spsa_request: None,
        }
    }

    /// Fills in each selection's registry entry (see [`EngineSel::resolve`]).
    pub fn resolve(&mut self, registry: &Registry, rules: &RuleSet) -> Result<(), RunError> {
        for sel in self.dev.iter_mut().chain(self.base.iter_mut()) {
            sel.resolve(registry, rules)?;
        }
        Ok(())
    }

    /// The registry entries of the chosen engines, dev first, once resolved.
    pub fn registered(&self) -> Vec<&EngineRef> {
        self.dev
            .iter()
            .chain(&self.base)
            .filter_map(|s| s.registered.as_ref())
            .collect()
    }

    /// The registry names chosen, dev first (source engines have none).
    pub fn engines(&self) -> Vec<&str> {
        self.dev
            .iter()
            .chain(&self.base)
            .filter(|s| s.source().is_none())
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The sources of the source engines chosen, dev first.
    pub fn sources(&self) -> Vec<&EngineSource> {
        self.dev
            .iter()
            .chain(&self.base)
            .filter_map(EngineSel::source)
            .collect()
    }

    /// [`Lineup::sources`], to resolve their commits.
    pub fn sources_mut(&mut self) -> Vec<&mut EngineSource> {
        self.dev
            .iter_mut()
            .chain(self.base.iter_mut())
            .filter_map(|s| s.registered.as_mut()?.source.as_mut())
            .collect()
    }
}

impl EngineSel {
    /// The source a source engine is built from; `None` for a registry name.
    pub fn source(&self) -> Option<&EngineSource> {
        self.registered.as_ref()?.source.as_ref()
    }

    /// Fills in the registry entry; an unknown name is `NotFound`, an engine
    /// whose registered `UCI_Variant`s cannot play `rules` `Invalid`. A
    /// source engine has its entry already; its commit must be resolved (the
    /// `UCI_Variant` it offers is known only to the worker that builds it).
    pub fn resolve(&mut self, registry: &Registry, rules: &RuleSet) -> Result<(), RunError> {
        if let Some(source) = self.source() {
            if !source.is_resolved() {
                return Err(RunError::invalid(
                    "engines",
                    format!(
                        "the source of {} names no commit yet",
                        xq_proto::quote(&self.name)
                    ),
                ));
            }
            return Ok(());
        }
        let found = registry.get(&self.name).ok_or_else(|| {
            RunError::NotFound(format!(
                "no engine named {} is registered",
                xq_proto::quote(&self.name)
            ))
        })?;
        self.registered = Some(found.entry.clone());
        xq_proto::uci_variant::choose_variant(found.variants.as_deref(), rules).map_err(|why| {
            RunError::invalid(
                "engines",
                format!(
                    "engine {} cannot play rule set {}: {why}",
                    xq_proto::quote(&self.name),
                    xq_proto::quote(&xq_proto::rule_set::name(rules))
                ),
            )
        })?;
        Ok(())
    }
}

impl MatchSettings {
    /// What one game of the run needs of a worker.
    pub fn game_needs(&self) -> xq_proto::capacity::GameNeeds {
        xq_proto::capacity::GameNeeds::symmetric(self.threads, self.hash_mb)
    }

    /// A player with these settings and `params`.
    pub fn player(&self, params: Params) -> PlayerSpec {
        PlayerSpec {
            params,
            limit: self.limit,
            hash_mb: self.hash_mb,
            engine: None,
            threads: self.threads,
        }
    }
}

/// Makes, from the list of kinds (one line each: `Variant = module::Spec`),
/// each kind's module declaration and [`KindSpec`] (whose stored JSON names
/// a kind by its variant in snake case: `{"sprt": …}`), [`RunKind`] with
/// [`RunKind::ALL`], [`KindSpec::ops`] and the wire mappings. Everything
/// else a kind is, its module says: its [`Kind`] operations and its
/// `INFO: KindInfo`.
macro_rules! kinds {
    ($($variant:ident = $module:ident::$spec:ident),+ $(,)?) => {
        $(pub mod $module;)+
        $(pub use $module::$spec;)+

        /// The experiment.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum KindSpec {
            $($variant($spec),)+
        }

        /// The kinds, as stored in `runs.kind` ([`RunKind::as_str`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum RunKind {
            $($variant,)+
        }

        impl RunKind {
            /// Every kind, in the order pages and help list them.
            pub const ALL: [RunKind; [$(stringify!($variant)),+].len()] =
                [$(RunKind::$variant,)+];

            /// What its module says of it without a spec.
            fn info(self) -> &'static KindInfo {
                match self {
                    $(RunKind::$variant => &$module::INFO,)+
                }
            }

            /// The kind of a spec on the wire.
            pub fn of_wire(kind: &pb::run_spec::Kind) -> RunKind {
                match kind {
                    $(pb::run_spec::Kind::$variant(_) => RunKind::$variant,)+
                }
            }
        }

        impl KindSpec {
            /// The kind's operations: the one place that dispatches on the kind.
            pub fn ops(&self) -> &dyn Kind {
                match self {
                    $(KindSpec::$variant(s) => s,)+
                }
            }

            /// [`KindSpec::ops`], mutably.
            pub fn ops_mut(&mut self) -> &mut dyn Kind {
                match self {
                    $(KindSpec::$variant(s) => s,)+
                }
            }
        }

        impl TryFrom<pb::run_spec::Kind> for KindSpec {
            type Error = Invalid;

            fn try_from(k: pb::run_spec::Kind) -> Result<Self, Invalid> {
                Ok(match k {
                    $(pb::run_spec::Kind::$variant(s) => KindSpec::$variant(s.try_into()?),)+
                })
            }
        }

        impl From<KindSpec> for pb::run_spec::Kind {
            fn from(k: KindSpec) -> Self {
                match k {
                    $(KindSpec::$variant(s) => pb::run_spec::Kind::$variant(s.into()),)+
                }
            }
        }

        impl From<RunKind> for pb::RunKind {
            fn from(k: RunKind) -> Self {
                match k {
                    $(RunKind::$variant => pb::RunKind::$variant,)+
                }
            }
        }
    };
}

// The run kinds: the one list a new kind joins.
kinds! {
    Sprt = sprt::SprtSpec,
    Spsa = spsa::SpsaSpec,
    Games = games::GamesSpec,
    Variants = variants::VariantsSpec,
    Datagen = datagen::DatagenSpec,
}

/// What the views and reports know of a kind without its spec; each kind's
/// module declares its own `INFO`.
#[derive(Debug)]
pub struct KindInfo {
    /// Its name in `runs.kind`, on pages and in help (the snake-case name
    /// of its [`KindSpec`] variant, which the stored spec JSON uses).
    pub name: &'static str,
    /// The parts of its run's page (and of `report --plot`), in order.
    pub sections: &'static [Section],
    /// What its players 0 and 1 are called in reports.
    pub player_names: [&'static str; 2],
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// The kind named by [`RunKind::as_str`]'s text.
    pub fn parse(s: &str) -> Option<Self> {
        RunKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The parts of a run's page (and of `report --plot`) this kind has, in
    /// the order they are shown.
    pub fn sections(self) -> &'static [Section] {
        self.info().sections
    }

    /// What its players 0 and 1 are called in reports.
    pub fn player_names(self) -> [&'static str; 2] {
        self.info().player_names
    }
}

/// A part of a run's page that only some kinds have; the views render each
/// section once, and a kind lists its own ([`RunKind::sections`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The LLR against its bounds, by pairs counted.
    Llr,
    /// Dev's Elo against base with its 95 % interval, by games.
    Elo,
    /// Each tuned parameter: θ by iteration, its table and paste-back text.
    Theta,
    /// The per-variant report and its result bars.
    Variants,
    /// Positions generated, their rate, Red's results and the game lengths.
    Datagen,
}

impl Serialize for RunKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Serialize for RunState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl KindSpec {
    pub fn kind(&self) -> RunKind {
        self.ops().kind()
    }

    /// Pairs the run needs in all; `None` = open-ended.
    pub fn target_pairs(&self) -> Option<u64> {
        self.ops().target_pairs()
    }
}

/// A slice of a run's openings handed to one lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// Index of the first opening.
    pub offset: u64,
    pub pairs: u32,
    /// Variants runs: the index of the slice's rule set in the spec.
    pub variant: Option<usize>,
}

/// What a lease of one slice plays, besides the run's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceWork {
    pub players: [PlayerSpec; 2],
    pub rules: RuleSet,
    /// Each game takes its own opening (see `xq_proto::OpeningSlice`).
    pub per_game: bool,
    /// SPSA runs: the request (flip vector) the lease's result answers.
    pub spsa_request: Option<SpsaRequest>,
}

/// What counting a result (or creating a run) changes beside the run's
/// shared totals, in domain terms; the store writes each in the same
/// transaction, and knows the tables, not the kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The kind's progress, whole, in the form its kind stores it: at the
    /// run's creation or after the counted result. It replaces the run's
    /// previous progress.
    Progress(StoredProgress),
    /// An SPRT's LLR after the counted result: a point of its LLR history
    /// (a recount replaces the point of the result that caused it).
    LlrPoint(f64),
    /// A tune's θ after the applied result (in the spec's parameter order)
    /// and the pairs applied: a point of its θ history.
    ThetaPoint { iter: u64, theta: Vec<f64> },
    /// A new run that verifies this one (a finished tune's SPRT).
    StartVerification(Box<RunSpec>),
}

/// A kind's [`Progress`] as stored (`runs.progress`): JSON that the kind's
/// own file writes ([`StoredProgress::of`], in an [`Effect::Progress`]) and
/// reads back ([`Kind::read_progress`]). The store keeps it whole and never
/// looks inside, so a kind with a new progress needs no new column.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredProgress(String);

impl StoredProgress {
    /// `value` as JSON.
    pub fn of<T: Serialize>(value: &T) -> Result<StoredProgress, RunError> {
        serde_json::to_string(value)
            .map(StoredProgress)
            .map_err(|e| RunError::Corrupt(format!("a run's progress as JSON: {e}")))
    }

    /// The stored text, as read from the store.
    pub fn from_stored(text: String) -> StoredProgress {
        StoredProgress(text)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Run `run`'s stored progress decoded as `T` (its kind's stored form).
    pub fn decode<T: serde::de::DeserializeOwned>(&self, run: u64) -> Result<T, RunError> {
        serde_json::from_str(&self.0)
            .map_err(|e| RunError::Corrupt(format!("runs.progress of run {run}: {e}")))
    }
}

/// A counted result's consequences for the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Applied {
    pub effects: Vec<Effect>,
    /// The run is at its end.
    pub finished: bool,
}

impl Applied {
    /// No effect of the kind's own; `finished` as given.
    pub fn done_if(finished: bool) -> Applied {
        Applied {
            effects: Vec::new(),
            finished,
        }
    }
}

/// The operations every run kind implements, each in its own file: pure
/// functions of the run as stored, the counted result and the registry
/// entries the store read. The scheduler calls them inside its transactions
/// and writes what they return through the store; it knows nothing of the
/// kinds.
pub trait Kind {
    fn kind(&self) -> RunKind;

    /// Pairs the run needs in all; `None` = open-ended.
    fn target_pairs(&self) -> Option<u64>;

    /// Pairs per lease given the spec's `batch_pairs` (0: the kind's
    /// default); a kind that fixes the batch itself may refuse a different one.
    fn batch_pairs(&mut self, requested: u32) -> Result<u32, Invalid> {
        Ok(match requested {
            0 => DEFAULT_BATCH_PAIRS,
            b => b,
        })
    }

    /// Checks the run's settings and retention against what the kind needs
    /// (e.g. a datagen run's fixed node count).
    fn check(&self, settings: &MatchSettings, keep: Retention) -> Result<(), Invalid> {
        let _ = (settings, keep);
        Ok(())
    }

    /// The kind's progress of run `run` from what it stored
    /// ([`Effect::Progress`]; `None` before it stored any): the one reading
    /// of `runs.progress`. By default the kind keeps nothing beside the
    /// totals.
    fn read_progress(
        &self,
        run: u64,
        stored: Option<&StoredProgress>,
    ) -> Result<Progress, RunError> {
        let _ = (run, stored);
        Ok(Progress::Totals)
    }

    /// Fills in the kind's own part of a run's status on the wire.
    fn status(&self, run: &RunStatus, out: &mut pb::RunStatus) {
        let _ = (run, out);
    }

    /// The SPRT the run is (an SPRT run's test).
    fn sprt(&self) -> Option<&SprtParams> {
        None
    }

    /// The rule sets the run compares, in the spec's order (a variants
    /// run's; none for the others).
    fn variants(&self) -> &[RuleSet] {
        &[]
    }

    /// The SPRT that verifies the run once it ends (a tune's `verify`).
    fn verification(&self) -> Option<&SprtParams> {
        None
    }

    /// The parameters the run tunes (none but for a tune).
    fn tuned(&self) -> &[SpsaParamSpec] {
        &[]
    }

    /// The registry names the spec chooses, which [`Kind::prepare`] needs.
    fn engines(&self) -> Vec<&str> {
        Vec::new()
    }

    /// The registry entries of the engines its leases play, as
    /// [`Kind::prepare`] filled them in when the run was created; a worker
    /// must run a build of each ([`admission`]).
    fn registered(&self) -> Vec<&EngineRef> {
        Vec::new()
    }

    /// Who plays, for kinds whose players are chosen engines (SPRT and
    /// fixed-games runs): where source engines are.
    fn lineup(&self) -> Option<&Lineup> {
        None
    }

    /// [`Kind::lineup`], mutably (to resolve its sources' commits).
    fn lineup_mut(&mut self) -> Option<&mut Lineup> {
        None
    }

    /// Checks the spec and fills in the registry's entries (of the names
    /// [`Kind::engines`] gave) before the run is created; returns the
    /// kind's initial state.
    fn prepare(
        &mut self,
        registry: &Registry,
        settings: &MatchSettings,
    ) -> Result<Vec<Effect>, RunError> {
        let _ = (registry, settings);
        Ok(Vec::new())
    }

    /// Sets the cap to `pairs` game pairs over the whole run (what
    /// [`Kind::target_pairs`] then says), after `issued` fresh pairs were
    /// handed out in leases of `batch` pairs (`pairs >= issued`, checked by
    /// the caller). The slices already handed out must stay those the new
    /// cap would have cut. A kind without a cap that may change refuses.
    fn set_target_pairs(&mut self, pairs: u64, issued: u64, batch: u32) -> Result<(), RunError> {
        let _ = (pairs, issued, batch);
        Err(RunError::invalid(
            "pairs",
            format!("a {} run has no game cap to change", self.kind().as_str()),
        ))
    }

    /// Whether a lease may hold more than the run's `batch_pairs` for a fast
    /// worker ([`crate::pace`]): the kind's statistics do not depend on how
    /// its pairs are cut into leases.
    fn sized_by_time(&self) -> bool {
        false
    }

    /// The fresh slice after `issued` pairs were handed out, at most `batch`
    /// pairs, or `None` when every pair was: by default consecutive openings.
    fn next_slice(&self, batch: u32, issued: u64) -> Option<Slice> {
        let left = self
            .target_pairs()
            .map_or(u64::MAX, |t| t.saturating_sub(issued));
        let pairs = u64::from(batch).min(left) as u32;
        (pairs > 0).then_some(Slice {
            offset: issued,
            pairs,
            variant: None,
        })
    }

    /// The players and rules of a lease of `slice` in `run` as it stands.
    fn slice_work(&self, run: &RunStatus, slice: &Slice) -> Result<SliceWork, RunError>;

    /// Counts a lease's result (already added to the run's totals, which
    /// `run` shows) in the kind's own state.
    fn apply(
        &self,
        run: &RunStatus,
        lease: &Lease,
        outcome: &BatchOutcome,
    ) -> Result<Applied, RunError>;

    /// Rebuilds the kind's own state from `kept`, the results still counted
    /// after workers were excluded (the run's totals, which `run` shows, are
    /// already rebuilt; `lease` is the result whose count excluded them; see
    /// [`exclusion`]).
    fn recount(
        &self,
        run: &RunStatus,
        kept: &[StoredResult],
        lease: &Lease,
    ) -> Result<Applied, RunError>;
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// An untrusted developer's test, waiting for an approver; no workers.
    Pending,
    Active,
    Finished,
    Stopped,
    /// Rejected by an approver; never plays.
    Rejected,
}

impl RunState {
    /// Every state, in the order pages list them.
    pub const ALL: [RunState; 5] = [
        RunState::Pending,
        RunState::Active,
        RunState::Finished,
        RunState::Stopped,
        RunState::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Pending => "pending",
            RunState::Active => "active",
            RunState::Finished => "finished",
            RunState::Stopped => "stopped",
            RunState::Rejected => "rejected",
        }
    }

    /// The state named by [`RunState::as_str`]'s text.
    pub fn parse(s: &str) -> Option<Self> {
        RunState::ALL.into_iter().find(|k| k.as_str() == s)
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
    /// What the run's kind keeps beside the shared totals.
    pub progress: Progress,
    /// Why the system stopped the run, if it did (e.g. an engine mismatch).
    pub flag: Option<String>,
    /// An SPSA run's verification SPRT, or the tune an SPRT run verifies.
    pub linked: Option<u64>,
    /// The user who created the run; `None` for a run created by a caller
    /// without a user (an ephemeral token in tests).
    pub author: Option<String>,
    /// Why an approver rejected it ([`RunState::Rejected`]).
    pub rejection: Option<String>,
    /// Its throughput share: among runs of equal priority, pairs in flight
    /// in proportion to it ([`change::DEFAULT_SHARE`] = the normal share).
    pub share: u32,
}

impl RunStatus {
    /// The first player's logistic Elo from the pentanomial totals; `None`
    /// before the first counted pair.
    pub fn elo(&self) -> Option<EloEstimate> {
        if self.totals.pairs == 0 {
            return None;
        }
        logistic_elo(&Results::Pentanomial(self.totals.pentanomial)).ok()
    }
}

/// What a run's kind keeps beside the shared totals: one variant per kind
/// that keeps something, so an SPRT run cannot carry a tuner's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Progress {
    /// The totals are everything (games runs).
    #[default]
    Totals,
    /// An SPRT run's test after the last counted result; `None` before one.
    Sprt(Option<SprtOutcome>),
    /// A tune's state.
    Spsa(Box<SpsaState>),
    /// One entry per variant, in the spec's order.
    Variants(Vec<VariantTotals>),
    /// A datagen run's games under its rule set; `None` before a result.
    Datagen(Option<Box<VariantTotals>>),
}

impl Progress {
    /// The SPRT's last outcome, for SPRT runs once a result was counted.
    pub fn sprt(&self) -> Option<&SprtOutcome> {
        match self {
            Progress::Sprt(outcome) => outcome.as_ref(),
            _ => None,
        }
    }

    /// A tune's state.
    pub fn spsa(&self) -> Option<&SpsaState> {
        match self {
            Progress::Spsa(state) => Some(state),
            _ => None,
        }
    }

    /// Each variant's totals, in the spec's order (a datagen run's one
    /// entry once a result was counted); empty for other kinds.
    pub fn variants(&self) -> &[VariantTotals] {
        match self {
            Progress::Variants(v) => v,
            Progress::Datagen(Some(t)) => std::slice::from_ref(t),
            _ => &[],
        }
    }

    /// A datagen run's totals, once a result was counted.
    pub fn datagen(&self) -> Option<&VariantTotals> {
        match self {
            Progress::Datagen(t) => t.as_deref(),
            _ => None,
        }
    }
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

/// A games run of the built-in engine against itself at 1,000 nodes a move,
/// for tests.
#[cfg(test)]
pub(crate) fn games_spec(pairs: u64, batch_pairs: u32) -> RunSpec {
    RunSpec {
        name: "test".to_owned(),
        priority: 0,
        batch_pairs,
        settings: MatchSettings {
            limit: xq_proto::Limit::Nodes(1000),
            hash_mb: 1,
            rules: xq_engine::rules::RuleSet::STANDARD,
            openings: xq_proto::OpeningSource::Builtin { random_plies: 2 },
            seed: 1,
            adjudication: xq_proto::Adjudication::default(),
            draw_contempt: true,
            threads: 1,
        },
        kind: KindSpec::Games(GamesSpec {
            dev_params: std::collections::BTreeMap::new(),
            base_params: std::collections::BTreeMap::new(),
            lineup: Default::default(),
            pairs,
        }),
        workers: Default::default(),
        keep_games: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kinds_name_is_the_one_its_stored_spec_uses() {
        for kind in RunKind::ALL {
            let name = kind.as_str();
            assert_eq!(RunKind::parse(name), Some(kind));
            // `{"<name>": null}` is that kind's spec, badly formed, not an
            // unknown kind.
            let err = serde_json::from_str::<KindSpec>(&format!(r#"{{"{name}": null}}"#))
                .unwrap_err()
                .to_string();
            assert!(!err.contains("unknown variant"), "{name}: {err}");
        }
        let unknown = serde_json::from_str::<KindSpec>(r#"{"sixth": null}"#).unwrap_err();
        assert!(unknown.to_string().contains("unknown variant"), "{unknown}");
    }
}
