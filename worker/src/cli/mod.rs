//! Command-line interface of `xq-worker`: one module per subcommand.

use clap::{Parser, Subcommand};

mod play;
mod work;

/// Xiangqi worker: plays games for matches and for the cluster.
#[derive(Debug, Parser)]
#[command(name = "xq-worker", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Plays a local match between two parameter sets and prints the result.
    Play(Box<play::PlayArgs>),
    /// Registers with a coordinator and plays leased games until Ctrl-C.
    Work(work::WorkArgs),
}

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Play(args) => args.run(),
            Command::Work(args) => args.run(),
        }
    }
}
