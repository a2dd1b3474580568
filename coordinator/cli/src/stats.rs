//! `xq-coordinator stats …`: the statistics calculator.

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::json;

use xq_coordinator::run_args::ModelArg;
use xq_coordinator::stats::elo::{logistic_elo, normalized_elo};
use xq_coordinator::stats::sprt::SprtParams;
use xq_coordinator::stats::{Pentanomial, Results, Wdl};
use xq_proto::outln;

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(subcommand)]
    command: StatsCommand,
}

#[derive(Debug, Subcommand)]
enum StatsCommand {
    /// SPRT state of a sample: LLR, bounds, state (continue, accepted_h0,
    /// accepted_h1) and the fixed-sample Elo estimate.
    Sprt(SprtArgs),
    /// Logistic Elo with 95 % interval and LOS, and normalized Elo.
    Elo(EloArgs),
    /// Compare two variants' Red/draw/Black results.
    Compare(super::stats_compare::CompareArgs),
}

impl StatsArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            StatsCommand::Sprt(args) => args.run(),
            StatsCommand::Elo(args) => args.run(),
            StatsCommand::Compare(args) => args.run(),
        }
    }
}

/// A sample given either as pentanomial pair counts or as W,D,L.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct SampleArgs {
    /// Game-pair counts LL,LD+DL,LW+DD+WL,DW+WD,WW (pair score 0 … 2 for the
    /// first player).
    #[arg(long, value_name = "LL,LD,DD,DW,WW", allow_hyphen_values = true)]
    penta: Option<String>,
    /// Game counts: wins, draws, losses of the first player.
    #[arg(long, value_name = "W,D,L", allow_hyphen_values = true)]
    wdl: Option<String>,
}

impl SampleArgs {
    fn results(&self) -> anyhow::Result<Results> {
        match (&self.penta, &self.wdl) {
            (Some(p), _) => Ok(p.parse::<Pentanomial>()?.into()),
            (None, Some(w)) => Ok(w.parse::<Wdl>()?.into()),
            (None, None) => anyhow::bail!("give either --penta or --wdl"),
        }
    }
}

#[derive(Debug, Args)]
struct SprtArgs {
    #[command(flatten)]
    sample: SampleArgs,
    /// Elo of H0.
    #[arg(long, allow_negative_numbers = true)]
    elo0: f64,
    /// Elo of H1 (must exceed elo0).
    #[arg(long, allow_negative_numbers = true)]
    elo1: f64,
    /// Elo model of the bounds.
    #[arg(long, value_enum, default_value = "normalized")]
    model: ModelArg,
    /// Probability of accepting H1 when elo = elo0.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Probability of accepting H0 when elo = elo1.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Print one JSON object instead of `key: value` lines.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct SprtReport {
    llr: f64,
    lower_bound: f64,
    upper_bound: f64,
    state: &'static str,
    elo: f64,
    elo95: f64,
    los: f64,
}

impl SprtArgs {
    fn run(self) -> anyhow::Result<()> {
        let results = self.sample.results()?;
        let params = SprtParams::new(
            self.elo0,
            self.elo1,
            self.alpha,
            self.beta,
            self.model.into(),
        )?;
        let outcome = params.evaluate(&results).context("computing the llr")?;
        let elo = logistic_elo(&results)?;
        let report = SprtReport {
            llr: outcome.llr,
            lower_bound: outcome.lower_bound,
            upper_bound: outcome.upper_bound,
            state: outcome.state.as_str(),
            elo: elo.elo,
            elo95: elo.elo95,
            los: elo.los,
        };
        if self.json {
            outln!("{}", serde_json::to_string_pretty(&report)?)?;
        } else {
            outln!("llr: {:.6}", report.llr)?;
            outln!("lower_bound: {:.6}", report.lower_bound)?;
            outln!("upper_bound: {:.6}", report.upper_bound)?;
            outln!("state: {}", report.state)?;
            outln!("elo: {:.6}", report.elo)?;
            outln!("elo95: {:.6}", report.elo95)?;
            outln!("los: {:.6}", report.los)?;
        }
        Ok(())
    }
}

#[derive(Debug, Args)]
struct EloArgs {
    #[command(flatten)]
    sample: SampleArgs,
    /// Print one JSON object instead of `key: value` lines.
    #[arg(long)]
    json: bool,
}

impl EloArgs {
    fn run(self) -> anyhow::Result<()> {
        let results = self.sample.results()?;
        let e = logistic_elo(&results)?;
        let n = normalized_elo(&results)?;
        if self.json {
            let value = json!({
                "games": e.games.round(),
                "score": e.score,
                "elo": e.elo,
                "elo95": e.elo95,
                "los": e.los,
                "nelo": n.nelo,
                "nelo_lower": n.lower,
                "nelo_upper": n.upper,
            });
            outln!("{}", serde_json::to_string_pretty(&value)?)?;
        } else {
            outln!("games: {}", e.games.round())?;
            outln!("score: {:.6}", e.score)?;
            outln!("elo: {:.6}", e.elo)?;
            outln!("elo95: {:.6}", e.elo95)?;
            outln!("los: {:.6}", e.los)?;
            outln!("nelo: {:.6}", n.nelo)?;
            outln!("nelo95: [{:.6}, {:.6}]", n.lower, n.upper)?;
        }
        Ok(())
    }
}
