//! Stand-in results for tests and benches: every game of a lease ends by
//! adjudication right after its opening, with a result the caller chooses.
//!
//! Such a result is what a runner that adjudicates at once would send: each
//! game starts from the opening its lease gives it, plays exactly the
//! opening's moves, and the counts are those of the games. It passes every
//! check the coordinator makes on a result, so a test can drive a run to any
//! score without playing, and still send the evidence every result needs.

use xq_engine::Position;
use xq_engine::rules::{Game, GameResult, Reason};

use xq_proto::variant_stats::VariantStats;
use xq_proto::{BatchOutcome, GameRecord, MoveStats, Score, Totals, WorkSpec};

use crate::openings::{BookError, OpeningBook, OpeningMaker, Order};

/// Why no stand-in could be made for a lease.
#[derive(Debug, thiserror::Error)]
pub enum StandInError {
    #[error("the lease's openings: {0}")]
    Book(#[from] BookError),
    #[error("opening {index} does not start from a legal position: {reason}")]
    Opening { index: u64, reason: String },
}

/// The games of every pair of `work`, adjudicated after their openings;
/// `score(i)` is the first player's score in game `i` (pair `p` is games
/// `2p` and `2p + 1`; the first player is Red in the even ones). Totals and
/// the variant statistics are counted from those games.
pub fn adjudicated(
    work: &WorkSpec,
    mut score: impl FnMut(u64) -> Score,
) -> Result<BatchOutcome, StandInError> {
    let book = OpeningBook::load(&work.openings.source, std::path::Path::new(""))?;
    let mut maker = OpeningMaker::default();
    let mut last: Option<(u64, xq_proto::Opening)> = None;
    let mut games = Vec::with_capacity(2 * work.pairs as usize);
    let mut summaries = Vec::with_capacity(games.capacity());
    for game in 0..2 * u64::from(work.pairs) {
        let index = work.openings.index_of_game(game);
        let opening = match &last {
            Some((at, o)) if *at == index => o.clone(),
            _ => {
                let o = maker.opening(&book, work.openings.seed, Order::Sequential, index);
                last.insert((index, o)).1.clone()
            }
        };
        let bad = |reason: String| StandInError::Opening { index, reason };
        let start = Position::from_fen(&opening.fen).map_err(|e| bad(e.to_string()))?;
        let mut replayed = Game::new(start, work.rules);
        for &mv in &opening.moves {
            replayed.play(mv).map_err(|e| bad(e.to_string()))?;
        }
        let mut record = GameRecord {
            opening_index: index,
            start_fen: opening.fen,
            opening_plies: opening.moves.len() as u32,
            moves: opening.moves,
            result: GameResult::Draw,
            reason: Reason::Adjudication,
            red_player: (game % 2) as u8,
            per_move: Vec::<MoveStats>::new(),
            stderr_tail: String::new(),
            overrun_ms: None,
        };
        record.result = score(game).result_for(record.first_color());
        summaries.push(record.summary(replayed.records()));
        games.push(record);
    }
    Ok(BatchOutcome {
        totals: Totals::of_games(&games),
        variant: Some(VariantStats::of_pairs(&summaries)),
        games,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counts_are_the_games_and_the_scores_the_callers() {
        let work = WorkSpec::example();
        let scores = [Score::Win, Score::Loss, Score::Draw, Score::Draw];
        let outcome = adjudicated(&work, |i| scores[(i % 4) as usize]).unwrap();
        assert_eq!(outcome.games.len(), 2 * work.pairs as usize);
        let t = &outcome.totals;
        assert_eq!(t.pairs, u64::from(work.pairs));
        assert_eq!((t.wdl.wins, t.wdl.draws, t.wdl.losses), (4, 8, 4));
        assert_eq!(t.pentanomial, xq_proto::Pentanomial([0, 0, 8, 0, 0]));
        assert_eq!(t.reasons["adjudication"], 16);
        outcome.check(work.pairs).unwrap();
        for (i, g) in outcome.games.iter().enumerate() {
            assert_eq!(g.opening_index, work.openings.index_of_game(i as u64));
            assert_eq!(g.moves.len(), g.opening_plies as usize);
        }
        // Game 0: the first player is Red and wins; game 1: it is Black and loses.
        assert_eq!(outcome.games[0].result, GameResult::Red);
        assert_eq!(outcome.games[1].result, GameResult::Red);
        assert_eq!(outcome.variant.unwrap().red_wins, 8);
    }
}
