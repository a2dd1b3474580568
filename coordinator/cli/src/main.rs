//! `xq-coordinator`: the coordinator's command-line interface, one module
//! per subcommand group, each with its clap arguments and a `run` that
//! validates them and calls the libraries (`xq-coordinator` for the work,
//! `xq-web` for `report --plot` and the served web view). Progress bars live
//! here, never in a library.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;
use xq_coordinator::local::PlayerFactory;
use xq_worker::BatchPlayer;

mod asset;
mod backup;
mod book;
mod cert;
mod cluster;
mod credentials;
mod datagen_export;
mod display;
mod engine;
mod events;
mod games_source;
mod login;
mod modify;
mod pgn;
mod plot;
mod registry;
mod remote;
mod report_variants;
mod sources;
mod stats;
mod stats_compare;
mod texel;
mod token;
mod user;
mod worker_release;

use cluster::CreateArgs;
use xq_coordinator::run_args::{
    DatagenRunArgs, GamesRunArgs, SprtRunArgs, SpsaRunArgs, VariantsRunArgs,
};

/// Xiangqi self-play and tuning coordinator.
#[derive(Debug, Parser)]
#[command(name = "xq-coordinator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Statistics calculator: Elo, SPRT and variant comparison.
    Stats(stats::StatsArgs),
    /// Run the coordinator (gRPC over a SQLite database).
    Serve(cluster::ServeArgs),
    /// Make the cluster's TLS certificates: a CA for workers (`--ca`) and
    /// the coordinator's certificate for `serve --tls-cert/--tls-key`.
    Cert(cert::CertArgs),
    /// Create an SPRT run on a running coordinator; prints its id.
    Sprt(CreateArgs<SprtRunArgs>),
    /// Create an SPSA run on a running coordinator; prints its id.
    Spsa(CreateArgs<SpsaRunArgs>),
    /// Create a fixed-games run on a running coordinator; prints its id.
    Games(CreateArgs<GamesRunArgs>),
    /// Create a rule-variants run (one engine, `--rules a,b,…`) on a running
    /// coordinator; prints its id.
    Variants(CreateArgs<VariantsRunArgs>),
    /// Create a data-generation run (one engine against itself at `--nodes
    /// N`, every game kept) on a running coordinator; prints its id.
    Datagen(CreateArgs<DatagenRunArgs>),
    /// A run's stored games as training positions: `fen | score | result`
    /// text or Fairy-Stockfish `.bin` records (see coordinator/DATAGEN.md).
    DatagenExport(datagen_export::DatagenExportArgs),
    /// List runs, or show one.
    Status(cluster::StatusArgs),
    /// Follow a run with a progress bar until it ends.
    Watch(cluster::WatchArgs),
    /// A run's final summary (SPSA: with its θ history; variants: the
    /// per-variant report; --csv for plotting).
    Report(cluster::ReportArgs),
    /// Stop a run.
    Stop(cluster::RunRefArgs),
    /// Resume a stopped run where it stood.
    Resume(cluster::RunRefArgs),
    /// Change a running test's cap, priority or throughput share (its
    /// author, an approver or an admin).
    Modify(Box<modify::ModifyArgs>),
    /// Approve a pending run (approvers and admins, not its author).
    Approve(cluster::RunRefArgs),
    /// Reject a pending run with a reason its author sees.
    Reject(cluster::RejectArgs),
    /// Sign in to a served coordinator: stores a personal token for every
    /// remote command (mode 0600, in the user's configuration directory).
    Login(login::LoginArgs),
    /// Revoke the stored personal token and forget it.
    Logout(login::LogoutArgs),
    /// Manage access tokens: any user's in the database (no server needed),
    /// or your own at a coordinator (`--coordinator`).
    Token(token::TokenArgs),
    /// Manage users: in the database file (no server needed), or at a
    /// coordinator with an admin's token (`--coordinator`).
    User(user::UserArgs),
    /// The log of who did what, newest first (from the database file, or a
    /// coordinator with `--coordinator`).
    Events(events::EventsArgs),
    /// Write a run's stored games as PGN, from the database file or a served
    /// coordinator.
    Pgn(pgn::PgnArgs),
    /// Run a coordinator and workers in this process (resumes an identical
    /// unfinished run in the same database).
    Local(cluster::LocalArgs),
    /// The engine registry: add and list external engine executables.
    Engine(engine::EngineArgs),
    /// The registry's assets: add and list network files and opening books.
    Asset(asset::AssetArgs),
    /// Worker releases: `xq-worker` executables workers update to, and the
    /// version they must have (`worker-release add PATH --require`).
    WorkerRelease(worker_release::WorkerReleaseArgs),
    /// Opening books from game records: `book make GAMES.pgn --plies N`.
    Book(book::BookArgs),
    /// Copy the database to FILE while the server keeps running (SQLite's
    /// online backup: one consistent snapshot, checked before it is kept).
    Backup(backup::BackupArgs),
    /// Check a backup (integrity, schema version, xq tables) and install it
    /// as the database; refuses a database a server holds.
    Restore(backup::RestoreArgs),
    /// Texel tuning: fit the engine's evaluation parameters to training
    /// positions; prints the fitted values as a parameter file.
    Texel(texel::TexelArgs),
}

impl Cli {
    /// Runs the command; `player` makes the game runner for local mode.
    fn run(self, player: &PlayerFactory) -> anyhow::Result<()> {
        match self.command {
            Command::Stats(args) => args.run(),
            Command::Engine(args) => args.run(),
            Command::Asset(args) => args.run(),
            Command::WorkerRelease(args) => args.run(),
            Command::Book(args) => args.run(),
            Command::Serve(args) => args.run(),
            Command::Cert(args) => args.run(),
            Command::Sprt(args) => args.run(),
            Command::Spsa(args) => args.run(),
            Command::Games(args) => args.run(),
            Command::Variants(args) => args.run(),
            Command::Datagen(args) => args.run(),
            Command::DatagenExport(args) => args.run(),
            Command::Status(args) => args.run(),
            Command::Watch(args) => args.run(),
            Command::Report(args) => args.run(),
            Command::Stop(args) => args.stop(),
            Command::Resume(args) => args.resume(),
            Command::Modify(args) => args.run(),
            Command::Approve(args) => args.approve(),
            Command::Reject(args) => args.run(),
            Command::Local(args) => args.run(player),
            Command::Login(args) => args.run(),
            Command::Logout(args) => args.run(),
            Command::Token(args) => args.run(),
            Command::User(args) => args.run(),
            Command::Events(args) => args.run(),
            Command::Pgn(args) => args.run(),
            Command::Backup(args) => args.run(),
            Command::Restore(args) => args.run(),
            Command::Texel(args) => args.run(),
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().run(&player) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if xq_proto::cli::stdout::closed_pipe(err.as_ref()) => ExitCode::SUCCESS,
        Err(err) => {
            let err = remote::explain(err);
            eprintln!("xq-coordinator: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The game runner for local mode, for `threads` parallel games.
fn player(threads: u32) -> anyhow::Result<Arc<dyn BatchPlayer>> {
    Ok(Arc::new(xq_worker::EnginePlayer::new(threads as usize)?))
}
