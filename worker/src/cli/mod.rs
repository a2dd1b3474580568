//! Command-line interface of `xq-worker`: one module per subcommand.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod play;
mod test_release;
mod work;

/// Xiangqi worker: plays games for matches and for the cluster.
#[derive(Debug, Parser)]
#[command(name = "xq-worker", about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Plays a local match between two parameter sets and prints the result.
    Play(Box<play::PlayArgs>),
    /// Registers with a coordinator and plays leased games until Ctrl-C.
    Work(Box<work::WorkArgs>),
    /// Writes a copy of this worker that reports another version (its
    /// version slot patched), to try the self-update without a rebuild.
    MakeTestRelease(test_release::TestReleaseArgs),
}

impl Cli {
    /// The command line of this process, with the version this executable
    /// carries ([`crate::version`]): `--version` prints it and the target
    /// triple. Exits on bad arguments, as clap does.
    pub fn parse_args() -> Cli {
        let long = crate::version::long_version().leak();
        let matches = Cli::command()
            .version(crate::version::version())
            .long_version(&*long)
            .get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// Runs the chosen subcommand.
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Play(args) => args.run(),
            Command::Work(args) => args.run(),
            Command::MakeTestRelease(args) => args.run(),
        }
    }
}
