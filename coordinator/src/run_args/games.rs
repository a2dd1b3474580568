//! `games`: a fixed number of game pairs.

use std::path::PathBuf;

use clap::Args;
use xq_proto::pb;

use super::{EngineArgs, Files, KindArgs, MatchArgs, Size, params};
use crate::runs::RunKind;

/// A fixed number of game pairs of `--dev` against `--base`.
#[derive(Debug, Clone, Args)]
pub struct GamesRunArgs {
    /// Parameter overrides of the first player (TOML `name = value`).
    #[arg(long)]
    dev: Option<PathBuf>,
    /// Parameter overrides of the second player.
    #[arg(long)]
    base: Option<PathBuf>,
    #[command(flatten)]
    size: Size,
    #[command(flatten)]
    engines: EngineArgs,
    #[command(flatten)]
    settings: MatchArgs,
}

impl KindArgs for GamesRunArgs {
    fn kind(&self) -> RunKind {
        RunKind::Games
    }

    fn settings(&self) -> &MatchArgs {
        &self.settings
    }

    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind> {
        Ok(pb::run_spec::Kind::Games(pb::GamesSpec {
            dev_params: params::overrides(self.dev.as_deref(), files)?,
            base_params: params::overrides(self.base.as_deref(), files)?,
            pairs: self.size.required_pairs()?,
            engines: self.engines.choice()?,
        }))
    }
}
