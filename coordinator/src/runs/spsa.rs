//! SPSA runs: each lease is one request of [`crate::spsa`] (one flip vector,
//! θ+ first, θ− second) over the run's pairs per iteration; each counted
//! result is applied with [`crate::spsa::apply_result`] and the new θ is
//! stored. The tuned player is the built-in engine (θ as parameters) or a
//! registered engine (θ as spin options, set with `setoption`). A tune with
//! `verify` starts, as its last result is counted and in the same
//! transaction, an SPRT of the tuned values against the start values,
//! linked to it (`runs.verifies`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use xq_proto::{BatchOutcome, EngineRef, Invalid, PlayerSpec, pb};

use super::{
    Applied, DEFAULT_BATCH_PAIRS, DEFAULT_SPSA_BATCH_PAIRS, Effect, EngineSel, Kind, KindInfo, KindSpec,
    Lease, Lineup, MatchSettings, Params, Progress, Registry, RunError, RunKind, RunSpec,
    RunStatus, Slice, SliceWork, SprtSpec, StoredProgress, StoredResult, Section,
};
use crate::spsa::{self, SpsaConfig, SpsaError, SpsaParamSpec, SpsaState};
use crate::stats::EloModel;
use crate::stats::sprt::SprtParams;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaSpec {
    /// The tuned parameters, integer or real (see [`SpsaParamSpec::integer`]).
    pub params: Vec<SpsaParamSpec>,
    /// Games in the whole run (2 per iteration).
    pub games: u64,
    /// The tuned engine from the registry; `None`: the built-in engine.
    /// Its tuned parameters are spin options, checked against what it
    /// advertised when the run is created.
    #[serde(default)]
    pub engine: Option<EngineSel>,
    /// Game pairs one θ+/θ− perturbation plays (= the run's batch); 0 only
    /// in runs stored before the setting existed, whose batch says it.
    #[serde(default)]
    pub pairs_per_iteration: u32,
    /// The SPRT of the tuned values against the start values started when
    /// the tune ends.
    #[serde(default)]
    pub verify: Option<SprtParams>,
}

impl SpsaSpec {
    /// The initial state of a run.
    pub fn initial_state(&self) -> Result<SpsaState, SpsaError> {
        SpsaState::new(self.params.clone(), SpsaConfig::new(self.games))
    }

    /// The values of `theta` (in the spec's parameter order) as the engine
    /// takes them: integer parameters rounded to whole numbers.
    fn values(&self, theta: &[f64]) -> Vec<(String, f64)> {
        self.params
            .iter()
            .zip(theta)
            .map(|(p, &v)| (p.name.clone(), if p.integer { v.round() } else { v }))
            .collect()
    }

    /// A player of `values`: built-in parameters, or the tuned engine with
    /// the values as options after the registry's and the run's own.
    fn player(
        &self,
        settings: &MatchSettings,
        values: &[(String, f64)],
    ) -> Result<PlayerSpec, RunError> {
        let Some(sel) = &self.engine else {
            let params: Params = values.iter().map(|(n, v)| (n.clone(), *v as i64)).collect();
            return Ok(settings.player(params));
        };
        let mut player = settings.player(Params::new());
        let mut engine = sel.registered.clone().ok_or_else(|| {
            RunError::Corrupt(format!("spsa engine '{}' was never resolved", sel.name))
        })?;
        engine.options.extend(sel.options.clone());
        engine
            .options
            .extend(values.iter().map(|(n, v)| (n.clone(), v.to_string())));
        player.engine = Some(engine);
        Ok(player)
    }

    /// The verifying SPRT of a finished tune: the tuned values as dev, the
    /// start values as base, the same engine and settings.
    fn verification(&self, run: &RunStatus, state: &SpsaState, sprt: SprtParams) -> RunSpec {
        let tuned = self.values(&state.theta());
        let start: Vec<f64> = self.params.iter().map(|p| p.start).collect();
        let start = self.values(&start);
        let ints = |values: &[(String, f64)]| -> Params {
            values.iter().map(|(n, v)| (n.clone(), *v as i64)).collect()
        };
        let sel = |values: &[(String, f64)]| {
            self.engine.as_ref().map(|e| {
                let mut e = e.clone();
                e.options
                    .extend(values.iter().map(|(n, v)| (n.clone(), v.to_string())));
                e
            })
        };
        let kind = match &self.engine {
            None => SprtSpec {
                dev_params: ints(&tuned),
                base_params: ints(&start),
                lineup: Lineup::default(),
                sprt,
                max_pairs: None,
            },
            Some(_) => SprtSpec {
                dev_params: Params::new(),
                base_params: Params::new(),
                lineup: Lineup {
                    dev: sel(&tuned),
                    base: sel(&start),
                    ..Lineup::default()
                },
                sprt,
                max_pairs: None,
            },
        };
        RunSpec {
            name: format!("{} verify", run.spec.name),
            priority: run.spec.priority,
            batch_pairs: DEFAULT_BATCH_PAIRS,
            settings: run.spec.settings.clone(),
            kind: KindSpec::Sprt(kind),
            workers: run.spec.workers,
            keep_games: run.spec.keep_games,
        }
    }
}

