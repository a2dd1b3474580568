//! `variants`: rule sets compared with one engine.

use std::path::PathBuf;

use clap::Args;
use xq_proto::pb;

use super::{Files, KindArgs, MatchArgs, Size, params};
use crate::runs::RunKind;

/// Rule variants compared with one engine: `--rules a,b,…` (the first is the
/// reference), `--pairs` per variant.
#[derive(Debug, Clone, Args)]
pub struct VariantsRunArgs {
    /// Parameter overrides of the engine (both players).
    #[arg(long)]
    params: Option<PathBuf>,
    #[command(flatten)]
    size: Size,
    #[command(flatten)]
    settings: MatchArgs,
}

impl VariantsRunArgs {
    /// `--rules`, split at the commas.
    fn rule_list(&self) -> Vec<String> {
        self.settings
            .rules
            .split(',')
            .map(|r| r.trim().to_owned())
            .collect()
    }
}

impl KindArgs for VariantsRunArgs {
    fn kind(&self) -> RunKind {
        RunKind::Variants
    }

    fn settings(&self) -> &MatchArgs {
        &self.settings
    }

    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind> {
        Ok(pb::run_spec::Kind::Variants(pb::VariantsSpec {
            rules: self.rule_list(),
            params: params::overrides(self.params.as_deref(), files)?,
            pairs: self.size.required_pairs()?,
        }))
    }

    /// The first of `--rules`, the reference.
    fn rules(&self) -> String {
        self.rule_list().swap_remove(0)
    }
}
