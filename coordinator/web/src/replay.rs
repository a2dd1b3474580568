//! A stored game as the game page shows it: every ply's move (ICCS and
//! Chinese notation), the position after it, and what the mover reported
//! (score, depth, nodes, time), replayed from the game's start position
//! under its lease's rules. The board script (`templates/board.js`) draws
//! the positions; the move table is plain HTML.

use serde::Serialize;
use xq_engine::Color;
use xq_engine::notation::{Notation, format_move};
use xq_games::pgn::{ending_words, score_text, termination};

use xq_engine::Position;
use xq_engine::rules::Outcome;

use xq_coordinator::game_export::{ExportError, ExportedGame};

/// One ply: the move and the position after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ply {
    /// 1 for the first move.
    pub n: usize,
    /// The move number as PGN counts it (a Red and a Black ply share one).
    pub number: u32,
    /// `red` or `black`: who moved.
    pub side: &'static str,
    /// ICCS coordinates, `h2e2`.
    pub iccs: String,
    /// Chinese notation (ICCS when the move has no Chinese form).
    pub text: String,
    /// The position after the move.
    pub fen: String,
    /// From the opening, not chosen by an engine.
    pub book: bool,
    /// The mover's score (`+0.31`, `-M3`), `None` for an opening move or
    /// when none was reported.
    pub score: Option<String>,
    pub score_cp: Option<i32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Milliseconds.
    pub time_ms: Option<u32>,
}

/// A game page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameView {
    pub run_id: u64,
    pub lease_id: u64,
    pub game_index: u32,
    pub worker_id: u64,
    pub red: String,
    pub black: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The end reason's token.
    pub reason: String,
    /// The `[Termination]` text (`time-forfeit: black loses`).
    pub termination: String,
    /// The ending in words (`Red mates`).
    pub ending: String,
    pub rules: String,
    pub opening_index: u64,
    pub opening_plies: usize,
    /// The position before the first move.
    pub start_fen: String,
    pub plies: Vec<Ply>,
    /// The last stderr lines of an engine that failed.
    pub stderr_tail: String,
}

impl GameView {
    /// Replays `g` of run `run_id` under its lease's rules; `players` names
    /// players 0 and 1. A move that does not replay is an error naming its
    /// ply.
    pub fn new(run_id: u64, players: &[String; 2], g: &ExportedGame) -> Result<Self, ExportError> {
        let (rules, g) = (g.rules, &g.game);
        let r = &g.record;
        let at = |what: String| ExportError::Game {
            game_index: g.game_index,
            lease_id: g.lease_id,
            what,
        };
        let mut pos =
            Position::from_fen(&r.start_fen).map_err(|e| at(format!("start FEN: {e}")))?;
        let outcome = Outcome {
            result: r.result,
            reason: r.reason,
            ply: r.moves.len(),
        };
        pos.set_conversion(rules.conversion);
        let start_fen = pos.to_fen();
        let opening = r.opening_plies as usize;
        let mut plies = Vec::with_capacity(r.moves.len());
        for (i, &mv) in r.moves.iter().enumerate() {
            let side = pos.side_to_move();
            let number = pos.fullmove_number();
            let iccs = format_move(&pos, mv, Notation::Coords)
                .map_err(|e| at(format!("ply {}: {e}", i + 1)))?;
            let text = format_move(&pos, mv, Notation::Chinese).unwrap_or_else(|_| iccs.clone());
            pos.make(mv);
            let stats = i.checked_sub(opening).and_then(|k| r.per_move.get(k));
            let reported = stats.filter(|s| s.depth > 0 || s.nodes > 0 || s.score_cp != 0);
            plies.push(Ply {
                n: i + 1,
                number,
                side: if side == Color::Red { "red" } else { "black" },
                iccs,
                text,
                fen: pos.to_fen(),
                book: i < opening,
                score: reported.map(|s| score_text(s.score_cp)),
                score_cp: reported.map(|s| s.score_cp),
                depth: stats.map(|s| s.depth),
                nodes: stats.map(|s| s.nodes),
                time_ms: stats.map(|s| s.time_ms),
            });
        }
        let red = usize::from(r.red_player.min(1));
        Ok(GameView {
            run_id,
            lease_id: g.lease_id,
            game_index: g.game_index,
            worker_id: g.worker_id,
            red: players[red].clone(),
            black: players[1 - red].clone(),
            result: xq_games::pgn::result_token(r.result).to_owned(),
            reason: r.reason.token().to_owned(),
            termination: termination(&outcome),
            ending: ending_words(&outcome),
            rules: rules.name().unwrap_or_else(|| "custom".to_owned()),
            opening_index: r.opening_index,
            opening_plies: opening,
            start_fen,
            plies,
            stderr_tail: r.stderr_tail.clone(),
        })
    }