/// A tuned parameter from the wire (checked with the spec it is part of).
pub fn param_of_wire(p: pb::SpsaParam) -> SpsaParamSpec {
    let pb::SpsaParam {
        name,
        start,
        min,
        max,
        c_end,
        r_end,
        is_float,
    } = p;
    SpsaParamSpec {
        name,
        start,
        min,
        max,
        c_end,
        r_end,
        integer: !is_float,
    }
}

/// One `name, int|float, value, min, max, c_end, r_end` line per parameter
/// at `theta`: a tune's result in the form `run_args::params::spsa_lines`
/// reads (and fishtest and OpenBench take). Integer values are rounded.
pub fn paste_back(params: &[SpsaParamSpec], theta: &[f64]) -> String {
    let mut s = String::new();
    for (p, &v) in params.iter().zip(theta) {
        let (kind, value) = if p.integer {
            ("int", format!("{}", v.round()))
        } else {
            ("float", v.to_string())
        };
        s.push_str(&format!(
            "{}, {kind}, {value}, {}, {}, {}, {}\n",
            p.name, p.min, p.max, p.c_end, p.r_end
        ));
    }
    s
}

fn no_state(run: &RunStatus) -> RunError {
    RunError::Corrupt(format!("spsa run {} has no state", run.id))
}

/// A tune: θ by iteration; θ+ against θ−.
pub const INFO: KindInfo = KindInfo {
    name: "spsa",
    sections: &[Section::Theta],
    player_names: ["θ+", "θ−"],
};

impl Kind for SpsaSpec {
    fn kind(&self) -> RunKind {
        RunKind::Spsa
    }

    fn target_pairs(&self) -> Option<u64> {
        Some(self.games / 2)
    }

    /// Refused: the gain schedule (`c`, `a` and `A` of every parameter) was
    /// computed from the run's length when it started, so a tune of another
    /// length is another tune.
    fn set_target_pairs(&mut self, _: u64, _: u64, _: u32) -> Result<(), RunError> {
        Err(RunError::invalid(
            "pairs",
            format!(
                "an spsa run's gain schedule was fixed by its {} games when it started; \
                 a tune of another length is a new run",
                self.games
            ),
        ))
    }

    /// The batch is the pairs per iteration: either setting gives it (4 when
    /// neither does), and both must agree.
    fn batch_pairs(&mut self, requested: u32) -> Result<u32, Invalid> {
        let pairs = match (self.pairs_per_iteration, requested) {
            (0, 0) => DEFAULT_SPSA_BATCH_PAIRS,
            (p, 0) | (0, p) => p,
            (p, b) if p == b => p,
            (p, b) => {
                return Err(Invalid::new(
                    "spsa.pairs_per_iteration",
                    format!("{p} differs from the spec's batch_pairs {b}; set one of them"),
                ));
            }
        };
        self.pairs_per_iteration = pairs;
        Ok(pairs)
    }

    /// θ and the gain schedule: the [`SpsaState`] as JSON, stored at the
    /// run's creation and rewritten with every applied result.
    fn read_progress(
        &self,
        run: u64,
        stored: Option<&StoredProgress>,
    ) -> Result<Progress, RunError> {
        Ok(match stored {
            Some(s) => Progress::Spsa(Box::new(s.decode(run)?)),
            None => Progress::Totals,
        })
    }

    /// The current θ and the iterations done and planned.
    fn status(&self, run: &RunStatus, out: &mut pb::RunStatus) {
        out.spsa = run.progress.spsa().map(|st| pb::SpsaStatus {
            iter: st.iter,
            iterations: st.iterations,
            theta: st
                .params
                .iter()
                .map(|p| pb::SpsaTheta {
                    name: p.name.clone(),
                    value: p.theta,
                })
                .collect(),
        });
    }

