//! A seat at the board: what one player needs on one game thread, the built-in
//! searcher or an external engine process, reused from game to game.
//!
//! A running engine is kept across games and leases: options that changed
//! (an SPSA lease's θ+ or θ−) are set with `setoption` before the next game;
//! another executable restarts it.
//!
//! An external engine that fails (crash, hang, protocol breach) loses the game it
//! failed in, with the reason recorded and its stderr logged; the process is
//! dropped (killed) and a fresh one is started for the next game.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use xq_engine::rules::{Game, Reason};
use xq_engine::search::{HistoryEntry, MATE, MAX_PLY, SearchRules, Searcher};
use xq_engine::{ByColor, Move};
use xq_proto::Limit;

use super::player::PlayerConfig;
use crate::external::protocol::MATE_CP;
use crate::external::{EngineFailure, ExternalEngine};
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
    /// The move, or why the player forfeits the game.
    pub mv: Result<Move, Reason>,
    /// The reported score, centipawns from the mover's view.
    pub score_cp: Option<i32>,
    /// The reported depth, plies (0 when none was reported).
    pub depth: u32,
    pub nodes: u64,
}

/// The reason a failed engine loses its game.
pub fn forfeit(failure: &EngineFailure) -> Reason {
    match failure {
        EngineFailure::Timeout { .. } => Reason::TimeForfeit,
        EngineFailure::Protocol { .. } => Reason::IllegalMove,
        EngineFailure::Spawn { .. } | EngineFailure::Exited { .. } | EngineFailure::Write(_) => {
            Reason::Resignation
        }
    }
}

impl Seat {
    /// Gets ready for a new game of `player`: a cleared searcher, or an engine
    /// process that is started if needed and told a new game begins.
    pub fn new_game(&mut self, player: &PlayerConfig) -> Result<(), Reason> {
        self.failure_stderr.clear();
        if self.hash_mb != player.hash_mb {
            self.searcher.set_hash_mb(player.hash_mb);
            self.hash_mb = player.hash_mb;
        }
        self.searcher.clear();
        let Some(config) = &player.engine else {
            self.engine = None;
            return Ok(());
        };
        let start = || ExternalEngine::start(config).and_then(|mut e| e.new_game().map(|()| e));
        let ready = match self.engine.take() {
            Some(mut engine) => match engine.reconfigure(config) {
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
            Err(failure) => Err(self.fail(player, &failure)),
        }
    }

    fn fail(&mut self, player: &PlayerConfig, failure: &EngineFailure) -> Reason {
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
    ) -> Choice {
        if player.engine.is_some() {
            return self.external(player, game, limit, clocks);
        }
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
        let r = self
            .searcher
            .search(&mut pos, &history, &limits, &player.params, rules, |_| {});
        Choice {
            mv: r.best_move.ok_or(Reason::IllegalMove),
            score_cp: Some(r.score),
            depth: r.depth,
            nodes: r.nodes,
        }
    }

    fn external(
        &mut self,
        player: &PlayerConfig,
        game: &Game,
        limit: Limit,
        clocks: &ByColor<Option<Clock>>,
    ) -> Choice {
        let (go, allotted) = go_limit(limit, clocks, game.position().side_to_move());
        let Some(engine) = self.engine.as_mut() else {
            return Choice {
                mv: Err(Reason::Resignation),
                score_cp: None,
                depth: 0,
                nodes: 0,
            };
        };
        let moves: Vec<Move> = game.moves().collect();
        match engine.go(&game.start().to_fen(), &moves, go, allotted) {
            Ok(reply) => {
                let mv = reply.bestmove.as_deref().and_then(Move::parse_coords);
                if mv.is_none() {
                    tracing::warn!(player = %player.name, reply = ?reply.bestmove, "engine sent no usable move");
                }
                Choice {
                    mv: mv.ok_or(Reason::IllegalMove),
                    score_cp: reply.info.score_cp.map(engine_mate_convention),
                    depth: reply.info.depth.unwrap_or(0),
                    nodes: reply.info.nodes.unwrap_or(0),
                }
            }
            Err(failure) => Choice {
                mv: Err(self.fail(player, &failure)),
                score_cp: None,
                depth: 0,
                nodes: 0,
            },
        }
    }
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
