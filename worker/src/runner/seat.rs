//! A seat at the board: what one player needs on one game thread, the built-in
//! searcher or an external engine process, reused from game to game.
//!
//! A running engine is kept across games and leases: options that changed
//! (an SPSA lease's θ+ or θ−) are set with `setoption` before the next game;
//! another executable, dialect or rule set restarts it.
//!
//! An external engine that fails (crash, hang, protocol breach, a move that is
//! illegal) loses the game it failed in, with the fault recorded and its stderr
//! logged; the process is dropped (killed) and a fresh one is started for the
//! next game. A failure that is a setting (a wrong coordinate dialect, a rule set
//! the engine cannot play) would lose every game alike, so it ends the match.
//!
//! The built-in engine is held to the same standard: a panic inside its search
//! loses that game as a crash, with the panic's message and the position in the
//! game's stderr tail, and the seat's searcher is replaced by a fresh one, so one
//! bad position costs one game, not the match.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use xq_engine::rules::{Game, RuleSet};
use xq_engine::search::{HistoryEntry, MATE, MAX_PLY, SearchRules, Searcher};
use xq_engine::{ByColor, Move};
use xq_proto::Limit;

use super::player::PlayerConfig;
use super::player_stats::Fault;
use crate::external::protocol::MATE_CP;
use crate::external::{EngineFailure, ExternalEngine, Protocol, dialect};
use crate::timecontrol::{Clock, go_limit, search_limits};

/// One player's reusable state on one game thread.
#[derive(Debug)]
pub struct Seat {
    searcher: Searcher,
    hash_mb: usize,
    engine: Option<ExternalEngine>,
    /// The last stderr lines of the engine that failed in this game.
    failure_stderr: Vec<String>,
}

impl Default for Seat {
    fn default() -> Self {
        Seat {
            searcher: Searcher::new(1),
            hash_mb: 1,
            engine: None,
            failure_stderr: Vec::new(),
        }
    }
}

/// A player's answer for one move.
#[derive(Debug)]
pub struct Choice {
    /// The move, or the fault the player loses by.
    pub mv: Result<Move, Fault>,
    /// The reported score, centipawns from the mover's view.
    pub score_cp: Option<i32>,
    /// The reported depth, plies (0 when none was reported).
    pub depth: u32,
    pub nodes: u64,
    /// The time the player is charged: an external engine's from the write of
    /// `go` to the read of `bestmove`, the built-in engine's search time.
    pub elapsed: Duration,
}

impl Choice {
    /// No move: the player loses by `fault`, charged `elapsed`.
    fn lost(fault: Fault, elapsed: Duration) -> Self {
        Choice {
            mv: Err(fault),
            score_cp: None,
            depth: 0,
            nodes: 0,
            elapsed,
        }
    }
}

/// Why a seat cannot play on.
#[derive(Debug, thiserror::Error)]
pub enum SeatError {
    /// The player loses the game.
    #[error("{0:?}")]
    Forfeit(Fault),
    /// A setting that fails every game: the match stops.
    #[error("player '{player}': {failure}")]
    Setting {
        player: String,
        failure: EngineFailure,
    },
}

/// The fault a failed engine loses its game by.
pub fn forfeit(failure: &EngineFailure) -> Fault {
    match failure {
        EngineFailure::Timeout { .. } => Fault::TimeLoss {
            overrun_ms: 0,
            killed: true,
        },
        &EngineFailure::Overran {
            elapsed_ms,
            allotted_ms,
            ..
        } => Fault::TimeLoss {
            overrun_ms: elapsed_ms.saturating_sub(allotted_ms),
            killed: false,
        },
        EngineFailure::Protocol { .. }
        | EngineFailure::Probe { .. }
        | EngineFailure::Dialect { .. }
        | EngineFailure::Unsupported { .. } => Fault::IllegalMove,
        EngineFailure::Spawn { .. } | EngineFailure::Exited { .. } | EngineFailure::Write(_) => {
            Fault::Crash
        }
    }
}

impl Seat {
    /// Gets ready for a new game of `player` under `rules`: a cleared searcher,
    /// or an engine process that is started if needed and told a new game begins.
    pub fn new_game(&mut self, player: &PlayerConfig, rules: &RuleSet) -> Result<(), SeatError> {
        self.failure_stderr.clear();
        let Some(config) = &player.engine else {
            self.engine = None;
            if self.hash_mb != player.hash_mb {
                self.searcher.set_hash_mb(player.hash_mb);
                self.hash_mb = player.hash_mb;
            }
            self.searcher.set_threads(player.threads);
            self.searcher.clear();
            return Ok(());
        };
        let start = || {
            ExternalEngine::start(config, rules).and_then(|mut e| {
                tracing::info!(player = %player.name, session = ?e.session(), "engine started");
                e.new_game().map(|()| e)
            })
        };
        let ready = match self.engine.take() {
            Some(mut engine) => match engine.reconfigure(config, rules) {
                Ok(true) => engine.new_game().map(|()| engine),
                Ok(false) => {
                    drop(engine);
                    start()
                }
                Err(failure) => Err(failure),
            },
            None => start(),
        };
        match ready {
            Ok(engine) => {
                self.engine = Some(engine);
                Ok(())
            }
            Err(failure) if failure.is_setting() => Err(SeatError::Setting {
                player: player.name.clone(),
                failure,
            }),
            Err(failure) => Err(SeatError::Forfeit(self.fail(player, &failure))),
        }
    }