    /// Resolves the tuned engine and refuses a parameter it does not offer
    /// as a spin option, or a range outside the option's.
    fn tuned(&self) -> &[SpsaParamSpec] {
        &self.params
    }

    fn verification(&self) -> Option<&SprtParams> {
        self.verify.as_ref()
    }

    fn engines(&self) -> Vec<&str> {
        self.engine.iter().map(|s| s.name.as_str()).collect()
    }

    fn registered(&self) -> Vec<&EngineRef> {
        self.engine
            .iter()
            .filter_map(|s| s.registered.as_ref())
            .collect()
    }

    fn prepare(
        &mut self,
        registry: &Registry,
        settings: &MatchSettings,
    ) -> Result<Vec<Effect>, RunError> {
        if let Some(sel) = &mut self.engine {
            sel.resolve(registry, &settings.rules)?;
            let offered = registry.get(&sel.name).map_or(&[][..], |r| &r.spins);
            for p in &self.params {
                crate::spin_options::check(&sel.name, offered, &p.name, p.min, p.max)
                    .map_err(|e| RunError::invalid("spsa.params", e))?;
            }
        }
        let state = self
            .initial_state()
            .map_err(|e| RunError::invalid("spsa.params", e))?;
        Ok(vec![Effect::Progress(StoredProgress::of(&state)?)])
    }

    /// A new request at the run's current θ: θ+ first, θ− second. Integer
    /// parameters get whole numbers (see [`crate::spsa`]'s rounding). Flips
    /// are drawn from the run's seed and the slice, so a run replays the
    /// same perturbations given the same results.
    fn slice_work(&self, run: &RunStatus, slice: &Slice) -> Result<SliceWork, RunError> {
        let state = run.progress.spsa().ok_or_else(|| no_state(run))?;
        let settings = &run.spec.settings;
        let mut rng = ChaCha8Rng::seed_from_u64(
            settings.seed
                ^ run.id.rotate_left(32)
                ^ slice.offset.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let request = spsa::next_request(state, &mut rng);
        Ok(SliceWork {
            players: [
                self.player(settings, &self.values(&request.theta_plus))?,
                self.player(settings, &self.values(&request.theta_minus))?,
            ],
            rules: settings.rules,
            per_game: false,
            spsa_request: Some(request),
        })
    }

    /// Applies the lease's games to θ; finished after the planned
    /// iterations, when a tune with `verify` also starts its SPRT.
    fn apply(
        &self,
        run: &RunStatus,
        lease: &Lease,
        outcome: &BatchOutcome,
    ) -> Result<Applied, RunError> {
        let mut state = run.progress.spsa().cloned().ok_or_else(|| no_state(run))?;
        let request = lease
            .spsa_request
            .as_ref()
            .ok_or_else(|| RunError::Corrupt(format!("spsa lease {} has no request", lease.id)))?;
        spsa::apply_result(&mut state, request, outcome.totals.wdl)
            .map_err(|e| RunError::invalid("results", format!("spsa: {e}")))?;
        let finished = state.finished();
        let mut effects = vec![
            Effect::Progress(StoredProgress::of(&state)?),
            Effect::ThetaPoint {
                iter: state.iter,
                theta: state.theta(),
            },
        ];
        if finished
            && run.linked.is_none()
            && let Some(sprt) = self.verify
        {
            let spec = self.verification(run, &state, sprt);
            effects.push(Effect::StartVerification(Box::new(spec)));
        }
        Ok(Applied { effects, finished })
    }

    /// Refused: θ cannot be taken back (runs that exclude workers are not
    /// SPSA runs; see [`super::WorkerPolicy::check`]).
    fn recount(&self, run: &RunStatus, _: &[StoredResult], _: &Lease) -> Result<Applied, RunError> {
        Err(RunError::invalid(
            "spec.workers.exclude_flagged",
            format!(
                "spsa run {}: results already applied to θ cannot be set aside",
                run.id
            ),
        ))
    }
}

impl TryFrom<pb::SpsaSpec> for SpsaSpec {
    type Error = Invalid;

