//! `datagen`: training data, one engine playing itself at a fixed node count.

use std::path::PathBuf;

use clap::Args;
use xq_proto::pb;

use super::{Files, KindArgs, MatchArgs, Size, options, params};
use crate::runs::RunKind;

/// One engine plays itself `--pairs` game pairs at `--nodes N` from the
/// run's openings (`--random-plies`, `--book`, or both); every game is kept
/// for `datagen-export`.
#[derive(Debug, Clone, Args)]
pub struct DatagenRunArgs {
    /// Registered engine (`engine add`) that plays instead of the built-in engine.
    #[arg(long)]
    engine: Option<String>,
    /// An option of the registered engine, `NAME=VALUE` (repeatable).
    #[arg(long = "engine-option")]
    engine_options: Vec<String>,
    /// Parameter overrides of the built-in engine (TOML `name = value`).
    #[arg(long)]
    params: Option<PathBuf>,
    #[command(flatten)]
    size: Size,
    #[command(flatten)]
    settings: MatchArgs,
}

impl KindArgs for DatagenRunArgs {
    fn kind(&self) -> RunKind {
        RunKind::Datagen
    }

    fn settings(&self) -> &MatchArgs {
        &self.settings
    }

    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind> {
        Ok(pb::run_spec::Kind::Datagen(pb::DatagenSpec {
            engine: self.engine.clone().unwrap_or_default(),
            engine_options: options(&self.engine_options)?,
            params: params::overrides(self.params.as_deref(), files)?,
            pairs: self.size.required_pairs()?,
        }))
    }
}
