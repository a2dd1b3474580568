//! Where a command reads a run's stored games from: the database file
//! (`--db`) or a served coordinator (`--coordinator`), for `pgn` and
//! `datagen-export`; either way through the `ExportGames` RPC.

use clap::Args;
use tonic::Streaming;
use xq_coordinator::in_process::Acting;
use xq_proto::pb;

use super::registry::{Coordinator, FileOrCoordinator};

/// The source of a run's games. Invariant (clap's): `db` and `coordinator`
/// are not both given.
#[derive(Debug, Args)]
pub struct GamesSource {
    #[command(flatten)]
    place: FileOrCoordinator,
}

impl GamesSource {
    /// Connects to the games' place; a database file must exist.
    pub fn connect(&self) -> anyhow::Result<Coordinator> {
        self.place
            .place()
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
