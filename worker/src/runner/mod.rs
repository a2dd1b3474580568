//! The parallel game runner.
//!
//! A [`Runner`] owns a rayon pool of `threads` threads and, per thread, one
//! [`Searcher`](xq_engine::search::Searcher) for each of the two players, so memory stays at
//! `threads × (hash₀ + hash₁)` however many games a match has. Searchers are
//! reused across games and cleared before each one: a game's moves depend only on
//! its opening, the players and the rules, never on what the thread played before.
//! With node or depth limits a match is therefore reproducible game for game, on
//! any machine and any thread count.
//!
//! Game `g` of a match plays opening `offset + g / 2` (with
//! [`MatchSpec::opening_per_game`], opening `2·offset + g`); the first player
//! (index 0) has Red in even games and Black in odd ones, so games `2p` and
//! `2p + 1` form pair `p`.
//!
//! Generated openings are judged for balance under the standard rules with
//! draws worth 0, whatever the match's rules: every rule variant and draw
//! valuation of a study starts from the same openings.

mod batch;
mod game;
mod player;
mod player_stats;
mod seat;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use xq_engine::rules::RuleSet;

pub use batch::{EnginePlayer, match_spec};
pub use game::{GameSetup, PlayError, PlayedGame, play_game, search_rules};
pub use player::PlayerConfig;
pub use player_stats::{Fault, GameStats, PlayerStats};
pub use seat::{Choice, Seat, SeatError, forfeit};

use xq_games::openings::{OpeningBook, OpeningMaker, Order};
use xq_proto::work::opening_index;
use xq_proto::{Adjudication, BatchOutcome, VariantStats};

/// A match between two players.
#[derive(Clone, Debug)]
pub struct MatchSpec {
    /// Player 0 (the first player: "dev" in a test) and player 1.
    pub players: [PlayerConfig; 2],
    pub rules: RuleSet,
    /// Game pairs to play.
    pub pairs: u64,
    pub openings: OpeningBook,
    pub order: Order,
    /// Seed of the opening source.
    pub seed: u64,
    /// Index of the first opening (with `opening_per_game`: of the first pair).
    pub offset: u64,
    /// Each game takes its own opening (`2·offset + g`) instead of a pair
    /// sharing one: for identical players, whose colour-swapped replay of an
    /// opening would repeat the game.
    pub opening_per_game: bool,
    pub adjudication: Adjudication,
    /// Whether to keep every game's record in the outcome.
    pub keep_games: bool,
}

/// What a match produced: its outcome, as a lease's result carries it, and
/// how it was played, which only the runner's summary shows.
#[derive(Clone, Debug, Default)]
pub struct MatchReport {
    /// Over the complete pairs: the totals (player 0's view), the records of
    /// their games in game order when [`MatchSpec::keep_games`] asks for
    /// them, and Red's view and capture statistics (always present).
    pub outcome: BatchOutcome,
    /// The name of each kept game's opening, in the order of
    /// `outcome.games`.
    pub openings: Vec<String>,
    /// Nodes searched.
    pub nodes: u64,
    /// Time inside the searches, summed over threads.
    pub search_time: Duration,
    /// Time spent on games (setup, arbiter, adjudication, search), summed over threads.
    pub game_time: Duration,
    /// Wall-clock time of the match.
    pub wall_time: Duration,
    /// Each player's faults and latencies over the complete pairs.
    pub players: [PlayerStats; 2],
}

impl MatchReport {
    /// Games per second of wall time.
    pub fn games_per_second(&self) -> f64 {
        self.outcome.totals.games() as f64 / self.wall_time.as_secs_f64().max(1e-9)
    }

    /// Nodes per second of search time, per thread.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.search_time.as_secs_f64().max(1e-9)
    }

    /// Share of the game threads' time spent inside the search.
    pub fn search_share(&self) -> f64 {
        self.search_time.as_secs_f64() / self.game_time.as_secs_f64().max(1e-9)
    }
}

/// Why a match could not be played.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("could not start {threads} game threads: {source}")]
    Pool {
        threads: usize,
        source: rayon::ThreadPoolBuildError,
    },
    #[error("opening {index} does not fit its position: {source}")]
    Opening {
        index: u64,
        source: xq_engine::rules::GameError,
    },
    /// A player's setting fails every game; the match stopped.
    #[error("the match stopped: {0}")]
    Setting(SeatError),
}

