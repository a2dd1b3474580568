//! `spsa`: a tune of parameters, optionally verified by an SPRT.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use xq_proto::pb;

use super::{Files, KindArgs, MatchArgs, Size, options, params};
use crate::runs::RunKind;

/// An SPSA tuning run.
#[derive(Debug, Clone, Args)]
pub struct SpsaRunArgs {
    /// Tuned parameters: TOML, one table per parameter, or fishtest/OpenBench
    /// lines `name, int|float, start, min, max[, c_end, r_end]`.
    #[arg(long)]
    params: PathBuf,
    #[command(flatten)]
    size: Size,
    /// Registered engine (`engine add`) to tune through its spin options
    /// instead of the built-in engine.
    #[arg(long)]
    engine: Option<String>,
    /// An option of the tuned engine, `NAME=VALUE` (repeatable).
    #[arg(long = "engine-option")]
    engine_options: Vec<String>,
    /// When the tune ends, verify it with an SPRT of the tuned values against
    /// the start values, e.g. `--verify 0,5` (normalized Elo).
    #[arg(long, value_name = "ELO0,ELO1", allow_hyphen_values = true)]
    verify: Option<String>,
    #[command(flatten)]
    settings: MatchArgs,
}

impl KindArgs for SpsaRunArgs {
    fn kind(&self) -> RunKind {
        RunKind::Spsa
    }

    fn settings(&self) -> &MatchArgs {
        &self.settings
    }

    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind> {
        Ok(pb::run_spec::Kind::Spsa(pb::SpsaSpec {
            params: params::spsa(&self.params, files)?,
            games: 2 * self.size.required_pairs()?,
            engine: self.engine.clone().unwrap_or_default(),
            engine_options: options(&self.engine_options)?,
            pairs_per_iteration: 0,
            verify: self.verify.as_deref().map(verify_bounds).transpose()?,
        }))
    }
}

/// `ELO0,ELO1` of `--verify`.
fn verify_bounds(text: &str) -> anyhow::Result<pb::SpsaVerify> {
    let parsed = text
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    let Some((elo0, elo1)) = parsed else {
        bail!("bad --verify {text:?}: expected ELO0,ELO1, e.g. 0,5");
    };
    Ok(pb::SpsaVerify { elo0, elo1 })
}
