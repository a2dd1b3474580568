//! Where a command reads a run's stored games from: the database file
//! (`--db`) or a served coordinator (`--coordinator`), for `pgn` and
//! `datagen-export`; either way through the `ExportGames` RPC.

use std::path::PathBuf;

use clap::Args;
use tonic::Streaming;
use xq_coordinator::in_process::Acting;
use xq_proto::pb;

use super::registry::{Coordinator, Place};

/// The source of a run's games. Invariant (clap's): `db` and `coordinator`
/// are not both given.
#[derive(Debug, Args)]
pub struct GamesSource {
    /// SQLite database of the coordinator (the default, `xq.db`, unless
    /// `--coordinator` is given).
    #[arg(long, conflicts_with = "coordinator")]
    db: Option<PathBuf>,
    /// A served coordinator to read the games from, e.g.
    /// `http://127.0.0.1:50051` (any token that may read runs).
    #[arg(long)]
    coordinator: Option<String>,
    /// Access token for `--coordinator`, sent as `authorization: Bearer
    /// <TOKEN>`; default: the personal token `login` stored for it.
    #[arg(long, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long)]
    ca: Option<PathBuf>,
}

impl GamesSource {
    /// Connects to the games' place; a database file must exist.
    pub fn connect(&self) -> anyhow::Result<Coordinator> {
        Place::file_unless_coordinator(
            self.db.clone(),
            self.coordinator.clone(),
            self.token.clone(),
            self.ca.clone(),
        )
        .existing()?
        .connect(Acting::Administrator)
    }
}

/// The chunks of run `run`'s games (those `filter` selects) as
/// `coordinator` streams them.
pub async fn stream(
    coordinator: &Coordinator,
    run: u64,
    filter: Option<pb::GameFilter>,
) -> anyhow::Result<Streaming<pb::ExportGamesResponse>> {
    let stream = coordinator
        .runs()
        .export_games(pb::ExportGamesRequest {
            run_id: run,
            filter,
        })
        .await?
        .into_inner();
    Ok(stream)
}