/// One pool thread's reusable search state.
#[derive(Debug)]
struct ThreadState {
    seats: [Seat; 2],
    /// Makes generated openings.
    openings: OpeningMaker,
}

/// A pool of game threads with their search state.
#[derive(Debug)]
pub struct Runner {
    pool: rayon::ThreadPool,
    states: Vec<Mutex<ThreadState>>,
}

impl Runner {
    /// A runner with `threads` game threads (at least one).
    pub fn new(threads: usize) -> Result<Runner, RunError> {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("xq-game-{i}"))
            .build()
            .map_err(|source| RunError::Pool { threads, source })?;
        let states = (0..threads)
            .map(|_| {
                Mutex::new(ThreadState {
                    seats: [Seat::default(), Seat::default()],
                    openings: OpeningMaker::default(),
                })
            })
            .collect();
        Ok(Runner { pool, states })
    }

    /// Number of game threads.
    pub fn threads(&self) -> usize {
        self.states.len()
    }

    /// Plays `spec` on every game thread, calling `on_game` as each game ends
    /// (from the game threads). When `stop` is set, games in flight are
    /// abandoned and the outcome counts the pairs finished so far.
    pub fn play(
        &self,
        spec: &MatchSpec,
        stop: &Arc<AtomicBool>,
        on_game: &(dyn Fn(u64, &PlayedGame) + Sync),
    ) -> Result<MatchReport, RunError> {
        self.play_at_once(spec, self.threads(), stop, on_game)
    }

    /// [`Runner::play`] with at most `games` games at once (1 to the
    /// runner's threads), for games whose engines search on several threads.
    pub fn play_at_once(
        &self,
        spec: &MatchSpec,
        games: usize,
        stop: &Arc<AtomicBool>,
        on_game: &(dyn Fn(u64, &PlayedGame) + Sync),
    ) -> Result<MatchReport, RunError> {
        let games = games.clamp(1, self.threads());
        let narrow = if games < self.threads() {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(games)
                    .thread_name(|i| format!("xq-game-{i}"))
                    .build()
                    .map_err(|source| RunError::Pool {
                        threads: games,
                        source,
                    })?,
            )
        } else {
            None
        };
        let pool = narrow.as_ref().unwrap_or(&self.pool);
        let started = Instant::now();
        let failed = AtomicBool::new(false);
        let games: Vec<Result<Option<PlayedGame>, RunError>> = pool.install(|| {
            (0..spec.pairs.saturating_mul(2))
                .into_par_iter()
                .map(|g| {
                    if failed.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                    let record = self.play_one(spec, g, stop).inspect_err(|_| {
                        failed.store(true, Ordering::Relaxed);
                    })?;
                    if let Some(r) = &record {
                        on_game(g, r);
                    }
                    Ok(record)
                })
                .collect()
        });
        let mut report = MatchReport::default();
        let mut variant = VariantStats::default();
        let outcome = &mut report.outcome;
        let mut games = games.into_iter();
        while let (Some(first), Some(second)) = (games.next(), games.next()) {
            let (Some(first), Some(second)) = (first?, second?) else {
                continue;
            };
            for g in [&first, &second] {
                report.nodes += g.nodes;
                report.search_time += g.search_time;
                report.game_time += g.total_time;
                for (player, stats) in report.players.iter_mut().zip(&g.stats) {
                    player.add(stats);
                }
            }
            outcome.totals.add_pair(
                [&first.record, &second.record]
                    .map(|g| (g.first_score(), g.moves.len() as u64, g.reason.token())),
            );
            variant.add_pair(&first.summary(), &second.summary());
            if spec.keep_games {
                for g in [first, second] {
                    outcome.games.push(g.record);
                    report.openings.push(g.opening);
                }
            }
        }
        report.outcome.variant = Some(variant);
        report.wall_time = started.elapsed();
        Ok(report)
    }

    fn play_one(
        &self,
        spec: &MatchSpec,
        g: u64,
        stop: &Arc<AtomicBool>,
    ) -> Result<Option<PlayedGame>, RunError> {
        let idx = rayon::current_thread_index().unwrap_or(0) % self.states.len();
        let mut state = self.states[idx]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let state = &mut *state;
        let index = opening_index(spec.offset, spec.opening_per_game, g);
        let opening = state
            .openings
            .opening(&spec.openings, spec.seed, spec.order, index);
        let setup = GameSetup {
            players: &spec.players,
            red: (g % 2) as usize,
            rules: &spec.rules,
            adjudication: spec.adjudication,
            opening: &opening,
            stop,
        };
        let mut played = play_game(&setup, &mut state.seats).map_err(|e| match e {
            PlayError::Opening(source) => RunError::Opening { index, source },
            PlayError::Setting(e) => RunError::Setting(e),
        })?;
        if let Some(g) = &mut played {
            g.record.opening_index = index;
        }
        Ok(played)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::params::Params;
    use xq_proto::{Limit, Totals};

    fn spec(pairs: u64, dev: Limit, base: Limit) -> MatchSpec {
        let player = |name: &str, limit| PlayerConfig {
            name: name.to_string(),
            params: Params::default(),
            limit,
            hash_mb: 1,
            threads: 1,
            engine: None,
            draw_contempt: true,
        };
        MatchSpec {
            players: [player("dev", dev), player("base", base)],
            rules: RuleSet::default(),
            pairs,
            openings: OpeningBook::Builtin { random_plies: 4 },
            order: Order::Sequential,
            seed: 11,
            offset: 0,
            opening_per_game: false,
            adjudication: Adjudication::default(),
            keep_games: true,
        }
    }

    fn play(runner: &Runner, spec: &MatchSpec) -> BatchOutcome {
        let report = runner
            .play(spec, &Arc::new(AtomicBool::new(false)), &|_, _| {})
            .unwrap();
        assert_eq!(report.openings.len(), report.outcome.games.len());
        report.outcome
    }

    #[test]
    fn totals_add_up() {
        let runner = Runner::new(2).unwrap();
        let o = play(&runner, &spec(3, Limit::Nodes(300), Limit::Nodes(200)));
        let t = &o.totals;
        assert_eq!((t.games(), t.pairs), (6, 3));
        assert_eq!(t.pentanomial.pairs(), t.pairs);
        assert_eq!(t.reasons.values().sum::<u64>(), t.games());
        assert_eq!(o.games.len(), 6);
        assert_eq!(*t, Totals::of_games(&o.games));
        for (i, g) in o.games.iter().enumerate() {
            assert_eq!(usize::from(g.red_player), i % 2);
        }
        let opening = |g: &xq_proto::GameRecord| g.moves[..g.opening_plies as usize].to_vec();
        assert_eq!(opening(&o.games[0]), opening(&o.games[1]));
        o.check(3).unwrap();
    }

    #[test]
    fn a_fixed_seed_reproduces_the_match_on_any_thread_count() {
        let s = spec(2, Limit::Nodes(250), Limit::Depth(2));
        let one = play(&Runner::new(1).unwrap(), &s);
        let two = play(&Runner::new(2).unwrap(), &s);
        assert_eq!(one.totals, two.totals);
        let moves = |o: &BatchOutcome| o.games.iter().map(|g| g.moves.clone()).collect::<Vec<_>>();
        assert_eq!(moves(&one), moves(&two));
    }

    #[test]
    fn identical_players_replay_a_shared_opening_so_variants_take_one_per_game() {
        let runner = Runner::new(2).unwrap();
        let mut s = spec(1, Limit::Nodes(150), Limit::Nodes(150));
        let shared = play(&runner, &s);
        assert_eq!(shared.games[0].moves, shared.games[1].moves);
        s.opening_per_game = true;
        s.offset = 3;
        let own = play(&runner, &s);
        let first_move = |o: &BatchOutcome, i: usize| o.games[i].moves[0];
        assert_ne!(first_move(&own, 0), first_move(&own, 1));
        s.opening_per_game = false;
        s.offset = 7;
        assert_eq!(first_move(&play(&runner, &s), 0), first_move(&own, 1));
    }

    #[test]
    fn a_set_stop_flag_plays_nothing() {
        let runner = Runner::new(1).unwrap();
        let o = runner
            .play(
                &spec(2, Limit::Nodes(200), Limit::Nodes(200)),
                &Arc::new(AtomicBool::new(true)),
                &|_, _| {},
            )
            .unwrap();
        assert_eq!(o.outcome.totals, Totals::default());
    }
}
