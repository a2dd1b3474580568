//! Checking a result's games before they are counted and stored.
//!
//! A result's games are accepted only when there are none (a worker that
//! keeps no games) or exactly one per counted game, each starts from the
//! opening its lease gave it ([`check_openings`]: the coordinator
//! regenerates it), replays legally from its start position to its stated
//! result, reason and ply under the lease's rules
//! ([`xq_engine::rules::replay`]), and together they give exactly the
//! submitted counts. Otherwise the whole result is refused, naming the game
//! (`results.games[i]`), the field and the ply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use xq_engine::rules::{Claim, Outcome, Reason, RuleSet, replay};
use xq_engine::{Color, Position};
use xq_proto::{
    GameRecord, Invalid, OpeningError, OpeningSlice, OpeningSource, Score, Totals, invalid,
};
use xq_worker::openings::{OpeningBook, OpeningMaker, Order};

/// Checks `games` against the rules `rules` and the submitted `totals`.
pub fn check(rules: &str, games: &[GameRecord], totals: &Totals) -> Result<(), Invalid> {
    if games.is_empty() {
        return Ok(());
    }
    let expected = totals.games();
    if games.len() as u64 != expected {
        return invalid(
            "results.games",
            format!("{} game records for {expected} counted games", games.len()),
        );
    }
    let rules: RuleSet = rules
        .parse()
        .map_err(|e| Invalid::new("lease.rules", format!("{e}")))?;
    for (i, g) in games.iter().enumerate() {
        check_one(&rules, g).map_err(|e| e.within(&format!("results.games[{i}]")))?;
    }
    let recount = totals_of(games);
    if !totals.reasons.is_empty() && recount.reasons != totals.reasons {
        return invalid(
            "results.games",
            format!(
                "the games' end reasons {:?} are not the counted {:?}",
                recount.reasons, totals.reasons
            ),
        );
    }
    let counts = |t: &Totals| {
        (
            t.pairs,
            t.pentanomial,
            t.wins,
            t.draws,
            t.losses,
            t.total_plies,
        )
    };
    if counts(&recount) != counts(totals) {
        return invalid(
            "results.games",
            format!(
                "the games give pairs, pentanomial, W/D/L and plies {:?}, the counts {:?}",
                counts(&recount),
                counts(totals)
            ),
        );
    }
    Ok(())
}

/// The counts `games` give, pair by pair (pair p: games 2p and 2p + 1), from
/// the first player's view.
pub fn totals_of(games: &[GameRecord]) -> Totals {
    let mut t = Totals::default();
    for pair in games.chunks_exact(2) {
        t.add_pair([&pair[0], &pair[1]].map(|g| {
            let first = if g.red_player == 0 {
                Color::Red
            } else {
                Color::Black
            };
            (
                Score::of(g.result, first),
                g.moves.len() as u64,
                g.reason.as_str(),
            )
        }));
    }
    t
}

/// Checks that game `i` of `games` started from opening
/// `slice.index_of_game(i)` of `book` as the runner plays it (leases are
/// played in [`Order::Sequential`]): the same `opening_index`, the same
/// start position, and the opening's moves as its first `opening_plies`
/// moves, all of them unless the game ended inside the opening.
pub fn check_openings(
    slice: &OpeningSlice,
    book: &OpeningBook,
    rules: &str,
    games: &[GameRecord],
) -> Result<(), Invalid> {
    let rules: RuleSet = rules
        .parse()
        .map_err(|e| Invalid::new("lease.rules", format!("{e}")))?;
    let mut maker = OpeningMaker::default();
    let mut last: Option<(u64, xq_proto::Opening)> = None;
    for (i, g) in games.iter().enumerate() {
        let field = |f: &str| format!("results.games[{i}].{f}");
        let index = slice.index_of_game(i as u64);
        if g.opening_index != index {
            return invalid(
                field("opening_index"),
                format!("{} where the lease gave opening {index}", g.opening_index),
            );
        }
        let opening = match &last {
            Some((at, o)) if *at == index => o,
            _ => {
                let o = maker.opening(book, slice.seed, Order::Sequential, index);
                &last.insert((index, o)).1
            }
        };
        let normal = |fen: &str| {
            Position::from_fen(fen).ok().map(|mut p| {
                p.set_conversion(rules.conversion);
                p.to_fen()
            })
        };
        if normal(&g.start_fen) != normal(&opening.fen) {
            return invalid(
                field("start_fen"),
                format!(
                    "'{}' is not the start of opening {index} ('{}')",
                    g.start_fen, opening.fen
                ),
            );
        }
        let plies = g.opening_plies as usize;
        let book_moves = &opening.moves;
        let ended_inside = plies < book_moves.len() && g.moves.len() == plies;
        if plies > book_moves.len() || (plies < book_moves.len() && !ended_inside) {
            return invalid(
                field("opening_plies"),
                format!(
                    "{plies} where opening {index} has {} moves",
                    book_moves.len()
                ),
            );
        }
        if let Some(ply) = (0..plies).find(|&p| g.moves[p] != book_moves[p]) {
            return invalid(
                field("moves"),
                format!(
                    "ply {ply}: {} where opening {index} plays {}",
                    g.moves[ply], book_moves[ply]
                ),
            );
        }
    }
    Ok(())
}