    fn fail(&mut self, player: &PlayerConfig, failure: &EngineFailure) -> Fault {
        let stderr = self
            .engine
            .take()
            .map(|e| e.stderr_tail())
            .unwrap_or_default();
        tracing::warn!(player = %player.name, %failure, ?stderr, "engine failed; it loses the game");
        self.failure_stderr = stderr;
        forfeit(failure)
    }

    /// The last stderr lines of an engine that failed in this game (empty
    /// when none did), one line each.
    pub fn failure_stderr(&self) -> &[String] {
        &self.failure_stderr
    }

    /// The move of `player` in `game`, within `limit`.
    pub fn choose(
        &mut self,
        player: &PlayerConfig,
        game: &Game,
        limit: Limit,
        clocks: &ByColor<Option<Clock>>,
        rules: &SearchRules,
        stop: &Arc<AtomicBool>,
    ) -> Result<Choice, SeatError> {
        if player.engine.is_some() {
            return self.external(player, game, limit, clocks);
        }
        let started = Instant::now();
        let moves = std::iter::once(None).chain(game.records().iter().map(|r| Some(r.mv)));
        let history: Vec<HistoryEntry> = game
            .stack()
            .iter()
            .zip(moves)
            .map(|(e, mv)| HistoryEntry {
                hash: e.hash,
                gave_check: e.check,
                mv,
            })
            .collect();
        let mut pos = game.position().clone();
        let limits = search_limits(limit, clocks, stop);
        let searcher = &mut self.searcher;
        let searched = catch_panic(|| {
            searcher.search(&mut pos, &history, &limits, &player.params, rules, |_| {})
        });
        let r = match searched {
            Ok(r) => r,
            Err(message) => return Ok(self.crashed(player, game, &message, started.elapsed())),
        };
        Ok(Choice {
            mv: r.best_move.ok_or(Fault::IllegalMove),
            score_cp: Some(r.score),
            depth: r.depth,
            nodes: r.nodes,
            elapsed: started.elapsed(),
        })
    }

    /// The built-in engine's search panicked with `message` in `game`: the
    /// searcher, whose tables the panic may have left half written, is
    /// replaced, and the player loses the game as by a crash, with the panic
    /// and the position kept as the game's stderr tail.
    fn crashed(
        &mut self,
        player: &PlayerConfig,
        game: &Game,
        message: &str,
        elapsed: Duration,
    ) -> Choice {
        let fen = game.position().to_fen();
        let moves = game
            .moves()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        tracing::error!(
            player = %player.name,
            panic = %message,
            %fen,
            start = %game.start().to_fen(),
            %moves,
            "the built-in engine's search panicked; it loses the game as by a crash"
        );
        self.searcher = Searcher::new(self.hash_mb);
        self.failure_stderr = vec![
            format!("built-in engine panicked: {message}"),
            format!("position: {fen}"),
            format!("game: {} moves {moves}", game.start().to_fen()),
        ];
        Choice::lost(Fault::Crash, elapsed)
    }

    fn external(
        &mut self,
        player: &PlayerConfig,
        game: &Game,
        limit: Limit,
        clocks: &ByColor<Option<Clock>>,
    ) -> Result<Choice, SeatError> {
        let (go, allotted) = go_limit(limit, clocks, game.position().side_to_move());
        let lost = |fault| Choice::lost(fault, Duration::ZERO);
        let Some(engine) = self.engine.as_mut() else {
            return Ok(lost(Fault::Crash));
        };
        let moves: Vec<Move> = game.moves().collect();
        let reply = match engine.go(&game.start().to_fen(), &moves, go, allotted) {
            Ok(reply) => reply,
            Err(failure @ EngineFailure::Overran { .. }) => {
                tracing::warn!(player = %player.name, %failure, "engine lost on time");
                return Ok(lost(forfeit(&failure)));
            }
            Err(failure) => {
                let mut fault = self.fail(player, &failure);
                if let (
                    Fault::TimeLoss { overrun_ms, .. },
                    EngineFailure::Timeout { after_ms, .. },
                    Some(a),
                ) = (&mut fault, &failure, allotted)
                {
                    *overrun_ms = after_ms.saturating_sub(a);
                }
                return Ok(lost(fault));
            }
        };
        let coords = engine.session().coords;
        let mv = match reply.bestmove.as_deref() {
            None => None,
            Some(text) => match dialect::judge(coords, game.position(), text) {
                Ok(mv) => mv,
                Err(mismatch) => {
                    let failure = EngineFailure::Dialect {
                        engine: engine.label(),
                        mismatch,
                    };
                    self.engine = None;
                    return Err(SeatError::Setting {
                        player: player.name.clone(),
                        failure,
                    });
                }
            },
        };
        let claims_a_draw = reply.bestmove.is_none() && engine.protocol() == Protocol::Ucci;
        match (&reply.bestmove, mv) {
            (None, _) if claims_a_draw => tracing::warn!(
                player = %player.name,
                plies_since_capture = game.position().halfmove_clock(),
                engine_said = ?reply.info.string,
                "engine claimed a draw (nobestmove) in a position with legal moves, where the \
                 rules in force give none (ElephantEye claims at 100 plies without a capture, \
                 the rule set in force draws at 120): it loses by a false draw claim"
            ),
            (None, _) => tracing::warn!(
                player = %player.name,
                engine_said = ?reply.info.string,
                "engine answered with no move (bestmove (none)) in a position with legal \
                 moves: it loses as by an illegal move"
            ),
            (Some(text), None) => tracing::warn!(
                player = %player.name,
                reply = %text,
                engine_said = ?reply.info.string,
                "engine sent an illegal move"
            ),
            _ => {}
        }
        let fault_or_move = mv.ok_or(if claims_a_draw {
            Fault::FalseDrawClaim
        } else {
            Fault::IllegalMove
        });
        Ok(Choice {
            mv: fault_or_move,
            score_cp: reply.info.score_cp.map(engine_mate_convention),
            depth: reply.info.depth.unwrap_or(0),
            nodes: reply.info.nodes.unwrap_or(0),
            elapsed: reply.elapsed,
        })
    }
}

