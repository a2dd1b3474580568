//! SPSA (simultaneous perturbation stochastic approximation) exactly as
//! fishtest runs it, as pure functions over a serializable state.
//!
//! # Formulas
//!
//! Each parameter has a start value θ₀, bounds `[min, max]`, and the user's
//! end-of-run perturbation `c_end` and learning rate `r_end`. For a run of
//! `games` games:
//!
//! ```text
//! N = games / 2                      iterations (one per game pair)
//! A = 0.1·N  (settable), α = 0.602, γ = 0.101
//! c = c_end · N^γ                    so that c_N = c_end
//! a = r_end · c_end² · (A + N)^α     so that R_N·c_N² = r_end·c_end²
//! ```
//!
//! A request made when `iter` pairs have been played uses `k = iter + 1`:
//!
//! ```text
//! c_k = c / k^γ
//! R_k = a / (A + k)^α / c_k²
//! flip = ±1 per parameter, uniformly
//! θ+ = clip(θ + c_k·flip),  θ− = clip(θ − c_k·flip)
//! ```
//!
//! θ+ plays θ−; `W` and `L` are θ+'s wins and losses over the request's
//! games. The result moves every parameter by
//!
//! ```text
//! θ ← clip(θ + R_k · c_k · (W − L) · flip)
//! ```
//!
//! and advances `iter` by the number of pairs played. As in fishtest, a
//! request may cover several pairs (a batch): the whole batch uses one flip
//! vector and the `k` of the request, its `W − L` is summed, and `iter`
//! grows by the batch's pair count.
//!
//! Integer parameters keep a real θ; the values handed to engines are
//! rounded stochastically (`⌊x⌋ + 1` with probability `x − ⌊x⌋`), so the
//! expected value sent equals the real one.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::Wdl;

/// Fishtest's step-size decay exponent α.
pub const DEFAULT_ALPHA: f64 = 0.602;
/// Fishtest's perturbation decay exponent γ.
pub const DEFAULT_GAMMA: f64 = 0.101;
/// Fishtest's stability constant as a fraction of N.
pub const DEFAULT_A_FRACTION: f64 = 0.1;

/// Errors from SPSA configuration and updates.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpsaError {
    #[error("invalid spsa parameter {name:?}: {reason}")]
    Param { name: String, reason: String },
    #[error("an spsa run needs at least one parameter")]
    NoParams,
    #[error("an spsa run needs at least 2 games, got {0}")]
    TooFewGames(u64),
    #[error("invalid spsa setting {name} = {value}: {reason}")]
    Setting {
        name: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("a result must cover whole game pairs, got {0} games")]
    OddGames(u64),
    #[error("the request has {request} parameters but the run has {state}")]
    Mismatch { request: usize, state: usize },
}

/// A parameter as the user declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaParamSpec {
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// Perturbation at the end of the run, in parameter units.
    pub c_end: f64,
    /// Learning rate at the end of the run (dimensionless).
    pub r_end: f64,
    /// Whether engines take whole numbers (see the module docs).
    pub integer: bool,
}

/// Run-wide settings; `a_big = None` means `0.1·N`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpsaConfig {
    pub games: u64,
    pub a_big: Option<f64>,
    pub alpha: f64,
    pub gamma: f64,
}

impl SpsaConfig {
    /// Fishtest's defaults for a run of `games` games.
    pub fn new(games: u64) -> Self {
        SpsaConfig {
            games,
            a_big: None,
            alpha: DEFAULT_ALPHA,
            gamma: DEFAULT_GAMMA,
        }
    }
}

/// One parameter's persistent state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaParam {
    pub name: String,
    /// Current estimate, always within `[min, max]`.
    pub theta: f64,
    pub min: f64,
    pub max: f64,
    pub integer: bool,
    /// `c_end · N^γ`.
    pub c: f64,
    /// `r_end · c_end² · (A + N)^α`.
    pub a: f64,
}

impl SpsaParam {
    fn clip(&self, value: f64) -> f64 {
        value.clamp(self.min, self.max)
    }
}

/// Everything needed to continue a run; plain data for storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaState {
    /// Planned iterations N (pairs).
    pub iterations: u64,
    /// Stability constant A.
    pub a_big: f64,
    pub alpha: f64,
    pub gamma: f64,
    /// Pairs whose results have been applied.
    pub iter: u64,
    pub params: Vec<SpsaParam>,
}

