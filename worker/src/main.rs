//! `xq-worker`: connects to a coordinator and plays the game pairs it leases.
//!
//! The player is pluggable ([`player`]); this build has no game runner yet
//! (issue 5), so `xq-worker work` stops with a clear message instead of
//! pretending to play.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tracing_subscriber::EnvFilter;
use xq_worker::BatchPlayer;
use xq_worker::client::{self, ClientConfig};

/// Xiangqi cluster worker.
#[derive(Debug, Parser)]
#[command(name = "xq-worker", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Register with a coordinator and play leased games until Ctrl-C.
    Work(WorkArgs),
}

#[derive(Debug, Args)]
struct WorkArgs {
    /// Coordinator address, e.g. http://127.0.0.1:50051.
    #[arg(long)]
    coordinator: String,
    /// Access token, sent as `authorization: Bearer <TOKEN>`.
    #[arg(long)]
    token: Option<String>,
    /// Games played in parallel.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// Name shown in the coordinator's logs; defaults to the host name.
    #[arg(long)]
    name: Option<String>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xq-worker: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The game runner for `threads` parallel games. The one place to wire the
/// real runner (`worker::runner::EnginePlayer`) once it exists.
fn player(_threads: u32) -> anyhow::Result<Arc<dyn BatchPlayer>> {
    anyhow::bail!("this build has no game runner yet (issue 5): it cannot play leased games")
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let Command::Work(args) = cli.command;
    let player = player(args.threads)?;
    let name = args
        .name
        .unwrap_or_else(|| std::env::var("HOSTNAME").unwrap_or_else(|_| "xq-worker".to_owned()));
    let mut config = ClientConfig::new(args.coordinator, name, args.threads);
    config.token = args.token;
    let runtime = tokio::runtime::Runtime::new().context("start the async runtime")?;
    let summary = runtime.block_on(client::run(config, player, async {
        let _ = tokio::signal::ctrl_c().await;
    }))?;
    tracing::info!(
        leases = summary.leases_accepted,
        pairs = summary.pairs_accepted,
        "stopped"
    );
    Ok(())
}
