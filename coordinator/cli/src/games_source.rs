//! Where a command reads a run's stored games from: the database file
//! (`--db`) or a served coordinator (`--coordinator`, the `ExportGames` RPC),
//! for `pgn` and `datagen-export`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use tonic::Streaming;
use xq_coordinator::store::Store;
use xq_proto::pb;

use super::remote::{admin_client, resolve, stored};

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
    /// The served coordinator's address, when the games come from one.
    pub fn coordinator(&self) -> Option<&str> {
        self.coordinator.as_deref()
    }

    /// The database file's store (`xq.db` by default); an error names a file
    /// that is not there or does not open.
    pub fn store(&self) -> anyhow::Result<Store> {
        let db = self.db.clone().unwrap_or_else(|| PathBuf::from("xq.db"));
        if !db.is_file() {
            bail!("no database file {}", db.display());
        }
        Store::open(&db).with_context(|| format!("cannot open database {}", db.display()))
    }

    /// The chunks of run `run`'s games (those `filter` selects) as the
    /// coordinator at `url` streams them.
    pub async fn stream(
        &self,
        url: &str,
        run: u64,
        filter: Option<pb::GameFilter>,
    ) -> anyhow::Result<Streaming<pb::ExportGamesResponse>> {
        let token = match &self.token {
            Some(token) => Some(token.clone()),
            None => resolve(Some(url), None, &stored()?).token,
        };
        let mut client = admin_client(url, token.as_deref(), self.ca.as_deref())?;
        let stream = client
            .export_games(pb::ExportGamesRequest {
                run_id: run,
                filter,
            })
            .await?
            .into_inner();
        Ok(stream)
    }
}
