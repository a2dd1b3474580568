//! `xq-coordinator book make GAMES.pgn`: an opening book from game records
//! (see `xq_coordinator::book`); `asset add FILE.pgn` stores the same book.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::book::{self, Book, DEFAULT_BOOK_PLIES};
use xq_engine::rules::RuleSet;
use xq_proto::out;

/// `book …`.
#[derive(Debug, Args)]
pub struct BookArgs {
    #[command(subcommand)]
    command: BookCommand,
}

#[derive(Debug, Subcommand)]
enum BookCommand {
    /// Cuts every game of a PGN collection after N plies and writes one
    /// opening per distinct position (a FEN a line, the format of
    /// `--openings FILE` and book assets). Games that do not read, are
    /// shorter than N plies or that the arbiter ends within them are reported
    /// on stderr with their number, as are duplicates; then a summary line.
    Make {
        /// The PGN file (UTF-8): any notation the engine reads (ICCS, WXF also
        /// full-width, Chinese, 一字三码, art. 7.5's abbreviated record).
        games: PathBuf,
        /// Plies each opening is cut after (at least 1).
        #[arg(long, default_value_t = DEFAULT_BOOK_PLIES, value_parser = clap::value_parser!(u32).range(1..=1000))]
        plies: u32,
        /// The book file to write; default: standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Rule set the games are played under (moves, and the arbiter that
        /// ends a game), e.g. standard or standard+conversion.
        #[arg(long, default_value = "standard")]
        rules: String,
    },
}

impl BookArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            BookCommand::Make {
                games,
                plies,
                out,
                rules,
            } => {
                let rules: RuleSet = rules
                    .parse()
                    .with_context(|| format!("bad --rules '{rules}'"))?;
                let book = from_pgn_file(&games, plies as usize, &rules)?;
                let text = book.text();
                match &out {
                    Some(path) => xq_proto::atomic_file::write(path, text.as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?,
                    None => out!("{text}")?,
                }
                Ok(())
            }
        }
    }
}

/// The book of the PGN file `path`; reports every skipped or duplicate game and
/// the summary on stderr. Fails when the file is not UTF-8 or no game gives an
/// opening.
pub fn from_pgn_file(path: &Path, plies: usize, rules: &RuleSet) -> anyhow::Result<Book> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not UTF-8 (byte {}); convert a GB2312/GBK collection first, e.g. \
             iconv -f GBK -t UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    let book = book::make(&text, plies, rules);
    for note in &book.notes {
        eprintln!("{}: {note}", path.display());
    }
    eprintln!("{}: {}", path.display(), book.summary());
    if book.lines.is_empty() {
        bail!(
            "{}: no game gave an opening of {plies} plies",
            path.display()
        );
    }
    Ok(book)
}

/// Whether `path` names a PGN file (`.pgn`, any case).
pub fn is_pgn(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pgn"))
}