/// Runs `f`, turning a panic into its message (the payload when it is text).
fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned())
    })
}

/// An external engine's score ([`MATE_CP`] − plies for a mate) in the
/// built-in engine's convention ([`MATE`] − plies), so one reader of scores
/// (the PGN comments) serves both.
fn engine_mate_convention(score_cp: i32) -> i32 {
    let plies = MATE_CP - score_cp.abs();
    if (0..=MAX_PLY as i32).contains(&plies) {
        score_cp.signum() * (MATE - plies)
    } else {
        score_cp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::params::Params;
    use xq_engine::rules::RuleSet;

    fn builtin() -> PlayerConfig {
        PlayerConfig {
            name: "builtin".to_owned(),
            params: Params::default(),
            limit: Limit::Nodes(2000),
            hash_mb: 1,
            threads: 1,
            engine: None,
            draw_contempt: false,
        }
    }

    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(
            catch_panic(|| -> u8 { panic!("fixed text") }),
            Err("fixed text".to_owned())
        );
        let n = 17;
        assert_eq!(
            catch_panic(|| -> u8 { panic!("a list of {n} overflowed") }),
            Err("a list of 17 overflowed".to_owned())
        );
        assert_eq!(
            catch_panic(|| -> u8 { std::panic::panic_any(3_u32) }),
            Err("a panic without a message".to_owned())
        );
    }

    #[test]
    fn the_built_in_player_searches_on_its_threads() {
        let rules = RuleSet::STANDARD;
        let mut seat = Seat::default();
        for threads in [3, 1] {
            let player = PlayerConfig {
                threads,
                ..builtin()
            };
            seat.new_game(&player, &rules).unwrap();
            assert_eq!(seat.searcher.threads(), threads);
            let game = Game::new(xq_engine::Position::startpos(), rules);
            let choice = seat
                .choose(
                    &player,
                    &game,
                    player.limit,
                    &ByColor::new_with(|_| None),
                    &SearchRules::scoring_aware(&rules, false),
                    &Arc::new(AtomicBool::new(false)),
                )
                .unwrap();
            assert!(game.position().is_legal(choice.mv.unwrap()));
        }
    }

    #[test]
    fn a_crashed_search_loses_its_game_and_the_seat_plays_the_next() {
        let player = builtin();
        let rules = RuleSet::STANDARD;
        let mut game = Game::new(xq_engine::Position::startpos(), rules);
        let mut seat = Seat::default();
        seat.new_game(&player, &rules).unwrap();
        let search_rules = SearchRules::scoring_aware(&rules, false);
        let stop = Arc::new(AtomicBool::new(false));
        let clocks = ByColor::new_with(|_| None);
        let first = seat
            .choose(&player, &game, player.limit, &clocks, &search_rules, &stop)
            .unwrap();
        game.play(first.mv.unwrap()).unwrap();

        let choice = seat.crashed(&player, &game, "boom", Duration::from_millis(5));
        assert_eq!(choice.mv, Err(Fault::Crash));
        assert_eq!(choice.elapsed, Duration::from_millis(5));
        let tail = seat.failure_stderr().join("\n");
        assert!(tail.contains("built-in engine panicked: boom"), "{tail}");
        assert!(tail.contains(&game.position().to_fen()), "{tail}");
        assert!(tail.contains(&first.mv.unwrap().to_string()), "{tail}");

        seat.new_game(&player, &rules).unwrap();
        assert!(seat.failure_stderr().is_empty());
        let next = seat
            .choose(&player, &game, player.limit, &clocks, &search_rules, &stop)
            .unwrap();
        assert!(game.position().is_legal(next.mv.unwrap()));
    }
}