    fn try_from(s: pb::SpsaSpec) -> Result<Self, Invalid> {
        let pb::SpsaSpec {
            params,
            games,
            engine,
            engine_options,
            pairs_per_iteration,
            verify,
        } = s;
        let params: Vec<SpsaParamSpec> = params.into_iter().map(param_of_wire).collect();
        for (i, p) in params.iter().enumerate() {
            if p.name.is_empty() || params[..i].iter().any(|q| q.name == p.name) {
                return Err(Invalid::new(
                    "spsa.params",
                    format!("name {} is empty or repeated", xq_proto::quote(&p.name)),
                ));
            }
            if engine.is_empty() {
                check_builtin(p)?;
            }
        }
        if !engine.is_empty() && engine.chars().count() > 64 {
            return Err(Invalid::new("spsa.engine", "longer than 64 characters"));
        }
        super::wire::no_asset_options("spsa.engine_options", &engine_options)?;
        let engine = (!engine.is_empty()).then(|| EngineSel {
            name: engine,
            options: engine_options.into_iter().collect(),
            registered: None,
        });
        let verify = verify
            .map(|v| SprtParams::new(v.elo0, v.elo1, 0.05, 0.05, EloModel::Normalized))
            .transpose()
            .map_err(|e| Invalid::new("spsa.verify", e))?;
        let spec = SpsaSpec {
            params,
            games,
            engine,
            pairs_per_iteration,
            verify,
        };
        spec.initial_state().map_err(|e| Invalid::new("spsa", e))?;
        Ok(spec)
    }
}

/// A built-in parameter must exist, be an integer and keep to its range.
fn check_builtin(p: &SpsaParamSpec) -> Result<(), Invalid> {
    let Some(spec) = xq_engine::params::spec(&p.name) else {
        return Err(Invalid::new(
            "spsa.params",
            format!("unknown parameter {}", xq_proto::quote(&p.name)),
        ));
    };
    if !p.integer {
        return Err(Invalid::new(
            "spsa.params",
            format!(
                "{:?} is an integer parameter of the built-in engine, not float",
                p.name
            ),
        ));
    }
    if p.min < f64::from(spec.min) || p.max > f64::from(spec.max) {
        return Err(Invalid::new(
            "spsa.params",
            format!(
                "{:?} range [{}, {}] leaves the engine's [{}, {}]",
                p.name, p.min, p.max, spec.min, spec.max
            ),
        ));
    }
    Ok(())
}

impl From<SpsaSpec> for pb::SpsaSpec {
    fn from(s: SpsaSpec) -> Self {
        let SpsaSpec {
            params,
            games,
            engine,
            pairs_per_iteration,
            verify,
        } = s;
        let (engine, engine_options) = match engine {
            Some(e) => (e.name, e.options.into_iter().collect()),
            None => (String::new(), Default::default()),
        };
        pb::SpsaSpec {
            params: params
                .into_iter()
                .map(|p| pb::SpsaParam {
                    name: p.name,
                    start: p.start,
                    min: p.min,
                    max: p.max,
                    c_end: p.c_end,
                    r_end: p.r_end,
                    is_float: !p.integer,
                })
                .collect(),
            games,
            engine,
            engine_options,
            pairs_per_iteration,
            verify: verify.map(|v| pb::SpsaVerify {
                elo0: v.elo0(),
                elo1: v.elo1(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use xq_proto::{Adjudication, EngineRef, Limit, OpeningSource, Protocol, Totals};

    use super::*;
    use crate::runs::Progress;
    use crate::runs::RunState;

    fn spec(engine: Option<EngineSel>) -> SpsaSpec {
        SpsaSpec {
            params: vec![
                SpsaParamSpec {
                    name: "chariot_value".to_owned(),
                    start: 400.0,
                    min: 100.0,
                    max: 2000.0,
                    c_end: 60.0,
                    r_end: 0.02,
                    integer: true,
                },
                SpsaParamSpec {
                    name: "Scale".to_owned(),
                    start: 1.0,
                    min: 0.5,
                    max: 2.0,
                    c_end: 0.1,
                    r_end: 0.002,
                    integer: false,
                },
            ],
            games: 40,
            engine,
            pairs_per_iteration: 0,
            verify: Some(SprtParams::new(0.0, 5.0, 0.05, 0.05, EloModel::Normalized).unwrap()),
        }
    }

    fn sel() -> EngineSel {
        EngineSel {
            name: "ext".to_owned(),
            options: BTreeMap::from([("Hash".to_owned(), "4".to_owned())]),
            registered: Some(EngineRef {
                name: "ext".to_owned(),
                sha256: "a".repeat(64),
                size: 1,
                signature: Some(xq_proto::Signature::Bench(1)),
                protocol: Protocol::Uci,
                options: BTreeMap::from([("Threads".to_owned(), "1".to_owned())]),
                coords: None,
                binaries: Vec::new(),
                source: None,
            }),
        }
    }

    fn run(spec: SpsaSpec) -> RunStatus {
        let state = spec.initial_state().unwrap();
        RunStatus {
            id: 7,
            spec: RunSpec {
                name: "tune".to_owned(),
                priority: 2,
                batch_pairs: 4,
                settings: MatchSettings {
                    limit: Limit::Nodes(300),
                    hash_mb: 1,
                    rules: xq_engine::rules::RuleSet::STANDARD,
                    openings: OpeningSource::Builtin { random_plies: 2 },
                    seed: 1,
                    adjudication: Adjudication::default(),
                    draw_contempt: true,
                    threads: 1,
                },
                kind: KindSpec::Spsa(spec),
                workers: Default::default(),
                keep_games: Default::default(),
            },
            state: RunState::Active,
            totals: Totals::default(),
            target_pairs: Some(20),
            pairs_in_flight: 0,
            created_ms: 0,
            updated_ms: 0,
            progress: Progress::Spsa(Box::new(state)),
            flag: None,
            linked: None,
            author: None,
            rejection: None,
            share: crate::runs::change::DEFAULT_SHARE,
        }
    }

    #[test]
    fn the_batch_is_the_pairs_per_iteration() {
        let resolve = |ppi: u32, batch: u32| {
            let mut s = spec(None);
            s.pairs_per_iteration = ppi;
            s.batch_pairs(batch).map(|b| (b, s.pairs_per_iteration))
        };
        assert_eq!(
            resolve(0, 0).ok(),
            Some((DEFAULT_SPSA_BATCH_PAIRS, DEFAULT_SPSA_BATCH_PAIRS))
        );
        assert_eq!(resolve(8, 0).ok(), Some((8, 8)));
        assert_eq!(resolve(0, 6).ok(), Some((6, 6)));
        assert_eq!(resolve(5, 5).ok(), Some((5, 5)));
        let err = resolve(5, 6).unwrap_err();
        assert!(err.to_string().contains("pairs_per_iteration"), "{err}");
    }

    #[test]
    fn an_external_tune_sends_theta_as_options_and_verifies_with_the_same_engine() {
        let s = spec(Some(sel()));
        let run = run(s.clone());
        let work = s
            .slice_work(
                &run,
                &Slice {
                    offset: 0,
                    pairs: 4,
                    variant: None,
                },
            )
            .unwrap();
        for p in &work.players {
            assert!(p.params.is_empty());
            let e = p.engine.as_ref().unwrap();
            assert_eq!(e.options["Threads"], "1");
            assert_eq!(e.options["Hash"], "4");
            let chariot: f64 = e.options["chariot_value"].parse().unwrap();
            assert_eq!(chariot.fract(), 0.0);
            let scale: f64 = e.options["Scale"].parse().unwrap();
            assert!((0.5..=2.0).contains(&scale) && scale != 1.0, "{scale}");
        }
        let mut state = run.progress.spsa().cloned().unwrap();
        state.params[0].theta = 612.4;
        state.params[1].theta = 1.25;
        let verify = s.verification(&run, &state, s.verify.unwrap());
        assert_eq!(verify.name, "tune verify");
        assert_eq!(
            (verify.priority, verify.settings.clone()),
            (2, run.spec.settings.clone())
        );
        let KindSpec::Sprt(sprt) = verify.kind else {
            panic!("an sprt")
        };
        let dev = sprt.lineup.dev.unwrap();
        let base = sprt.lineup.base.unwrap();
        assert_eq!(dev.options["chariot_value"], "612");
        assert_eq!(dev.options["Scale"], "1.25");
        assert_eq!(base.options["chariot_value"], "400");
        assert_eq!(dev.options["Hash"], "4");
        assert_eq!(dev.registered, sel().registered);
    }

    #[test]
    fn a_builtin_tune_verifies_with_parameter_maps() {
        let mut s = spec(None);
        s.params.truncate(1);
        let run = run(s.clone());
        let mut state = run.progress.spsa().cloned().unwrap();
        state.params[0].theta = 899.6;
        let KindSpec::Sprt(sprt) = s.verification(&run, &state, s.verify.unwrap()).kind else {
            panic!("an sprt")
        };
        assert_eq!(sprt.dev_params["chariot_value"], 900);
        assert_eq!(sprt.base_params["chariot_value"], 400);
        assert_eq!(sprt.lineup, Lineup::default());
        assert_eq!(sprt.max_pairs, None);
    }
}
