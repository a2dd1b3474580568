//! PGN for Xiangqi games, in the conventions Xiangqi programs read; [`read`]
//! reads game collections back, in every notation the engine reads.
//!
//! A game is written as:
//!
//! ```text
//! [Game "Chinese Chess"]
//! [Event "xq-worker match"]
//! [Site "local"]
//! [Date "2026.12.01"]
//! [Round "1"]
//! [Red "dev"]
//! [Black "base"]
//! [RedBuild "x86-64-avx2"]
//! [BlackBuild "x86-64-avx2"]
//! [Result "1-0"]
//! [FEN "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"]
//! [Format "ICCS"]
//! [Variant "standard"]
//! [Opening "h2e2"]
//! [Termination "checkmate"]
//! [PlyCount "41"]
//!
//! 1. H2-E2 {book} H9-G7 {book} 2. H0-G2 {+0.31/9 0.120s, n=20114} ...
//! ```
//!
//! - `[Game "Chinese Chess"]` comes first and `[Format]` names the move
//!   notation: `ICCS` (`H2-E2`: file letter and rank digit 0–9 from Red's
//!   side, upper case, a dash between the points), `WXF` (`C2.5`),
//!   `Chinese` (`炮二平五`) or `Yizisanma` (一字三码, `炮253`).
//! - `[RedBuild]` and `[BlackBuild]` name the engine build each side
//!   played (an `ARCH` value) when it is known, and are left out otherwise
//!   (`xq-worker play`, the built-in engine, an engine with one executable).
//! - `[FEN]` is always the position before the first move (the opening's
//!   moves are in the movetext); side to move `w` for Red, `b` for Black.
//! - `[Termination]` is the end reason's token (see [`Reason::token`]); for
//!   the game runner's endings it adds who lost, or for an adjudication the
//!   adjudicated result: `time-forfeit: black loses`, `adjudication: draw`;
//!   a time forfeit with a known overrun adds it: `time-forfeit: black loses
//!   (overrun 120 ms)`, and so does the ending in words.
//! - Each move after the opening carries fastchess's comment,
//!   `{SCORE/DEPTH TIME, n=NODES}`: the mover's score in pawns with a sign
//!   (`+0.31`; `+M5` / `-M3` for a mate in moves), the depth in plies, the
//!   time in seconds with three decimals. Opening moves carry `{book}`. The
//!   last move's comment ends with the termination in words, as fastchess
//!   does; a failed engine's last stderr lines follow as a comment of their
//!   own before the result.
//! - Results are `1-0` (Red won), `0-1` (Black won), `1/2-1/2`. Lines are at
//!   most 80 characters unless one move with its comment is longer.

mod lex;
pub mod read;

use std::fmt::Write as _;

use thiserror::Error;
use xq_engine::notation::{self, Notation, NotationError};
use xq_engine::rules::{GameResult, Outcome, Reason, RuleSet};
use xq_engine::search::{MATE, MATE_BOUND};
use xq_engine::{Color, Move, Position};
use xq_proto::MoveStats;

/// The tags that describe where a game was played.
#[derive(Clone, Copy, Debug)]
pub struct PgnHeader<'a> {
    pub event: &'a str,
    pub site: &'a str,
    /// `YYYY.MM.DD`.
    pub date: &'a str,
    pub round: u64,
    pub red: &'a str,
    pub black: &'a str,
    /// The engine build each side played (an ARCH value such as
    /// `x86-64-avx2`), as `[RedBuild]` and `[BlackBuild]`; `None`: no tag.
    pub red_build: Option<&'a str>,
    pub black_build: Option<&'a str>,
}

/// One finished game.
#[derive(Clone, Copy, Debug)]
pub struct PgnGame<'a> {
    pub header: PgnHeader<'a>,
    /// The position before the first move.
    pub start: &'a Position,
    pub rules: &'a RuleSet,
    /// The opening's name.
    pub opening: &'a str,
    /// Every move from `start`, opening moves included; all legal.
    pub moves: &'a [Move],
    /// Leading moves that came from the opening.
    pub opening_plies: usize,
    /// One entry per move after the opening, or none at all (no comments).
    pub per_move: &'a [MoveStats],
    pub outcome: Outcome,
    /// The last stderr lines of an engine that failed; empty otherwise.
    pub stderr_tail: &'a str,
    /// For a time forfeit: how far the loser overran its time, ms.
    pub overrun_ms: Option<u64>,
}