/// Per-parameter data of one request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpsaRequestParam {
    pub c_k: f64,
    pub r_k: f64,
    /// +1 or −1.
    pub flip: i8,
}

/// What a worker plays: θ+ against θ−. Plain data, so it can be stored with
/// the task and replayed into [`apply_result`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaRequest {
    /// The run's `iter` when the request was made; `k = iter + 1`.
    pub iter: u64,
    pub params: Vec<SpsaRequestParam>,
    /// Values for the first player (rounded for integer parameters).
    pub theta_plus: Vec<f64>,
    /// Values for the second player (rounded for integer parameters).
    pub theta_minus: Vec<f64>,
}

impl SpsaState {
    /// Validates the parameters and settings and computes `c` and `a`.
    pub fn new(specs: Vec<SpsaParamSpec>, config: SpsaConfig) -> Result<Self, SpsaError> {
        if specs.is_empty() {
            return Err(SpsaError::NoParams);
        }
        if config.games < 2 {
            return Err(SpsaError::TooFewGames(config.games));
        }
        let n = (config.games / 2) as f64;
        let a_big = config.a_big.unwrap_or(DEFAULT_A_FRACTION * n);
        let settings = [
            (
                "A",
                a_big,
                a_big.is_finite() && a_big >= 0.0,
                "must be finite and >= 0",
            ),
            (
                "alpha",
                config.alpha,
                config.alpha > 0.0 && config.alpha.is_finite(),
                "must be positive",
            ),
            (
                "gamma",
                config.gamma,
                config.gamma > 0.0 && config.gamma.is_finite(),
                "must be positive",
            ),
        ];
        for (name, value, ok, reason) in settings {
            if !ok {
                return Err(SpsaError::Setting {
                    name,
                    value,
                    reason,
                });
            }
        }
        let params = specs
            .into_iter()
            .map(|s| {
                validate(&s)?;
                Ok(SpsaParam {
                    c: s.c_end * n.powf(config.gamma),
                    a: s.r_end * s.c_end * s.c_end * (a_big + n).powf(config.alpha),
                    name: s.name,
                    theta: s.start,
                    min: s.min,
                    max: s.max,
                    integer: s.integer,
                })
            })
            .collect::<Result<_, SpsaError>>()?;
        Ok(SpsaState {
            iterations: config.games / 2,
            a_big,
            alpha: config.alpha,
            gamma: config.gamma,
            iter: 0,
            params,
        })
    }

    /// Current θ of every parameter.
    pub fn theta(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.theta).collect()
    }

    /// `c_k` and `R_k` of a parameter for a request made at `iter`.
    pub fn gains(&self, param: &SpsaParam, iter: u64) -> (f64, f64) {
        let k = (iter + 1) as f64;
        let c_k = param.c / k.powf(self.gamma);
        let r_k = param.a / (self.a_big + k).powf(self.alpha) / (c_k * c_k);
        (c_k, r_k)
    }

    /// Whether the planned number of pairs has been played.
    pub fn finished(&self) -> bool {
        self.iter >= self.iterations
    }
}

fn validate(s: &SpsaParamSpec) -> Result<(), SpsaError> {
    let fail = |reason: String| {
        Err(SpsaError::Param {
            name: s.name.clone(),
            reason,
        })
    };
    let all_finite = [s.start, s.min, s.max, s.c_end, s.r_end]
        .iter()
        .all(|x| x.is_finite());
    if !all_finite {
        return fail("values must be finite".to_owned());
    }
    if s.min >= s.max {
        return fail(format!("min {} must be below max {}", s.min, s.max));
    }
    if !(s.min..=s.max).contains(&s.start) {
        return fail(format!(
            "start {} lies outside [{}, {}]",
            s.start, s.min, s.max
        ));
    }
    if s.c_end <= 0.0 || s.r_end <= 0.0 {
        return fail(format!(
            "c_end {} and r_end {} must be positive",
            s.c_end, s.r_end
        ));
    }
    if s.integer && (s.min.fract() != 0.0 || s.max.fract() != 0.0) {
        return fail(format!(
            "integer bounds [{}, {}] must be whole numbers",
            s.min, s.max
        ));
    }
    Ok(())
}

fn stochastic_round(x: f64, rng: &mut impl Rng) -> f64 {
    let floor = x.floor();
    if rng.random::<f64>() < x - floor {
        floor + 1.0
    } else {
        floor
    }
}

