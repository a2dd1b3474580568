//! `datagen-export RUN --format text|bin --out FILE`: a run's stored games as
//! training positions ([`xq_coordinator::datagen_export`]), from the database
//! file (`--db`) or from a served coordinator (`--coordinator`), through
//! the `ExportGames` RPC either way, converted chunk by chunk as it arrives.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use tokio_stream::StreamExt;
use xq_coordinator::datagen_export::{Counts, Dedup, Exporter, Filters, Format};
use xq_coordinator::game_export::ExportedGame;
use xq_proto::atomic_file::AtomicFile;
use xq_tune::data::MAX_SCORE;

use super::games_source::{self, GamesSource};
use super::registry::Coordinator;

/// Arguments of `datagen-export`.
#[derive(Debug, Args)]
pub struct DatagenExportArgs {
    /// The run's id (any kind: every stored game is read).
    run: u64,
    /// `text`: `fen | score | result` lines (score and result for Red);
    /// `bin`: Fairy-Stockfish's 72-byte `.bin` records (PackedSfenValue),
    /// which variant-nnue-pytorch reads.
    #[arg(long, value_name = "text|bin")]
    format: Format,
    /// The file to write.
    #[arg(long)]
    out: PathBuf,
    /// Engine plies after the opening left out of every game.
    #[arg(long, default_value_t = Filters::default().skip_plies)]
    skip_plies: u32,
    /// Keep positions whose side to move is in check.
    #[arg(long)]
    keep_checks: bool,
    /// Keep positions whose played move captures.
    #[arg(long)]
    keep_captures: bool,
    /// Leave out scores beyond ± this many centipawns (at most 30000, so
    /// mate scores are always left out).
    #[arg(long, default_value_t = Filters::default().max_score)]
    max_score: u32,
    /// The dedup table holds 2^BITS position keys (8 bytes each; 24: 128 MiB);
    /// exact while it has room, forgetting old keys beyond.
    #[arg(long, value_name = "BITS", default_value_t = Dedup::DEFAULT_BITS)]
    dedup_bits: u32,
    #[command(flatten)]
    source: GamesSource,
}

impl DatagenExportArgs {
    pub fn run(self) -> anyhow::Result<()> {
        if !(4..=32).contains(&self.dedup_bits) {
            bail!("--dedup-bits {} is outside 4..=32", self.dedup_bits);
        }
        if self.max_score > MAX_SCORE.unsigned_abs() {
            bail!(
                "--max-score {} is above {MAX_SCORE}, the largest score a training position carries",
                self.max_score
            );
        }
        let filters = Filters {
            skip_plies: self.skip_plies,
            skip_checks: !self.keep_checks,
            skip_captures: !self.keep_captures,
            max_score: self.max_score,
        };
        let file = AtomicFile::create(&self.out)
            .with_context(|| format!("cannot create {}", self.out.display()))?;
        let exporter = Exporter::new(file, self.format, filters, Dedup::new(self.dedup_bits));
        let run_id = self.run;
        let started = Instant::now();
        let coordinator = self.source.connect()?;
        let (counts, file) = coordinator
            .block_on(export(&coordinator, run_id, exporter))
            .with_context(|| format!("cannot export run {run_id} from {}", coordinator.url))?;
        file.commit()
            .with_context(|| format!("cannot write {}", self.out.display()))?;
        report(&counts, started.elapsed().as_secs_f64(), &self.out);
        Ok(())
    }
}

/// Exports the games of run `run` as `coordinator` streams them, converted
/// chunk by chunk as they arrive.
async fn export(
    coordinator: &Coordinator,
    run: u64,
    mut exporter: Exporter<AtomicFile>,
) -> anyhow::Result<(Counts, AtomicFile)> {
    let mut stream = games_source::stream(coordinator, run, None).await?;
    while let Some(chunk) = stream.next().await {
        for (j, g) in chunk?.games.into_iter().enumerate() {
            let g = ExportedGame::try_from(g).map_err(|e| e.within(&format!("games[{j}]")))?;
            exporter.game(g.game.lease_id, g.game.game_index, &g.rules, &g.game.record)?;
        }
    }
    Ok(exporter.finish()?)
}

/// The summary on stderr: games, positions and the rate.
fn report(c: &Counts, seconds: f64, out: &std::path::Path) {
    eprintln!(
        "{} positions written to {} from {} games ({} skipped: engine failures); \
         {} scored positions, {} duplicates left out; {:.0} positions/s",
        c.written,
        out.display(),
        c.games,
        c.games_skipped,
        c.scored,
        c.duplicates,
        c.written as f64 / seconds.max(1e-9)
    );
    if c.converted > 0 {
        eprintln!(
            "{} positions with a converted piece left out: the bin format cannot carry one \
             (--format text keeps them, as `~` in the FEN)",
            c.converted
        );
    }
}
