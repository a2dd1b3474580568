//! `pgn RUN --out FILE`: a run's stored games as PGN, straight from the
//! database file ([`xq_coordinator::pgn`] selects and writes them).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use xq_coordinator::pgn;
use xq_coordinator::store::Store;
use xq_engine::notation::Notation;

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
    /// Move notation: iccs, wxf or chinese.
    #[arg(long, default_value = "iccs")]
    notation: String,
    /// SQLite database of the coordinator.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
}

impl PgnArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let notation: Notation = self
            .notation
            .parse()
            .map_err(|e: String| anyhow::anyhow!(e))?;
        let query = pgn::parse_filters(&self.filters)?;
        let store = Store::open(&self.db)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let run_id = self.run;
        let export = rt
            .block_on(store.call(move |conn| {
                let filter = pgn::resolve(conn, query)?;
                pgn::export(conn, run_id, &filter)
            }))
            .with_context(|| format!("cannot read the games of run {run_id}"))?;
        let text = pgn::write_all(&export, notation)?;
        std::fs::write(&self.out, text)
            .with_context(|| format!("cannot write {}", self.out.display()))?;
        eprintln!(
            "{} games of run {run_id} written to {}",
            export.games.len(),
            self.out.display()
        );
        Ok(())
    }
}