/// The parsed opening books of runs, by run id: a run's source never
/// changes, so its lines are parsed once. Holds at most [`MAX_BOOKS`] runs
/// (then starts over).
#[derive(Debug, Clone, Default)]
pub struct OpeningBooks(Arc<Mutex<HashMap<u64, Arc<OpeningBook>>>>);

/// Most runs whose books [`OpeningBooks`] keeps.
pub const MAX_BOOKS: usize = 64;

impl OpeningBooks {
    /// The book of run `run_id`, parsed from `source` the first time.
    pub fn get(
        &self,
        run_id: u64,
        source: &OpeningSource,
    ) -> Result<Arc<OpeningBook>, OpeningError> {
        let cached = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&run_id)
            .cloned();
        if let Some(book) = cached {
            return Ok(book);
        }
        let book = Arc::new(OpeningBook::load(source)?);
        let mut books = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if books.len() >= MAX_BOOKS {
            books.clear();
        }
        books.insert(run_id, Arc::clone(&book));
        Ok(book)
    }
}

fn check_one(rules: &RuleSet, g: &GameRecord) -> Result<(), Invalid> {
    let start =
        Position::from_fen(&g.start_fen).map_err(|e| Invalid::new("start_fen", format!("{e}")))?;
    let reason = Reason::from_token(&g.reason)
        .ok_or_else(|| Invalid::new("reason", format!("unknown end reason '{}'", g.reason)))?;
    let claim = Claim {
        moves: &g.moves,
        opening_plies: g.opening_plies as usize,
        outcome: Outcome {
            result: g.result,
            reason,
            ply: g.moves.len(),
        },
    };
    replay(start, *rules, &claim)
        .map(drop)
        .map_err(|e| Invalid::new("moves", format!("opening {}: {e}", g.opening_index)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::rules::GameResult;
    use xq_engine::{Move, START_FEN};
    use xq_proto::MoveStats;

    fn game(red_player: u8, moves: &str, result: GameResult, reason: &str) -> GameRecord {
        let moves: Vec<Move> = moves
            .split_whitespace()
            .map(|m| Move::parse_coords(m).unwrap())
            .collect();
        GameRecord {
            opening_index: 3,
            start_fen: START_FEN.to_owned(),
            per_move: vec![MoveStats::default(); moves.len()],
            moves,
            opening_plies: 0,
            result,
            reason: reason.to_owned(),
            red_player,
            stderr_tail: String::new(),
            overrun_ms: None,
        }
    }

    #[test]
    fn games_that_replay_and_add_up_are_accepted() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, "adjudication"),
            game(1, "h2e2 h9g7 h0g2", GameResult::Red, "time-forfeit"),
        ];
        let t = totals_of(&games);
        check("standard", &games, &t).unwrap();
        check("standard", &[], &t).unwrap();
    }

    #[test]
    fn a_game_that_does_not_replay_is_named_with_its_ply() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, "adjudication"),
            game(1, "h2e2 h9g7 e2e9", GameResult::Red, "resignation"),
        ];
        let err = check("standard", &games, &totals_of(&games)).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("results.games[1]"), "{text}");
        assert!(text.contains("ply 2: illegal move e2e9"), "{text}");
        let games = [
            game(0, "h2e2 h9g7", GameResult::Red, "checkmate"),
            game(1, "h2e2", GameResult::Red, "nonsense"),
        ];
        let text = check("standard", &games, &totals_of(&games))
            .unwrap_err()
            .to_string();
        assert!(text.contains("results.games[0]"), "{text}");
    }

    #[test]
    fn games_that_contradict_the_counts_are_refused() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, "adjudication"),
            game(1, "h2e2 h9g7", GameResult::Draw, "adjudication"),
        ];
        let mut t = totals_of(&games);
        check("standard", &games[..1], &t).unwrap_err();
        t.wins += 1;
        t.draws -= 1;
        let text = check("standard", &games, &t).unwrap_err().to_string();
        assert!(text.contains("results.games"), "{text}");
    }
}
