//! `sprt`: a sequential test of `--dev` against `--base`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xq_proto::pb;

use super::{EngineArgs, Files, KindArgs, MatchArgs, Size, params};
use crate::runs::RunKind;
use crate::stats::EloModel;

/// An SPRT of `--dev` against `--base`.
#[derive(Debug, Clone, Args)]
pub struct SprtRunArgs {
    /// Parameter overrides of the engine under test (TOML `name = value`).
    #[arg(long)]
    dev: Option<PathBuf>,
    /// Parameter overrides of the baseline.
    #[arg(long)]
    base: Option<PathBuf>,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    elo0: f64,
    #[arg(long, default_value_t = 5.0, allow_hyphen_values = true)]
    elo1: f64,
    #[arg(long, value_enum, default_value = "normalized")]
    model: ModelArg,
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    #[command(flatten)]
    size: Size,
    #[command(flatten)]
    engines: EngineArgs,
    #[command(flatten)]
    settings: MatchArgs,
}

/// `--model`: the Elo the bounds are in (also the `stats sprt` calculator's).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModelArg {
    Logistic,
    Normalized,
}

impl From<ModelArg> for EloModel {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Logistic => EloModel::Logistic,
            ModelArg::Normalized => EloModel::Normalized,
        }
    }
}

impl From<ModelArg> for pb::EloModel {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Logistic => pb::EloModel::Logistic,
            ModelArg::Normalized => pb::EloModel::Normalized,
        }
    }
}

impl KindArgs for SprtRunArgs {
    fn kind(&self) -> RunKind {
        RunKind::Sprt
    }

    fn settings(&self) -> &MatchArgs {
        &self.settings
    }

    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind> {
        Ok(pb::run_spec::Kind::Sprt(pb::SprtSpec {
            dev_params: params::overrides(self.dev.as_deref(), files)?,
            base_params: params::overrides(self.base.as_deref(), files)?,
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
            model: pb::EloModel::from(self.model).into(),
            max_games: self.size.pairs()?.map_or(0, |p| 2 * p),
            engines: self.engines.choice()?,
        }))
    }
}