/// Draws the flips and builds the next request at the run's current `iter`.
pub fn next_request(state: &SpsaState, rng: &mut impl Rng) -> SpsaRequest {
    let mut params = Vec::with_capacity(state.params.len());
    let mut theta_plus = Vec::with_capacity(state.params.len());
    let mut theta_minus = Vec::with_capacity(state.params.len());
    for p in &state.params {
        let (c_k, r_k) = state.gains(p, state.iter);
        let flip: i8 = if rng.random::<bool>() { 1 } else { -1 };
        let shift = c_k * f64::from(flip);
        let mut plus = p.clip(p.theta + shift);
        let mut minus = p.clip(p.theta - shift);
        if p.integer {
            plus = stochastic_round(plus, rng);
            minus = stochastic_round(minus, rng);
        }
        params.push(SpsaRequestParam { c_k, r_k, flip });
        theta_plus.push(plus);
        theta_minus.push(minus);
    }
    SpsaRequest {
        iter: state.iter,
        params,
        theta_plus,
        theta_minus,
    }
}

/// Applies a request's games (`result`, from θ+'s side): `θ ← clip(θ +
/// R_k·c_k·(W − L)·flip)` and `iter += games / 2`. The total number of games
/// must be even (whole pairs); zero games change nothing.
pub fn apply_result(
    state: &mut SpsaState,
    request: &SpsaRequest,
    result: Wdl,
) -> Result<(), SpsaError> {
    if request.params.len() != state.params.len() {
        return Err(SpsaError::Mismatch {
            request: request.params.len(),
            state: state.params.len(),
        });
    }
    let games = result.games();
    if games % 2 == 1 {
        return Err(SpsaError::OddGames(games));
    }
    let score = result.wins as f64 - result.losses as f64;
    for (p, r) in state.params.iter_mut().zip(&request.params) {
        p.theta = p.clip(p.theta + r.r_k * r.c_k * score * f64::from(r.flip));
    }
    state.iter += games / 2;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn spec(
        name: &str,
        start: f64,
        min: f64,
        max: f64,
        c_end: f64,
        integer: bool,
    ) -> SpsaParamSpec {
        SpsaParamSpec {
            name: name.to_owned(),
            start,
            min,
            max,
            c_end,
            r_end: 0.002,
            integer,
        }
    }

    #[test]
    fn gains_follow_the_fishtest_formulas() {
        let state = SpsaState::new(
            vec![spec("x", 50.0, 0.0, 100.0, 4.0, false)],
            SpsaConfig::new(20_000),
        )
        .unwrap();
        let p = &state.params[0];
        let n: f64 = 10_000.0;
        assert_eq!(state.iterations, 10_000);
        assert!((state.a_big - 1_000.0).abs() < 1e-12);
        assert!((p.c - 4.0 * n.powf(0.101)).abs() < 1e-12);
        assert!((p.a - 0.002 * 16.0 * (1_000.0 + n).powf(0.602)).abs() < 1e-9);
        // At the last iteration c_k = c_end and R_k·c_k² = r_end·c_end².
        let (c_k, r_k) = state.gains(p, 9_999);
        assert!((c_k - 4.0).abs() < 1e-12);
        assert!((r_k * c_k * c_k - 0.002 * 16.0).abs() < 1e-12);
        let (c_1, _) = state.gains(p, 0);
        assert!((c_1 - p.c).abs() < 1e-12);
    }

    #[test]
    fn request_and_update_are_exact_and_batches_advance_iter() {
        let mut state = SpsaState::new(
            vec![
                spec("x", 50.0, 0.0, 100.0, 4.0, false),
                spec("n", 99.0, 0.0, 100.0, 3.0, true),
            ],
            SpsaConfig::new(20_000),
        )
        .unwrap();
        state.iter = 9_999;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let req = next_request(&state, &mut rng);
        let f0 = f64::from(req.params[0].flip);
        assert!((req.theta_plus[0] - (50.0 + 4.0 * f0)).abs() < 1e-9);
        assert!((req.theta_minus[0] - (50.0 - 4.0 * f0)).abs() < 1e-9);
        for v in [req.theta_plus[1], req.theta_minus[1]] {
            assert_eq!(v.fract(), 0.0);
            assert!((0.0..=100.0).contains(&v));
        }
        let result = Wdl {
            wins: 5,
            draws: 4,
            losses: 3,
        };
        apply_result(&mut state, &req, result).unwrap();
        assert_eq!(state.iter, 9_999 + 6);
        let step = req.params[0].r_k * req.params[0].c_k * 2.0 * f0;
        assert!((state.params[0].theta - (50.0 + step)).abs() < 1e-12);
        let odd = Wdl {
            wins: 1,
            draws: 0,
            losses: 0,
        };
        assert_eq!(
            apply_result(&mut state, &req, odd),
            Err(SpsaError::OddGames(1))
        );
    }

    #[test]
    fn stochastic_rounding_is_unbiased() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mean = (0..20_000)
            .map(|_| stochastic_round(2.3, &mut rng))
            .sum::<f64>()
            / 20_000.0;
        assert!((mean - 2.3).abs() < 0.02, "{mean}");
    }

    #[test]
    fn state_round_trips_through_json() {
        let state = SpsaState::new(
            vec![spec("x", 1.0, 0.0, 2.0, 0.5, false)],
            SpsaConfig::new(100),
        )
        .unwrap();
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<SpsaState>(&text).unwrap(), state);
    }

    #[test]
    fn invalid_configurations_are_errors() {
        let bad = |s: SpsaParamSpec| SpsaState::new(vec![s], SpsaConfig::new(100)).unwrap_err();
        assert!(
            bad(spec("x", 5.0, 10.0, 0.0, 1.0, false))
                .to_string()
                .contains("\"x\"")
        );
        assert!(matches!(
            bad(spec("x", 50.0, 0.0, 10.0, 1.0, false)),
            SpsaError::Param { .. }
        ));
        assert!(matches!(
            bad(spec("x", 5.0, 0.0, 10.0, 0.0, false)),
            SpsaError::Param { .. }
        ));
        assert!(matches!(
            bad(spec("x", 5.0, 0.5, 10.0, 1.0, true)),
            SpsaError::Param { .. }
        ));
        assert_eq!(
            SpsaState::new(vec![], SpsaConfig::new(100)),
            Err(SpsaError::NoParams)
        );
        let one = vec![spec("x", 5.0, 0.0, 10.0, 1.0, false)];
        assert_eq!(
            SpsaState::new(one, SpsaConfig::new(1)),
            Err(SpsaError::TooFewGames(1))
        );
    }

    /// Logistic expected score of an Elo difference.
    fn score(elo: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-elo / 400.0))
    }

    /// One game's `W − L` for the first player at Elo advantage `elo`;
    /// draws take 40 % of the probability mass left by the decisive edge.
    fn play(elo: f64, rng: &mut impl Rng) -> (u64, u64, u64) {
        let s = score(elo);
        let draw = 0.4 * (1.0 - (2.0 * s - 1.0).abs());
        let win = s - draw / 2.0;
        let u: f64 = rng.random();
        if u < win {
            (1, 0, 0)
        } else if u < win + draw {
            (0, 1, 0)
        } else {
            (0, 0, 1)
        }
    }

    /// SPSA on a known Elo surface `−k₁(x − 100)² − k₂(n + 20)²` from a start
    /// far off (60 and 50 away), in batches of 4 pairs, must end near the
    /// optimum. A wrong sign, gain or clip moves θ away or leaves it stuck.
    #[test]
    fn converges_on_a_noisy_elo_surface() {
        let surface = |t: &[f64]| -0.014 * (t[0] - 100.0).powi(2) - 0.056 * (t[1] + 20.0).powi(2);
        let mut state = SpsaState::new(
            vec![
                spec("x", 40.0, 0.0, 200.0, 10.0, false),
                spec("n", 30.0, -100.0, 100.0, 5.0, true),
            ],
            SpsaConfig::new(100_000),
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        while !state.finished() {
            let req = next_request(&state, &mut rng);
            let elo = surface(&req.theta_plus) - surface(&req.theta_minus);
            let mut result = Wdl::default();
            for _ in 0..8 {
                let (w, d, l) = play(elo, &mut rng);
                result.wins += w;
                result.draws += d;
                result.losses += l;
            }
            apply_result(&mut state, &req, result).unwrap();
        }
        assert_eq!(state.iter, 50_000);
        let theta = state.theta();
        assert!((theta[0] - 100.0).abs() < 8.0, "x ended at {}", theta[0]);
        assert!((theta[1] + 20.0).abs() < 5.0, "n ended at {}", theta[1]);
    }
}