/// Why a game could not be written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PgnError {
    #[error("ply {ply}: {source}")]
    Move {
        ply: usize,
        #[source]
        source: NotationError,
    },
    #[error("{stats} move statistics for {moves} moves after the opening")]
    Stats { stats: usize, moves: usize },
}

/// The `[Format]` tag's value for `notation`.
pub fn format_tag(notation: Notation) -> &'static str {
    match notation {
        Notation::Coords => "ICCS",
        Notation::Wxf => "WXF",
        Notation::Chinese => "Chinese",
        Notation::Yizisanma => "Yizisanma",
    }
}

/// The PGN result token.
pub fn result_token(result: GameResult) -> &'static str {
    match result {
        GameResult::Red => "1-0",
        GameResult::Black => "0-1",
        GameResult::Draw => "1/2-1/2",
    }
}

/// The `[Termination]` tag's value.
pub fn termination(outcome: &Outcome) -> String {
    let reason = outcome.reason;
    if reason.is_arbiter() {
        return reason.token().to_owned();
    }
    match (reason, outcome.result.winner()) {
        (Reason::Adjudication, None) => "adjudication: draw".to_owned(),
        (Reason::Adjudication, Some(w)) => format!("adjudication: {} wins", side(w)),
        (_, Some(w)) => format!("{}: {} loses", reason.token(), side(!w)),
        (_, None) => reason.token().to_owned(),
    }
}

fn side(color: Color) -> &'static str {
    match color {
        Color::Red => "red",
        Color::Black => "black",
    }
}

fn side_title(color: Color) -> &'static str {
    match color {
        Color::Red => "Red",
        Color::Black => "Black",
    }
}

/// The ending in words, for the last move's comment (as fastchess writes
/// `White mates`).
pub fn ending_words(outcome: &Outcome) -> String {
    let winner = outcome.result.winner();
    let loser = winner.map(|w| side_title(!w)).unwrap_or("");
    match (outcome.reason, winner) {
        (Reason::Checkmate, Some(w)) => format!("{} mates", side_title(w)),
        (Reason::Stalemate, Some(_)) => format!("{loser} has no move"),
        (Reason::Stalemate, None) => "Draw by stalemate".to_owned(),
        (Reason::PerpetualCheck, _) => format!("{loser} loses by perpetual check"),
        (Reason::PerpetualChase, _) => format!("{loser} loses by perpetual chase"),
        (Reason::PerpetualCheckAndChase, _) => {
            format!("{loser} loses by perpetual check and chase")
        }
        (Reason::MutualPerpetual, _) => "Draw by mutual perpetual attack".to_owned(),
        (Reason::Repetition, _) => "Draw by repetition".to_owned(),
        (Reason::MoveLimit, _) => "Draw by the move limit".to_owned(),
        (Reason::InsufficientMaterial, _) => "Draw by insufficient material".to_owned(),
        (Reason::Adjudication, None) => "Draw by adjudication".to_owned(),
        (Reason::Adjudication, Some(w)) => format!("{} wins by adjudication", side_title(w)),
        (Reason::TimeForfeit, _) => format!("{loser} loses on time"),
        (Reason::IllegalMove, _) => format!("{loser} makes an illegal move"),
        (Reason::FalseDrawClaim, _) => {
            format!("{loser} claims a draw the rules do not give")
        }
        (Reason::Resignation, _) => format!("{loser} resigns"),
        (_, None) => outcome.reason.token().to_owned(),
    }
}

