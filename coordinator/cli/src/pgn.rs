//! `pgn RUN --out FILE`: a run's stored games as PGN, from the database file
//! (`--db`) or from a served coordinator (`--coordinator`), through the
//! `ExportGames` RPC either way, written with
//! [`xq_coordinator::game_export`].

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tokio_stream::StreamExt;
use xq_coordinator::convert::export_of_chunks;
use xq_coordinator::game_export::{Export, GameQuery};
use xq_engine::notation::Notation;

use super::games_source::{self, GamesSource};
use super::registry::Coordinator;

/// Arguments of `pgn`.
#[derive(Debug, Args)]
pub struct PgnArgs {
    /// The run's id.
    run: u64,
    /// The PGN file to write.
    #[arg(long)]
    out: PathBuf,
    /// Only some games (repeatable; all must match): `lost` (lost by the
    /// engine under test: dev, or θ+ in SPSA), `time-forfeit`, `crash`
    /// (an engine that crashed or did not start), `illegal-move`,
    /// `reason=R` (an end reason's token), `worker=W` (a worker's id or name).
    #[arg(long = "filter")]
    filters: Vec<String>,
    /// Move notation: iccs, wxf, chinese or yizisanma (一字三码).
    #[arg(long, default_value = "iccs")]
    notation: String,
    #[command(flatten)]
    source: GamesSource,
}

impl PgnArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let notation: Notation = self
            .notation
            .parse()
            .map_err(|e: String| anyhow::anyhow!(e))?;
        let query = GameQuery::parse(&self.filters)?;
        let run_id = self.run;
        let coordinator = self.source.connect()?;
        let export = coordinator
            .block_on(fetch(&coordinator, run_id, query))
            .with_context(|| {
                format!(
                    "cannot read the games of run {run_id} from {}",
                    coordinator.url
                )
            })?;
        let text = export.write_pgn(notation)?;
        xq_proto::atomic_file::write(&self.out, text.as_bytes())
            .with_context(|| format!("cannot write {}", self.out.display()))?;
        eprintln!(
            "{} games of run {run_id} written to {}",
            export.games.len(),
            self.out.display()
        );
        Ok(())
    }
}

/// The export of run `run`'s games `query` selects, as `coordinator`
/// streams it.
async fn fetch(coordinator: &Coordinator, run: u64, query: GameQuery) -> anyhow::Result<Export> {
    let mut stream = games_source::stream(coordinator, run, Some(query.into())).await?;
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.next().await {
        chunks.push(chunk?);
    }
    Ok(export_of_chunks(run, chunks)?)
}
