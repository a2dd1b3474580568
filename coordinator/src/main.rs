//! `xq-coordinator`: the coordinator binary. Parsing lives in [`cli`]; the
//! work lives in the library.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use tracing_subscriber::EnvFilter;
use xq_worker::BatchPlayer;

mod cli;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if xq_worker::cli::stdout::closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xq-coordinator: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The game runner for local mode, for `threads` parallel games.
fn player(threads: u32) -> anyhow::Result<Arc<dyn BatchPlayer>> {
    Ok(Arc::new(xq_worker::EnginePlayer::new(threads as usize)?))
}

fn run() -> anyhow::Result<()> {
    cli::Cli::parse().run(&player)
}