/// A score as fastchess writes it: pawns with a sign and two decimals, or
/// `+M5` / `-M3` for a mate in moves.
pub fn score_text(score_cp: i32) -> String {
    if score_cp >= MATE_BOUND {
        format!("+M{}", (MATE - score_cp + 1) / 2)
    } else if score_cp <= -MATE_BOUND {
        format!("-M{}", (MATE + score_cp) / 2)
    } else {
        let sign = if score_cp < 0 { '-' } else { '+' };
        let abs = score_cp.unsigned_abs();
        format!("{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

/// fastchess's move comment: `+0.31/9 0.120s, n=20114`.
pub fn move_comment(stats: &MoveStats) -> String {
    format!(
        "{}/{} {}.{:03}s, n={}",
        score_text(stats.score_cp),
        stats.depth,
        stats.time_ms / 1000,
        stats.time_ms % 1000,
        stats.nodes
    )
}

/// `mv` in `notation`; ICCS is written `H2-E2`.
fn move_text(pos: &Position, mv: Move, notation: Notation) -> Result<String, NotationError> {
    if notation == Notation::Coords {
        if !pos.is_legal(mv) {
            return Err(NotationError::NotLegal(mv));
        }
        let from = mv.from().to_string().to_ascii_uppercase();
        let to = mv.to().to_string().to_ascii_uppercase();
        return Ok(format!("{from}-{to}"));
    }
    notation::format_move(pos, mv, notation)
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A comment's text: braces would end it early, so they become parentheses;
/// line breaks become ` | `.
fn comment_safe(text: &str) -> String {
    text.trim()
        .replace('{', "(")
        .replace('}', ")")
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Lays tokens out in lines of at most [`LINE_LENGTH`] characters.
#[derive(Default)]
struct Lines {
    out: String,
    line: usize,
}

/// Longest movetext line, as fastchess.
const LINE_LENGTH: usize = 80;

impl Lines {
    fn push(&mut self, token: &str) {
        let len = token.chars().count();
        if self.line > 0 && self.line + 1 + len > LINE_LENGTH {
            self.out.push('\n');
            self.line = 0;
        }
        if self.line > 0 {
            self.out.push(' ');
            self.line += 1;
        }
        self.out.push_str(token);
        self.line += len;
    }
}

/// The game as PGN text, ending with a blank line.
pub fn write(game: &PgnGame<'_>, notation: Notation) -> Result<String, PgnError> {
    let after_opening = game.moves.len().saturating_sub(game.opening_plies);
    if !game.per_move.is_empty() && game.per_move.len() != after_opening {
        return Err(PgnError::Stats {
            stats: game.per_move.len(),
            moves: after_opening,
        });
    }
    let h = &game.header;
    let mut out = String::new();
    let mut tag = |name: &str, value: &str| {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
    };
    let result = result_token(game.outcome.result);
    let mut start = game.start.clone();
    start.set_conversion(game.rules.conversion);
    tag("Game", "Chinese Chess");
    tag("Event", h.event);
    tag("Site", h.site);
    tag("Date", h.date);
    tag("Round", &h.round.to_string());
    tag("Red", h.red);
    tag("Black", h.black);
    if let Some(build) = h.red_build {
        tag("RedBuild", build);
    }
    if let Some(build) = h.black_build {
        tag("BlackBuild", build);
    }
    tag("Result", result);
    tag("FEN", &start.to_fen());
    tag("Format", format_tag(notation));
    tag(
        "Variant",
        &game.rules.name().unwrap_or_else(|| "custom".to_owned()),
    );
    tag("Opening", game.opening);
    let overrun = game
        .overrun_ms
        .map_or_else(String::new, |ms| format!(" (overrun {ms} ms)"));
    tag("Termination", &(termination(&game.outcome) + &overrun));
    tag("PlyCount", &game.moves.len().to_string());
    out.push('\n');

    let mut lines = Lines::default();
    let mut pos = start;
    let last = game.moves.len().checked_sub(1);
    for (ply, &mv) in game.moves.iter().enumerate() {
        let mut token = String::new();
        if pos.side_to_move() == Color::Red {
            let _ = write!(token, "{}. ", pos.fullmove_number());
        } else if ply == 0 {
            let _ = write!(token, "{}... ", pos.fullmove_number());
        }
        let text = move_text(&pos, mv, notation)
            .or_else(|e| match e {
                NotationError::Inexpressible { .. } => move_text(&pos, mv, Notation::Coords),
                e => Err(e),
            })
            .map_err(|source| PgnError::Move { ply, source })?;
        token.push_str(&text);
        let mut comment = if ply < game.opening_plies {
            Some("book".to_owned())
        } else {
            game.per_move
                .get(ply - game.opening_plies)
                .map(move_comment)
        };
        if Some(ply) == last {
            let words = ending_words(&game.outcome) + &overrun;
            comment = Some(match comment {
                Some(c) => format!("{c}, {words}"),
                None => words,
            });
        }
        if let Some(c) = comment {
            let _ = write!(token, " {{{c}}}");
        }
        lines.push(&token);
        pos.make(mv);
    }
    if game.moves.is_empty() {
        lines.push(&format!("{{{}{overrun}}}", ending_words(&game.outcome)));
    }
    if !game.stderr_tail.trim().is_empty() {
        lines.push(&format!("{{stderr: {}}}", comment_safe(game.stderr_tail)));
    }
    lines.push(result);
    out.push_str(&lines.out);
    out.push_str("\n\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::START_FEN;

    fn moves(text: &str) -> Vec<Move> {
        text.split_whitespace()
            .map(|m| Move::parse_coords(m).unwrap())
            .collect()
    }

    const HEADER: PgnHeader<'static> = PgnHeader {
        event: "test \"match\"",
        site: "here",
        date: "2026.11.29",
        round: 3,
        red: "dev",
        black: "base",
        red_build: None,
        black_build: None,
    };

    fn game<'a>(
        start: &'a Position,
        mv: &'a [Move],
        per_move: &'a [MoveStats],
        outcome: Outcome,
    ) -> PgnGame<'a> {
        PgnGame {
            header: HEADER,
            start,
            rules: &RuleSet::STANDARD,
            opening: "当头炮",
            moves: mv,
            opening_plies: 1,
            per_move,
            outcome,
            stderr_tail: "",
            overrun_ms: None,
        }
    }

    fn stats(score_cp: i32, depth: u32, nodes: u64, time_ms: u32) -> MoveStats {
        MoveStats {
            score_cp,
            depth,
            nodes,
            time_ms,
        }
    }

    const ADJUDICATED_DRAW: Outcome = Outcome {
        result: GameResult::Draw,
        reason: Reason::Adjudication,
        ply: 3,
    };

    #[test]
    fn the_builds_played_are_tagged_only_when_known() {
        let start = Position::startpos();
        let mv = moves("h2e2 h9g7 h0g2");
        let mut g = game(&start, &mv, &[], ADJUDICATED_DRAW);
        let plain = write(&g, Notation::Coords).unwrap();
        assert!(!plain.contains("Build"), "{plain}");
        g.header.red_build = Some("x86-64-avx2");
        let text = write(&g, Notation::Coords).unwrap();
        assert!(
            text.contains("[Black \"base\"]\n[RedBuild \"x86-64-avx2\"]\n[Result"),
            "{text}"
        );
        assert!(!text.contains("BlackBuild"), "{text}");
    }

    #[test]
    fn writes_the_xiangqi_tags_first_and_iccs_moves_with_comments() {
        let start = Position::startpos();
        let mv = moves("h2e2 h9g7 h0g2");
        let per_move = [stats(-31, 7, 1200, 45), stats(12, 8, 20114, 1520)];
        let text = write(
            &game(&start, &mv, &per_move, ADJUDICATED_DRAW),
            Notation::Coords,
        )
        .unwrap();
        assert!(
            text.starts_with("[Game \"Chinese Chess\"]\n[Event \"test \\\"match\\\"\"]\n"),
            "{text}"
        );
        for tag in [
            "[Red \"dev\"]",
            "[Black \"base\"]",
            "[Result \"1/2-1/2\"]",
            &format!("[FEN \"{START_FEN}\"]"),
            "[Format \"ICCS\"]",
            "[Variant \"standard\"]",
            "[Opening \"当头炮\"]",
            "[Termination \"adjudication: draw\"]",
            "[PlyCount \"3\"]",
        ] {
            assert!(text.contains(&format!("{tag}\n")), "{tag} in {text}");
        }
        assert!(
            text.contains(
                "\n1. H2-E2 {book} H9-G7 {-0.31/7 0.045s, n=1200}\n\
                 2. H0-G2 {+0.12/8 1.520s, n=20114, Draw by adjudication} 1/2-1/2\n\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn writes_wxf_and_chinese() {
        let start = Position::startpos();
        let mv = moves("h2e2 h9g7 h0g2");
        let g = game(&start, &mv, &[], ADJUDICATED_DRAW);
        let chinese = write(&g, Notation::Chinese).unwrap();
        assert!(chinese.contains("[Format \"Chinese\"]"), "{chinese}");
        assert!(
            chinese
                .contains("1. 炮二平五 {book} 马8进7 2. 马二进三 {Draw by adjudication} 1/2-1/2"),
            "{chinese}"
        );
        let wxf = write(&g, Notation::Wxf).unwrap();
        assert!(wxf.contains("[Format \"WXF\"]"), "{wxf}");
        assert!(wxf.contains("1. C2.5 {book} H8+7 2. H2+3"), "{wxf}");
    }

    #[test]
    fn a_black_start_gets_an_ellipsis_and_a_forfeit_names_the_loser() {
        let start = Position::from_fen("4k4/9/9/9/9/9/9/9/4A4/3AK4 b - - 0 7").unwrap();
        let mv = moves("e9d9");
        let outcome = Outcome {
            result: GameResult::Black,
            reason: Reason::TimeForfeit,
            ply: 1,
        };
        let mut g = game(&start, &mv, &[], outcome);
        g.opening_plies = 0;
        g.stderr_tail = "panic: {oops}\nbacktrace";
        let text = write(&g, Notation::Coords).unwrap();
        assert!(
            text.contains("[FEN \"4k4/9/9/9/9/9/9/9/4A4/3AK4 b - - 0 7\"]"),
            "{text}"
        );
        assert!(
            text.contains("[Termination \"time-forfeit: red loses\"]"),
            "{text}"
        );
        assert!(
            text.contains(
                "7... E9-D9 {Red loses on time} {stderr: panic: (oops) | backtrace} 0-1\n"
            ),
            "{text}"
        );
        g.overrun_ms = Some(137);
        let text = write(&g, Notation::Coords).unwrap();
        assert!(
            text.contains("[Termination \"time-forfeit: red loses (overrun 137 ms)\"]"),
            "{text}"
        );
        assert!(
            text.contains("7... E9-D9 {Red loses on time (overrun 137 ms)}\n{stderr:"),
            "{text}"
        );
    }

    #[test]
    fn long_movetext_wraps_at_80_characters() {
        let start = Position::startpos();
        let mv = moves("h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 b2b6 c6c5 b0c2 h7h3");
        let per_move: Vec<MoveStats> = (0..9).map(|i| stats(i * 10, 12, 123_456, 987)).collect();
        let text = write(
            &game(
                &start,
                &mv,
                &per_move,
                Outcome {
                    ply: 10,
                    ..ADJUDICATED_DRAW
                },
            ),
            Notation::Coords,
        )
        .unwrap();
        let body = text.split("\n\n").nth(1).unwrap();
        assert!(body.lines().count() > 2, "{body}");
        for line in body.lines() {
            assert!(line.chars().count() <= LINE_LENGTH, "{line}");
        }
    }

    #[test]
    fn scores_and_bad_input() {
        assert_eq!(score_text(31), "+0.31");
        assert_eq!(score_text(-250), "-2.50");
        assert_eq!(score_text(0), "+0.00");
        assert_eq!(score_text(MATE - 9), "+M5");
        assert_eq!(score_text(-(MATE - 6)), "-M3");
        let start = Position::startpos();
        let mv = moves("h2e2 h9g7 e2e9");
        let err = write(&game(&start, &mv, &[], ADJUDICATED_DRAW), Notation::Coords).unwrap_err();
        assert!(matches!(err, PgnError::Move { ply: 2, .. }), "{err}");
        let err = write(
            &game(&start, &mv, &[MoveStats::default()], ADJUDICATED_DRAW),
            Notation::Coords,
        )
        .unwrap_err();
        assert_eq!(err, PgnError::Stats { stats: 1, moves: 2 });
    }

    #[test]
    fn terminations() {
        let o = |result, reason| Outcome {
            result,
            reason,
            ply: 0,
        };
        assert_eq!(
            termination(&o(GameResult::Red, Reason::Checkmate)),
            "checkmate"
        );
        assert_eq!(
            termination(&o(GameResult::Black, Reason::Adjudication)),
            "adjudication: black wins"
        );
        assert_eq!(
            termination(&o(GameResult::Red, Reason::IllegalMove)),
            "illegal-move: black loses"
        );
        assert_eq!(
            termination(&o(GameResult::Draw, Reason::Repetition)),
            "repetition"
        );
        assert_eq!(
            ending_words(&o(GameResult::Red, Reason::FalseDrawClaim)),
            "Black claims a draw the rules do not give"
        );
    }
}
