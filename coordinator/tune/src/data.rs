//! One training position and its text format.
//!
//! A line is `<fen> | <score> | <result>`, the text format of the bullet and
//! marlinflow trainers with Red in White's place:
//! - `fen`: the position in this project's FEN (engine/RULES.md §2), side to move
//!   included;
//! - `score`: the engine's score of the position in centipawns **from Red's point
//!   of view** (a score the engine gave for the side to move is negated when Black
//!   is to move), an integer in `-MAX_SCORE..=MAX_SCORE`;
//! - `result`: the game's result **for Red**: `1.0` a Red win, `0.5` a draw, `0.0`
//!   a Black win.
//!
//! Both orientations follow those trainers, which read White-relative scores and
//! results and turn them to the side to move themselves.

use std::fmt;
use std::str::FromStr;

use xq_engine::rules::GameResult;
use xq_engine::{Color, Position};

/// The largest score a sample may carry (cp): beyond it the engine is
/// reporting a mate, which training data leaves out.
pub const MAX_SCORE: i32 = 30_000;

/// How many characters of a bad line an error quotes.
const QUOTE: usize = 40;

/// A game's result as a training target, for Red.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleResult {
    RedWin,
    Draw,
    BlackWin,
}

impl SampleResult {
    /// Red's points: 1, ½ or 0.
    pub fn red_points(self) -> f64 {
        match self {
            SampleResult::RedWin => 1.0,
            SampleResult::Draw => 0.5,
            SampleResult::BlackWin => 0.0,
        }
    }

    /// The result for `color`'s points: 1, ½ or 0.
    pub fn points_for(self, color: Color) -> f64 {
        match color {
            Color::Red => self.red_points(),
            Color::Black => 1.0 - self.red_points(),
        }
    }

    /// The text token: `1.0`, `0.5` or `0.0`.
    pub fn token(self) -> &'static str {
        match self {
            SampleResult::RedWin => "1.0",
            SampleResult::Draw => "0.5",
            SampleResult::BlackWin => "0.0",
        }
    }
}

impl From<GameResult> for SampleResult {
    fn from(r: GameResult) -> SampleResult {
        match r {
            GameResult::Red => SampleResult::RedWin,
            GameResult::Draw => SampleResult::Draw,
            GameResult::Black => SampleResult::BlackWin,
        }
    }
}

/// One training position. Invariant: `score` lies in `-MAX_SCORE..=MAX_SCORE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub position: Position,
    /// The engine's score from Red's point of view (cp).
    pub score: i32,
    pub result: SampleResult,
}

/// Why a line is not a training position. Every variant quotes at most the
/// first 40 characters of what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    #[error("expected 'fen | score | result', got '{0}'")]
    Shape(String),
    #[error("bad FEN '{fen}': {why}")]
    Fen { fen: String, why: String },
    #[error("bad score '{0}': expected an integer in -30000..=30000 (centipawns for Red)")]
    Score(String),
    #[error("bad result '{0}': expected 1.0 (Red wins), 0.5 (draw) or 0.0 (Black wins)")]
    Result(String),
}

/// Whether `score` lies in `-MAX_SCORE..=MAX_SCORE` (without `abs`, which
/// overflows on `i32::MIN`).
fn in_range(score: i32) -> bool {
    (-MAX_SCORE..=MAX_SCORE).contains(&score)
}

fn quote(s: &str) -> String {
    s.chars().take(QUOTE).collect()
}

impl Sample {
    /// A sample from a score the engine gave for the side to move.
    pub fn from_side_to_move(
        position: Position,
        side_to_move_score: i32,
        result: SampleResult,
    ) -> Option<Sample> {
        if !in_range(side_to_move_score) {
            return None;
        }
        let score = match position.side_to_move() {
            Color::Red => side_to_move_score,
            Color::Black => -side_to_move_score,
        };
        Some(Sample {
            position,
            score,
            result,
        })
    }

    /// The score from the side to move's point of view (cp).
    pub fn side_to_move_score(&self) -> i32 {
        match self.position.side_to_move() {
            Color::Red => self.score,
            Color::Black => -self.score,
        }
    }
}

impl fmt::Display for Sample {
    /// The text line, without its newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} | {} | {}",
            self.position.to_fen(),
            self.score,
            self.result.token()
        )
    }
}

impl FromStr for Sample {
    type Err = DataError;

    fn from_str(line: &str) -> Result<Sample, DataError> {
        let mut fields = line.split('|').map(str::trim);
        let (Some(fen), Some(score), Some(result), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(DataError::Shape(quote(line)));
        };
        let position = Position::from_fen(fen).map_err(|e| DataError::Fen {
            fen: quote(fen),
            why: e.to_string(),
        })?;
        let score: i32 = score
            .parse()
            .ok()
            .filter(|s: &i32| in_range(*s))
            .ok_or_else(|| DataError::Score(quote(score)))?;
        let result = match result {
            "1" | "1.0" => SampleResult::RedWin,
            "0.5" | ".5" => SampleResult::Draw,
            "0" | "0.0" => SampleResult::BlackWin,
            other => return Err(DataError::Result(quote(other))),
        };
        Ok(Sample {
            position,
            score,
            result,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

    #[test]
    fn a_line_reads_back_as_written() {
        let line = format!("{START} | -35 | 0.5");
        let s: Sample = line.parse().unwrap();
        assert_eq!(s.score, -35);
        assert_eq!(s.result, SampleResult::Draw);
        assert_eq!(s.to_string(), line);
    }

    #[test]
    fn scores_are_turned_to_reds_view() {
        let black = Position::from_fen(&START.replace(" w ", " b ")).unwrap();
        let s = Sample::from_side_to_move(black, 120, SampleResult::BlackWin).unwrap();
        assert_eq!(s.score, -120);
        assert_eq!(s.side_to_move_score(), 120);
        assert_eq!(s.result.points_for(Color::Black), 1.0);
        let start = Position::from_fen(START).unwrap();
        for far in [31_000, -31_000, i32::MIN, i32::MAX] {
            assert!(Sample::from_side_to_move(start.clone(), far, SampleResult::Draw).is_none());
        }
    }

    #[test]
    fn bad_lines_name_what_is_wrong() {
        let long = "x".repeat(500);
        for (line, want) in [
            (format!("{START} | 12"), "expected 'fen | score | result'"),
            (format!("{long} | 12 | 1.0"), "bad FEN"),
            (format!("{START} | 12.5 | 1.0"), "bad score '12.5'"),
            (format!("{START} | 40000 | 1.0"), "bad score '40000'"),
            (
                format!("{START} | -2147483648 | 1.0"),
                "bad score '-2147483648'",
            ),
            (format!("{START} | 12 | win"), "bad result 'win'"),
        ] {
            let e = line.parse::<Sample>().unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(e.len() < 300, "{e}");
        }
    }
}