    /// What the board script reads: the start position and each ply, as
    /// JSON safe to put inside a `<script>` element.
    pub fn script_data(&self) -> String {
        let json = serde_json::json!({
            "start": self.start_fen,
            "plies": self.plies,
        });
        json.to_string()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    }
}

#[cfg(test)]
mod tests {
    use xq_engine::rules::GameResult;
    use xq_engine::{Move, START_FEN};
    use xq_proto::{GameRecord, MoveStats};

    use super::*;

    use xq_coordinator::service::queries::ArchivedGame;

    fn game(moves: &str, opening_plies: u32, rules: &str) -> ExportedGame {
        let moves: Vec<Move> = moves
            .split_whitespace()
            .map(|m| Move::parse_coords(m).unwrap())
            .collect();
        let after = moves.len() - opening_plies as usize;
        let game = ArchivedGame {
            lease_id: 7,
            worker_id: 2,
            game_index: 1,
            record: GameRecord {
                opening_index: 3,
                start_fen: START_FEN.to_owned(),
                per_move: (0..after)
                    .map(|i| MoveStats {
                        score_cp: 31 - 10 * i as i32,
                        depth: 9,
                        nodes: 20_000 + i as u64,
                        time_ms: 120,
                    })
                    .collect(),
                moves,
                opening_plies,
                result: GameResult::Red,
                reason: xq_engine::rules::Reason::TimeForfeit,
                red_player: 1,
                stderr_tail: String::new(),
                overrun_ms: None,
            },
        };
        ExportedGame {
            game,
            rules: rules.parse().unwrap(),
            builds: [None, None],
        }
    }

    fn players() -> [String; 2] {
        ["dev".to_owned(), "base".to_owned()]
    }

    #[test]
    fn every_ply_has_its_move_position_and_report() {
        let view = GameView::new(1, &players(), &game("h2e2 h9g7 h0g2", 1, "standard")).unwrap();
        assert_eq!((view.red.as_str(), view.black.as_str()), ("base", "dev"));
        assert_eq!(view.result, "1-0");
        assert_eq!(view.termination, "time-forfeit: black loses");
        assert_eq!(view.start_fen, START_FEN);
        assert_eq!(view.plies.len(), 3);
        let first = &view.plies[0];
        assert!(first.book && first.score.is_none() && first.depth.is_none());
        assert_eq!(
            (first.iccs.as_str(), first.text.as_str()),
            ("h2e2", "炮二平五")
        );
        assert_eq!(
            first.fen,
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
        );
        let second = &view.plies[1];
        assert_eq!((second.side, second.number), ("black", 1));
        assert_eq!(second.score.as_deref(), Some("+0.31"));
        assert_eq!(
            (second.depth, second.nodes, second.time_ms),
            (Some(9), Some(20_000), Some(120))
        );
        assert_eq!(view.plies[2].score.as_deref(), Some("+0.21"));
        assert_eq!(view.plies[2].number, 2);
        let data = view.script_data();
        assert!(data.contains("\"iccs\":\"h0g2\"") && !data.contains('<'));
    }

    #[test]
    fn a_move_that_does_not_replay_names_its_ply() {
        let err = GameView::new(1, &players(), &game("h2e2 h9g7 e2e9", 0, "standard")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("lease 7") && text.contains("ply 3"), "{text}");
    }
}
