//! Where a run's openings come from ([`OpeningSource`]) and the opening-line
//! format both sides read ([`parse_lines`]).
//!
//! Openings are addressed by index: opening `i` of a source with a given seed
//! is the same on every machine, so a coordinator can hand out slices (seed,
//! offset, count) and any worker reproduces them.
//!
//! Line format: one opening per line, `<FEN> [moves <m1> <m2> …]`, moves in
//! coordinates; text after `;` is ignored (EPD operations), as are blank
//! lines and lines starting with `#`.

use serde::{Deserialize, Serialize};
use xq_engine::{Move, Position};

/// Random plies after the book move when a command line does not say.
pub const DEFAULT_RANDOM_PLIES: u32 = 4;
/// The most random plies accepted after a book move.
pub const MAX_RANDOM_PLIES: u32 = 40;

/// Where openings come from. Every source may add seeded random plies after
/// its opening (at most [`MAX_RANDOM_PLIES`]): the built-in generator after
/// its first move, lines and books after each line's moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "stored::Source", into = "stored::Source")]
pub enum OpeningSource {
    /// The runner's generator: one of the sixteen first moves, then
    /// `random_plies` random plies.
    Builtin { random_plies: u32 },
    /// Opening lines in the [module's format](self), indexed modulo their
    /// number; each one parses.
    Lines {
        lines: Vec<String>,
        random_plies: u32,
    },
    /// An opening book stored as an asset of the registry: a file of lines in
    /// the [module's format](self), named by its SHA-256 (lowercase hex).
    Book { sha256: String, random_plies: u32 },
}

impl OpeningSource {
    /// The lines of an opening file: its openings, comments and blank lines
    /// dropped, each checked; no random plies after them.
    pub fn from_file_text(text: &str) -> Result<OpeningSource, OpeningError> {
        parse_lines(text)?;
        Ok(OpeningSource::Lines {
            lines: text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned)
                .collect(),
            random_plies: 0,
        })
    }

    /// Random plies played after each opening of the source.
    pub fn random_plies(&self) -> u32 {
        match self {
            OpeningSource::Builtin { random_plies }
            | OpeningSource::Lines { random_plies, .. }
            | OpeningSource::Book { random_plies, .. } => *random_plies,
        }
    }

    /// The same source with `plies` random plies after each opening.
    pub fn with_random_plies(mut self, plies: u32) -> OpeningSource {
        match &mut self {
            OpeningSource::Builtin { random_plies }
            | OpeningSource::Lines { random_plies, .. }
            | OpeningSource::Book { random_plies, .. } => *random_plies = plies,
        }
        self
    }
}

/// The stored (JSON) form of a source. A line list or a book without random
/// plies keeps the form runs stored before lines and books took random plies
/// (`{"lines":[…]}`, `{"book":{"sha256":…}}`), so those runs read back and
/// an identical new spec still finds its unfinished run.
mod stored {
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Source {
        Builtin {
            random_plies: u32,
        },
        Lines(Lines),
        Book {
            sha256: String,
            #[serde(default, skip_serializing_if = "is_zero")]
            random_plies: u32,
        },
    }

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    pub(super) enum Lines {
        Plain(Vec<String>),
        Followed {
            lines: Vec<String>,
            random_plies: u32,
        },
    }

    fn is_zero(n: &u32) -> bool {
        *n == 0
    }

    impl From<Source> for super::OpeningSource {
        fn from(s: Source) -> Self {
            match s {
                Source::Builtin { random_plies } => Self::Builtin { random_plies },
                Source::Lines(Lines::Plain(lines)) => Self::Lines {
                    lines,
                    random_plies: 0,
                },
                Source::Lines(Lines::Followed {
                    lines,
                    random_plies,
                }) => Self::Lines {
                    lines,
                    random_plies,
                },
                Source::Book {
                    sha256,
                    random_plies,
                } => Self::Book {
                    sha256,
                    random_plies,
                },
            }
        }
    }

    impl From<super::OpeningSource> for Source {
        fn from(s: super::OpeningSource) -> Self {
            match s {
                super::OpeningSource::Builtin { random_plies } => Source::Builtin { random_plies },
                super::OpeningSource::Lines {
                    lines,
                    random_plies: 0,
                } => Source::Lines(Lines::Plain(lines)),
                super::OpeningSource::Lines {
                    lines,
                    random_plies,
                } => Source::Lines(Lines::Followed {
                    lines,
                    random_plies,
                }),
                super::OpeningSource::Book {
                    sha256,
                    random_plies,
                } => Source::Book {
                    sha256,
                    random_plies,
                },
            }
        }
    }
}

