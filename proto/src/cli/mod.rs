//! Command-line flags for the contract's settings, shared by `xq-worker play`
//! and the coordinator's run commands so that each flag has one default, and
//! [`stdout`], the binaries' standard output that ends quietly on a closed pipe.

pub mod stdout;

use clap::Args;

use crate::limit::LimitError;
use crate::openings::{DEFAULT_RANDOM_PLIES, OpeningError};
use crate::{Adjudication, Limit, OpeningSource};

/// One limit per move for both players; at most one flag may be given.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Nodes per move.
    #[arg(long, group = "limit")]
    nodes: Option<u64>,
    /// Depth per move, plies.
    #[arg(long, group = "limit")]
    depth: Option<u32>,
    /// Milliseconds per move.
    #[arg(long, group = "limit")]
    movetime: Option<u64>,
    /// Time control `[MOVES/]SECONDS[+INCREMENT]`, e.g. 40/60+0.5 or 10+0.1.
    #[arg(long, group = "limit")]
    tc: Option<String>,
}

impl LimitArgs {
    /// The limit given, if any (parsed as its text form, so zero is refused).
    pub fn limit(&self) -> Result<Option<Limit>, LimitError> {
        let text = match (self.nodes, self.depth, self.movetime, &self.tc) {
            (Some(n), ..) => format!("nodes={n}"),
            (_, Some(d), ..) => format!("depth={d}"),
            (_, _, Some(ms), _) => format!("movetime={ms}"),
            (_, _, _, Some(tc)) => format!("tc={tc}"),
            (None, None, None, None) => return Ok(None),
        };
        text.parse().map(Some)
    }
}

/// Adjudication flags; unset flags keep [`Adjudication::default`].
#[derive(Debug, Clone, Args)]
pub struct AdjudicationArgs {
    /// Turn every adjudication rule off (the rules arbiter still ends games).
    #[arg(long)]
    no_adjudication: bool,
    /// Resign score in cp (both engines agree) [default: 1000].
    #[arg(long)]
    resign_cp: Option<u32>,
    /// Moves per side the resign score must hold; 0 = off [default: 4].
    #[arg(long)]
    resign_moves: Option<u32>,
    /// Draw score bound in cp [default: 10].
    #[arg(long)]
    draw_cp: Option<u32>,
    /// Moves per side the draw score must hold; 0 = off [default: 8].
    #[arg(long)]
    draw_moves: Option<u32>,
    /// Move number after which draw adjudication may start [default: 40].
    #[arg(long)]
    draw_after: Option<u32>,
    /// Game length cap in plies; 0 = off [default: 400].
    #[arg(long)]
    max_plies: Option<u32>,
}

impl AdjudicationArgs {
    /// The settings these flags describe.
    pub fn adjudication(&self) -> Adjudication {
        let base = if self.no_adjudication {
            Adjudication::OFF
        } else {
            Adjudication::default()
        };
        Adjudication {
            resign_cp: self.resign_cp.unwrap_or(base.resign_cp),
            resign_moves: self.resign_moves.unwrap_or(base.resign_moves),
            draw_cp: self.draw_cp.unwrap_or(base.draw_cp),
            draw_moves: self.draw_moves.unwrap_or(base.draw_moves),
            draw_after_move: self.draw_after.unwrap_or(base.draw_after_move),
            max_plies: self.max_plies.unwrap_or(base.max_plies),
        }
    }
}

/// Where openings come from.
#[derive(Debug, Clone, Args)]
pub struct OpeningArgs {
    /// `builtin` (the sixteen first moves plus random plies) or a file of
    /// FEN/EPD lines.
    #[arg(long, default_value = "builtin")]
    openings: String,
    /// Seeded random plies after each opening: after the built-in first
    /// move (default 4), or after each line of an opening file or book
    /// (default 0: the lines as they are).
    #[arg(long)]
    random_plies: Option<u32>,
}

/// Why the opening flags do not give a source.
#[derive(Debug, thiserror::Error)]
pub enum OpeningArgsError {
    #[error("cannot read opening file {path:?}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("bad opening file {path:?}: {source}")]
    Parse { path: String, source: OpeningError },
}

impl OpeningArgs {
    /// The source these flags name; an opening file is read and checked.
    pub fn source(&self) -> Result<OpeningSource, OpeningArgsError> {
        self.source_with(|path| std::fs::read_to_string(path))
    }

    /// [`Self::source`] with the opening file's text read by `read` (given
    /// the file's name as the flag has it).
    pub fn source_with(
        &self,
        read: impl FnOnce(&str) -> std::io::Result<String>,
    ) -> Result<OpeningSource, OpeningArgsError> {
        if self.openings == "builtin" {
            return Ok(OpeningSource::Builtin {
                random_plies: self.random_plies.unwrap_or(DEFAULT_RANDOM_PLIES),
            });
        }
        let path = self.openings.clone();
        let text = read(&path).map_err(|source| OpeningArgsError::Read {
            path: path.clone(),
            source,
        })?;
        let lines = OpeningSource::from_file_text(&text)
            .map_err(|source| OpeningArgsError::Parse { path, source })?;
        Ok(self.after_lines(lines))
    }

    /// `source` (lines or a book) followed by the `--random-plies` given,
    /// none when not given.
    pub fn after_lines(&self, source: OpeningSource) -> OpeningSource {
        source.with_random_plies(self.random_plies.unwrap_or(0))
    }
}
