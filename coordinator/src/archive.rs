//! Checking a result's games before they are counted and stored.
//!
//! A result is accepted only with exactly one game record per counted game
//! (two per pair), whatever the run keeps: each starts from the opening its
//! lease gave it ([`check_openings`]: the coordinator regenerates it),
//! replays legally from its start position to its stated result, reason and
//! ply under the lease's rules ([`xq_engine::rules::replay`]), and together
//! they give exactly the submitted counts and, when present, the variant
//! statistics. Otherwise the whole result is refused, naming the game
//! (`results.games[i]`), the field and the ply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use xq_engine::Position;
use xq_engine::rules::{Claim, Game, RuleSet, replay};
use xq_games::openings::{BookError, OpeningBook, OpeningMaker, Order};
use xq_proto::variant_stats::VariantStats;
use xq_proto::{
    BatchOutcome, GameRecord, Invalid, OpeningSlice, OpeningSource, Totals, invalid, quote,
};

/// Checks `outcome`'s games against the rules `rules` and its counts.
pub fn check(rules: &RuleSet, outcome: &BatchOutcome) -> Result<(), Invalid> {
    let BatchOutcome {
        totals,
        games,
        variant,
    } = outcome;
    let expected = totals.games();
    if games.len() as u64 != expected {
        return invalid(
            "results.games",
            format!(
                "{} game records for {expected} counted games: a result carries every game it counts",
                games.len()
            ),
        );
    }
    let mut summaries = Vec::with_capacity(if variant.is_some() { games.len() } else { 0 });
    for (i, g) in games.iter().enumerate() {
        let game = check_one(rules, g).map_err(|e| e.within(&format!("results.games[{i}]")))?;
        if variant.is_some() {
            summaries.push(g.summary(game.records()));
        }
    }
    let recount = Totals::of_games(games);
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
            t.pentanomial.0,
            t.wdl.wins,
            t.wdl.draws,
            t.wdl.losses,
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
    if let Some(stated) = variant
        && &VariantStats::of_pairs(&summaries) != stated
    {
        return invalid(
            "results.variant",
            "the statistics are not those of the games (results by colour, lengths, captures)",
        );
    }
    Ok(())
}

/// Checks that game `i` of `games` started from opening
/// `slice.index_of_game(i)` of `book` as the runner plays it (leases are
/// played in [`Order::Sequential`]): the same `opening_index`, the same
/// start position, and the opening's moves as its first `opening_plies`
/// moves, all of them unless the game ended inside the opening.
pub fn check_openings(
    slice: &OpeningSlice,
    book: &OpeningBook,
    rules: &RuleSet,
    games: &[GameRecord],
) -> Result<(), Invalid> {
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
        if g.start_fen != opening.fen && normal(&g.start_fen) != normal(&opening.fen) {
            return invalid(
                field("start_fen"),
                format!(
                    "{} is not the start of opening {index} ({})",
                    quote(&g.start_fen),
                    quote(&opening.fen)
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
    /// Whether the book of run `run_id` is kept.
    pub fn contains(&self, run_id: u64) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&run_id)
    }

    /// The book of run `run_id`, parsed from `source` the first time. A book
    /// asset ([`OpeningSource::Book`]) must come as the lines of its text
    /// (the coordinator has no blob cache): the caller reads it from the store
    /// when [`OpeningBooks::contains`] says the run's book is not kept.
    pub fn get(&self, run_id: u64, source: &OpeningSource) -> Result<Arc<OpeningBook>, BookError> {
        let cached = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&run_id)
            .cloned();
        if let Some(book) = cached {
            return Ok(book);
        }
        let book = Arc::new(OpeningBook::load(source, std::path::Path::new(""))?);
        let mut books = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if books.len() >= MAX_BOOKS {
            books.clear();
        }
        books.insert(run_id, Arc::clone(&book));
        Ok(book)
    }
}