/// Why opening lines could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpeningError {
    #[error("opening line {line}: {source}")]
    Fen {
        line: usize,
        source: xq_engine::FenError,
    },
    #[error("opening line {line}: illegal or malformed move '{mv}'")]
    Move { line: usize, mv: String },
    #[error("opening line {line}: unexpected '{word}' after the fen (expected 'moves')")]
    Junk { line: usize, word: String },
    #[error("the opening file has no openings")]
    Empty,
}

/// One opening: a start position and the moves played from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// The start position's FEN.
    pub fen: String,
    /// Moves played from `fen`, all legal.
    pub moves: Vec<Move>,
    /// A name for reports and PGN (`当头炮`, or `line 12`).
    pub name: String,
}

impl Opening {
    /// The start position with the opening's moves played.
    pub fn position(&self) -> Position {
        let mut pos = Position::from_fen(&self.fen).unwrap_or_else(|_| Position::startpos());
        for &mv in &self.moves {
            pos.make(mv);
        }
        pos
    }
}

/// Parses opening lines (the module's format); at least one opening.
pub fn parse_lines(text: &str) -> Result<Vec<Opening>, OpeningError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split(';').next().unwrap_or_default().trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let (fen_part, moves_part) = match content.split_once(" moves") {
            Some((f, m)) => (f.trim(), Some(m)),
            None => (content, None),
        };
        let words: Vec<&str> = fen_part.split_whitespace().collect();
        if words.len() > 6 {
            return Err(OpeningError::Junk {
                line,
                word: words[6].to_string(),
            });
        }
        let fen = words.join(" ");
        let start =
            Position::from_fen(&fen).map_err(|source| OpeningError::Fen { line, source })?;
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for m in moves_part.unwrap_or_default().split_whitespace() {
            let mv = Move::parse_coords(m)
                .filter(|&mv| pos.is_legal(mv))
                .ok_or_else(|| OpeningError::Move {
                    line,
                    mv: m.to_string(),
                })?;
            pos.make(mv);
            moves.push(mv);
        }
        openings.push(Opening {
            fen: start.to_fen(),
            moves,
            name: format!("line {line}"),
        });
    }
    if openings.is_empty() {
        return Err(OpeningError::Empty);
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_files_and_reports_the_bad_line() {
        let text = "# comment\n\n\
            rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7 ; id \"x\"\n\
            4k4/9/9/9/9/9/9/9/9/3K5 w\n";
        let lines = parse_lines(text).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].moves.len(), 2);
        assert_eq!(lines[0].name, "line 3");
        assert_eq!(lines[1].fen, "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1");
        let bad = parse_lines("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1 moves d0d2\n");
        assert_eq!(
            bad,
            Err(OpeningError::Move {
                line: 1,
                mv: "d0d2".into()
            })
        );
        assert!(matches!(
            parse_lines("x/9\n"),
            Err(OpeningError::Fen { line: 1, .. })
        ));
        assert_eq!(parse_lines("# nothing\n"), Err(OpeningError::Empty));
        assert!(matches!(
            parse_lines("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1 junk\n"),
            Err(OpeningError::Junk { .. })
        ));
        let OpeningSource::Lines { lines: kept, .. } = OpeningSource::from_file_text(text).unwrap()
        else {
            panic!("lines")
        };
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn sources_without_random_plies_keep_their_stored_form() {
        let line = "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1".to_owned();
        let sha256 = "ab".repeat(32);
        let old = [
            (
                r#"{"builtin":{"random_plies":4}}"#,
                OpeningSource::Builtin { random_plies: 4 },
            ),
            (
                r#"{"lines":["4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1"]}"#,
                OpeningSource::Lines {
                    lines: vec![line.clone()],
                    random_plies: 0,
                },
            ),
        ];
        for (json, source) in old {
            assert_eq!(serde_json::from_str::<OpeningSource>(json).unwrap(), source);
            assert_eq!(serde_json::to_string(&source).unwrap(), json);
        }
        let book = format!(r#"{{"book":{{"sha256":"{sha256}"}}}}"#);
        let source = OpeningSource::Book {
            sha256: sha256.clone(),
            random_plies: 0,
        };
        assert_eq!(
            serde_json::from_str::<OpeningSource>(&book).unwrap(),
            source
        );
        assert_eq!(serde_json::to_string(&source).unwrap(), book);
        for followed in [
            OpeningSource::Lines {
                lines: vec![line],
                random_plies: 6,
            },
            OpeningSource::Book {
                sha256,
                random_plies: 6,
            },
        ] {
            let json = serde_json::to_string(&followed).unwrap();
            assert_eq!(
                serde_json::from_str::<OpeningSource>(&json).unwrap(),
                followed
            );
            assert_eq!(followed.random_plies(), 6);
            assert_eq!(followed.clone().with_random_plies(0).random_plies(), 0);
        }
    }
}
