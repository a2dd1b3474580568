//! `xq-coordinator texel --data FILE`: Texel tuning of the built-in engine's
//! evaluation parameters on training positions (`xq_tune::texel`; the method,
//! options and speed are in coordinator/tune/TUNING.md). The fitted values go
//! to standard output (or `--out`) as a parameter file whose `#` comments give
//! `K`, the losses and the speed; progress goes to standard error.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use xq_engine::Params;
use xq_proto::out;
use xq_tune::texel::{self, FitOptions, Holdout, Lambda, Selection, report};

/// `texel …`.
#[derive(Debug, Args)]
pub struct TexelArgs {
    /// Training positions: `fen | score | result` lines, score in cp and
    /// result (1.0, 0.5, 0.0) for Red, as `datagen-export` writes them.
    #[arg(long)]
    data: PathBuf,
    /// Parameters to fit, comma-separated (e.g. horse_value,cannon_value);
    /// default: every parameter the static evaluation reads. Search
    /// parameters are refused.
    #[arg(long)]
    params: Option<String>,
    /// Start values: a parameter file (`name = value` lines) applied over the
    /// engine's defaults; default: the defaults.
    #[arg(long)]
    start: Option<PathBuf>,
    /// Weight λ of the engine's score in the target, 0..=1: the target is
    /// λ·σ(score) + (1 − λ)·result; 0 fits the results alone.
    #[arg(long, default_value_t = 0.0)]
    lambda: f64,
    /// Share of the positions held out from fitting to measure the loss on
    /// unseen positions, 0..1 (by position hash, so deterministic).
    #[arg(long, default_value_t = Holdout::DEFAULT.get())]
    holdout: f64,
    /// Gradient passes over the training positions.
    #[arg(long, default_value_t = FitOptions::default().iterations,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    iterations: u32,
    /// Adam's first step in parameter units (cp for most), falling linearly
    /// to a tenth of it by the last pass.
    #[arg(long, default_value_t = FitOptions::default().rate)]
    rate: f64,
    /// Write the parameter file here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

impl TexelArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let selection = match &self.params {
            Some(list) => Selection::parse(list).context("bad --params")?,
            None => Selection::all(),
        };
        let lambda = Lambda::new(self.lambda).context("bad --lambda")?;
        let holdout = Holdout::new(self.holdout).context("bad --holdout")?;
        let options = FitOptions {
            lambda,
            iterations: self.iterations,
            rate: self.rate,
        };
        options.validate().context("bad --rate")?;
        let start = match &self.start {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Params::from_toml(&text)
                    .with_context(|| format!("bad parameter file {}", path.display()))?
            }
            None => Params::default(),
        };
        let file = File::open(&self.data)
            .with_context(|| format!("cannot open {}", self.data.display()))?;
        let data = texel::load(BufReader::new(file), &start, &selection, holdout)
            .with_context(|| format!("in {}", self.data.display()))?;
        eprintln!(
            "read {} samples in {:.1} s ({:.0} per second): {} training, {} held out, {} in check left out",
            data.samples,
            data.seconds,
            data.samples as f64 / data.seconds.max(1e-9),
            data.train.len(),
            data.holdout.len(),
            data.in_check
        );
        let every = (self.iterations / 10).max(1);
        let fit = texel::fit(&data, &start, &selection, &options, |pass| {
            if pass.iteration % every == 0 || pass.iteration == 1 {
                eprintln!(
                    "pass {}/{}: training loss {:.6}",
                    pass.iteration, self.iterations, pass.loss
                );
            }
        })
        .context("cannot fit")?;
        let text = report::parameter_file(&fit, &data, &start, &selection);
        match &self.out {
            Some(path) => xq_proto::atomic_file::write(path, text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?,
            None => out!("{text}")?,
        }
        Ok(())
    }
}