/// Replays one game record; the replayed game on success.
fn check_one(rules: &RuleSet, g: &GameRecord) -> Result<Game, Invalid> {
    let start = Position::from_fen(&g.start_fen).map_err(|e| {
        Invalid::new(
            "start_fen",
            format!("{} is not a position: {e}", quote(&g.start_fen)),
        )
    })?;
    let claim = Claim {
        moves: &g.moves,
        opening_plies: g.opening_plies as usize,
        outcome: g.outcome(),
    };
    replay(start, *rules, &claim)
        .map_err(|e| Invalid::new("moves", format!("opening {}: {e}", g.opening_index)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::rules::{GameResult, Reason};
    use xq_engine::{Move, START_FEN};
    use xq_proto::MoveStats;

    fn game(red_player: u8, moves: &str, result: GameResult, reason: Reason) -> GameRecord {
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
            reason,
            red_player,
            stderr_tail: String::new(),
            overrun_ms: None,
        }
    }

    /// The outcome of `games` with the counts they give (and no variant
    /// statistics).
    fn outcome(games: &[GameRecord]) -> BatchOutcome {
        BatchOutcome {
            totals: Totals::of_games(games),
            games: games.to_vec(),
            variant: None,
        }
    }

    #[test]
    fn games_that_replay_and_add_up_are_accepted() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
            game(1, "h2e2 h9g7 h0g2", GameResult::Red, Reason::TimeForfeit),
        ];
        check(&RuleSet::STANDARD, &outcome(&games)).unwrap();
    }

    #[test]
    fn counts_without_their_games_are_refused() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
            game(1, "h2e2 h9g7 h0g2", GameResult::Red, Reason::TimeForfeit),
        ];
        let mut without = outcome(&games);
        without.games.clear();
        let text = check(&RuleSet::STANDARD, &without).unwrap_err().to_string();
        assert!(
            text.contains("results.games") && text.contains("0 game records for 2"),
            "{text}"
        );
        without.games.push(games[0].clone());
        let text = check(&RuleSet::STANDARD, &without).unwrap_err().to_string();
        assert!(text.contains("1 game records for 2"), "{text}");
    }

    #[test]
    fn a_game_that_does_not_replay_is_named_with_its_ply() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
            game(1, "h2e2 h9g7 e2e9", GameResult::Red, Reason::Resignation),
        ];
        let err = check(&RuleSet::STANDARD, &outcome(&games)).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("results.games[1]"), "{text}");
        assert!(text.contains("ply 2: illegal move e2e9"), "{text}");
        let games = [
            game(0, "h2e2 h9g7", GameResult::Red, Reason::Checkmate),
            game(1, "h2e2", GameResult::Red, Reason::Adjudication),
        ];
        let text = check(&RuleSet::STANDARD, &outcome(&games))
            .unwrap_err()
            .to_string();
        assert!(text.contains("results.games[0]"), "{text}");
    }

    #[test]
    fn games_that_contradict_the_counts_are_refused() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
            game(1, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
        ];
        let mut o = outcome(&games);
        o.totals.wdl.wins += 1;
        o.totals.wdl.draws -= 1;
        let text = check(&RuleSet::STANDARD, &o).unwrap_err().to_string();
        assert!(text.contains("results.games"), "{text}");
    }

    #[test]
    fn variant_statistics_must_be_the_games() {
        let games = [
            game(0, "h2e2 h9g7", GameResult::Draw, Reason::Adjudication),
            game(1, "h2e2 h9g7 h0g2", GameResult::Red, Reason::TimeForfeit),
        ];
        let mut stats = VariantStats::of_pairs(&games.each_ref().map(|g| g.summary(&[])));
        let mut o = outcome(&games);
        o.variant = Some(stats.clone());
        check(&RuleSet::STANDARD, &o).unwrap();
        stats.red_wins += 1;
        stats.draws -= 1;
        o.variant = Some(stats);
        let text = check(&RuleSet::STANDARD, &o).unwrap_err().to_string();
        assert!(text.contains("results.variant"), "{text}");
    }
}
