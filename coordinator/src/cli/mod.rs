//! Command-line interface: one module per subcommand group, each with its
//! clap arguments and a `run` that validates them and calls the library.

use clap::{Parser, Subcommand};

mod stats;
mod stats_compare;

/// Xiangqi self-play and tuning coordinator.
#[derive(Debug, Parser)]
#[command(name = "xq-coordinator", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Statistics calculator: Elo, SPRT and variant comparison.
    Stats(stats::StatsArgs),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Stats(args) => args.run(),
        }
    }
}
