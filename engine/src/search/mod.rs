//! Search: iterative deepening principal-variation search with aspiration windows,
//! a transposition table, quiescence search and the usual pruning, aware of the
//! Xiangqi end-of-game rules (perpetual check, natural move limit, stalemate).
//!
//! Lazy SMP: a search runs on [`Searcher::set_threads`] threads that share the
//! transposition table and nothing else. The main thread keeps the limits;
//! the helpers search the same root at least as deep (odd-numbered ones one
//! ply deeper) until it stops them, their entries steer it, and the deepest
//! iteration any thread completed is the answer. On one thread (the default)
//! a search under depth and node limits is deterministic. A [`Searcher`]
//! owns the state that survives between searches (transposition table,
//! history, killers, per thread) and is reused across games;
//! [`Searcher::clear`] resets it for a new game. Scores are centipawns from the
//! side to move's view; mate scores are `±(MATE - plies to mate)`.

mod history;
mod limits;
mod ordering;
mod repetition;
mod tt;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use arrayvec::ArrayVec;

use limits::RootTrend;
pub use limits::{Clock, Limits};
pub use ordering::see_ge;
pub use repetition::{HistoryEntry, PERPETUAL_LOSS, SearchRules};

use crate::eval::{Evaluator, Psq, see_value};
use crate::params::Params;
use crate::rules::MateMemo;
use crate::{Color, Kind, Move, Position, Undo};
use history::{ContinuationHistory, History, PreviousMove, QuietScores};
use ordering::Picker;
use tt::{Bound, Tt};

/// A score in centipawns (or a mate score).
pub type Score = i32;
/// The score of giving mate now; mate in `n` plies scores `MATE - n`.
pub const MATE: Score = 32_000;
/// Deepest ply the search reaches.
pub const MAX_PLY: usize = 128;
/// Scores at or beyond this magnitude are mates.
pub const MATE_BOUND: Score = MATE - MAX_PLY as Score;
const INF: Score = MATE + 1;
/// Deepest iteration of iterative deepening.
pub const MAX_DEPTH: u32 = 100;
/// Iterative deepening stops once a mate score has survived this many plies of
/// depth beyond the mate's distance (except in infinite mode).
const MATE_SETTLE_PLIES: Score = 8;
/// The clock and the stop flag are read once per this many nodes (a power of two).
const CHECK_EVERY: u64 = 1024;

/// `round(1000 · ln i)` for the late-move reduction table, as integers so that
/// the search is bit-for-bit the same on every machine.
const LN1000: [i32; 64] = [
    0, 0, 693, 1099, 1386, 1609, 1792, 1946, 2079, 2197, 2303, 2398, 2485, 2565, 2639, 2708, 2773,
    2833, 2890, 2944, 2996, 3045, 3091, 3135, 3178, 3219, 3258, 3296, 3332, 3367, 3401, 3434, 3466,
    3497, 3526, 3555, 3584, 3611, 3638, 3664, 3689, 3714, 3738, 3761, 3784, 3807, 3829, 3850, 3871,
    3892, 3912, 3932, 3951, 3970, 3989, 4007, 4025, 4043, 4060, 4078, 4094, 4111, 4127, 4143,
];

/// Progress after a completed iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchInfo {
    /// Iteration depth (plies).
    pub depth: u32,
    /// Deepest ply reached, quiescence included.
    pub seldepth: u32,
    pub score: Score,
    pub nodes: u64,
    pub time: Duration,
    /// Permille of the transposition table written in this search.
    pub hashfull: u32,
    pub pv: Vec<Move>,
}

impl SearchInfo {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        let ms = self.time.as_millis().max(1) as u64;
        self.nodes * 1000 / ms
    }
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// `None` only when the root has no legal move.
    pub best_move: Option<Move>,
    pub score: Score,
    /// Depth of the last completed iteration (plies).
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// The UCI form of a score: `cp N` or `mate N` (moves, negative when mated).
pub fn score_to_uci(score: Score) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

/// Most threads one search may use.
pub const MAX_THREADS: usize = 256;

/// Search state kept between searches.
#[derive(Debug)]
pub struct Searcher {
    tt: Tt,
    /// The main thread's tables, then one per helper thread.
    threads: Vec<ThreadTables>,
}

/// What one search thread learns and keeps between searches.
#[derive(Debug)]
struct ThreadTables {
    history: History,
    continuation: ContinuationHistory,
    killers: Vec<[Option<Move>; 2]>,
    /// The mate-threat answers of in-tree repetition judgements (kept across
    /// searches: an answer depends on its position alone).
    mate_memo: MateMemo,
}

impl Default for ThreadTables {
    fn default() -> Self {
        ThreadTables {
            history: History::default(),
            continuation: ContinuationHistory::default(),
            killers: vec![[None; 2]; MAX_PLY + 2],
            mate_memo: MateMemo::default(),
        }
    }
}

/// What the threads of one search share besides the table.
#[derive(Debug, Default)]
struct Shared {
    /// Set by the main thread when it has its answer: the helpers stop.
    done: AtomicBool,
    /// Nodes searched by the helpers, added in steps of [`CHECK_EVERY`].
    helper_nodes: AtomicU64,
    /// The depth of the main thread's iteration: a helper's next iteration is
    /// at least as deep (odd-numbered helpers one ply deeper).
    main_depth: AtomicU32,
    /// The deepest iteration a helper completed, and its depth apart (read
    /// by the main thread every [`CHECK_EVERY`] nodes: a helper that reaches
    /// the depth limit ends the search).
    deepest: Mutex<Option<SearchInfo>>,
    deepest_depth: AtomicU32,
}

/// Which thread of a search a worker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Keeps the limits, reports, answers.
    Main,
    /// Helper `n` (from 1): searches until the main thread is done.
    Helper(usize),
}

impl Default for Searcher {
    /// A searcher with a 16 MB transposition table.
    fn default() -> Self {
        Searcher::new(16)
    }
}

impl Searcher {
    /// A searcher with a transposition table of `hash_mb` megabytes.
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher {
            tt: Tt::new(hash_mb),
            threads: vec![ThreadTables::default()],
        }
    }

    /// Searches on `threads` threads from now on (1 to [`MAX_THREADS`]); new
    /// helpers start with empty tables.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads
            .resize_with(threads.clamp(1, MAX_THREADS), ThreadTables::default);
    }

    /// The number of threads a search uses.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Replaces the transposition table by an empty one of `hash_mb` megabytes.
    pub fn set_hash_mb(&mut self, hash_mb: usize) {
        self.tt = Tt::new(hash_mb);
    }

    /// Forgets everything learnt (new game).
    pub fn clear(&mut self) {
        self.tt.clear();
        for t in &mut self.threads {
            t.history.clear();
            t.continuation.clear();
            t.killers.fill([None; 2]);
        }
    }

    /// Searches `pos` within `limits` and returns the best move found.
    ///
    /// `history` holds the game's positions up to `pos`, oldest first, each with
    /// the move that led to it, as [`HistoryEntry::of`] gives them; its last entry
    /// is `pos` itself (when it is not, `pos` is appended without its move). The
    /// search judges repetitions with it (see [`repetition`](self::repetition)). `info` is called after every completed
    /// iteration. `pos` is restored before returning.
    ///
    /// Stopping: set `limits.stop` (an `Arc<AtomicBool>`, checked every 1024
    /// nodes) from another thread. The result is then the last completed
    /// iteration's score and depth, and its move, unless the unfinished
    /// iteration already searched a root move to the end within its window:
    /// then that move and its line (with no iteration done and no such move,
    /// the first legal move). A node or time limit stops a search the same
    /// way. On one thread, with only depth and node limits, the result and
    /// node count are deterministic; on more, the node limit counts every
    /// thread's nodes and the result is the deepest iteration any thread
    /// completed (a helper's deeper than the main thread's is reported to
    /// `info` once more, last).
    pub fn search(
        &mut self,
        pos: &mut Position,
        history: &[HistoryEntry],
        limits: &Limits,
        params: &Params,
        rules: &SearchRules,
        mut info: impl FnMut(&SearchInfo),
    ) -> SearchResult {
        let started = std::time::Instant::now();
        self.tt.new_search();
        for t in &mut self.threads {
            t.killers.fill([None; 2]);
        }
        let mut line = Vec::with_capacity(history.len() + MAX_PLY + 2);
        line.extend_from_slice(history);
        if history.last().is_none_or(|e| e.hash != pos.hash()) {
            line.push(HistoryEntry::of(pos, None));
        }
        let shared = Shared::default();
        let tt = &self.tt;
        let (main, helpers) = self.threads.split_first_mut().expect("at least one thread");
        let context = Context {
            tt,
            shared: &shared,
            params,
            rules,
            limits,
        };
        let mut result = std::thread::scope(|scope| {
            for (n, tables) in helpers.iter_mut().enumerate() {
                let mut pos = pos.clone();
                let line = line.clone();
                let context = &context;
                scope.spawn(move || {
                    let mut w = Worker::new(context, Role::Helper(n + 1), tables, &pos, line);
                    w.iterate(&mut pos, &mut |_| {});
                    context
                        .shared
                        .helper_nodes
                        .fetch_add(w.nodes & (CHECK_EVERY - 1), Ordering::Relaxed);
                });
            }
            let mut w = Worker::new(&context, Role::Main, main, pos, line);
            let result = w.iterate(pos, &mut info);
            shared.done.store(true, Ordering::Relaxed);
            result
        });
        result.nodes += shared.helper_nodes.into_inner();
        let deepest = shared
            .deepest
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(d) = deepest
            && d.depth > result.depth
            && let Some(&mv) = d.pv.first()
        {
            result.best_move = Some(mv);
            result.score = d.score;
            result.depth = d.depth;
            result.pv.clone_from(&d.pv);
            info(&SearchInfo {
                nodes: result.nodes,
                time: started.elapsed(),
                hashfull: self.tt.hashfull(),
                ..d
            });
        }
        result
    }
}

/// What every thread of one search reads.
struct Context<'a> {
    tt: &'a Tt,
    shared: &'a Shared,
    params: &'a Params,
    rules: &'a SearchRules,
    limits: &'a Limits,
}

/// Late-move reductions in hundredths of a ply, by depth and move number.
fn lmr_table(p: &Params) -> Vec<[i32; 64]> {
    (0..64)
        .map(|d| {
            std::array::from_fn(|m| {
                if d == 0 || m == 0 {
                    0
                } else {
                    p.lmr_base + LN1000[d] * LN1000[m] / (100 * p.lmr_divisor)
                }
            })
        })
        .collect()
}

/// The state of one thread of a running search.
struct Worker<'a> {
    tt: &'a Tt,
    shared: &'a Shared,
    role: Role,
    /// The helpers' node count when this (main) thread last looked.
    helper_nodes: u64,
    history: &'a mut History,
    continuation: &'a mut ContinuationHistory,
    killers: &'a mut [[Option<Move>; 2]],
    mate_memo: &'a mut MateMemo,
    params: &'a Params,
    rules: &'a SearchRules,
    eval: Evaluator,
    limits: &'a Limits,
    clock: Clock,
    /// Positions of the game and of the current search line; the last is the
    /// current node.
    line: Vec<HistoryEntry>,
    root_index: usize,
    /// Indices in `line` of null-move positions (0 at the bottom): repetitions do
    /// not look back across a null move.
    null_floor: Vec<usize>,
    nodes: u64,
    seldepth: usize,
    stopped: bool,
    /// Set once an iteration has completed: time limits may end the search.
    may_stop_on_time: bool,
    pv: Vec<ArrayVec<Move, MAX_PLY>>,
    /// Static evaluation by ply (for the "improving" heuristic).
    evals: [Score; MAX_PLY + 2],
    /// The piece-square sum of the position at each ply of the current line.
    psq: [Psq; MAX_PLY + 2],
    lmr: Vec<[i32; 64]>,
}

impl<'a> Worker<'a> {
    /// Thread `role` of a search of `pos` whose game and line so far is `line`.
    fn new(
        context: &Context<'a>,
        role: Role,
        tables: &'a mut ThreadTables,
        pos: &Position,
        line: Vec<HistoryEntry>,
    ) -> Worker<'a> {
        let params = context.params;
        let eval = Evaluator::new(params);
        let mut psq = [0; MAX_PLY + 2];
        psq[0] = eval.psq(pos);
        Worker {
            tt: context.tt,
            shared: context.shared,
            role,
            helper_nodes: 0,
            history: &mut tables.history,
            continuation: &mut tables.continuation,
            killers: &mut tables.killers,
            mate_memo: &mut tables.mate_memo,
            params,
            rules: context.rules,
            eval,
            limits: context.limits,
            clock: Clock::new(context.limits, pos.side_to_move()),
            root_index: line.len() - 1,
            line,
            null_floor: vec![0],
            nodes: 0,
            seldepth: 0,
            stopped: false,
            may_stop_on_time: false,
            pv: vec![ArrayVec::new(); MAX_PLY + 2],
            evals: [0; MAX_PLY + 2],
            psq,
            lmr: lmr_table(params),
        }
    }

    /// The nodes of every thread, as far as this one knows.
    fn all_nodes(&self) -> u64 {
        self.nodes + self.helper_nodes
    }

    fn iterate(&mut self, pos: &mut Position, info: &mut impl FnMut(&SearchInfo)) -> SearchResult {
        let root_moves = pos.legal_moves();
        let mut result = SearchResult {
            best_move: root_moves.first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
            pv: Vec::new(),
        };
        if root_moves.is_empty() {
            result.score = if pos.in_check() || !self.rules.stalemate_is_draw() {
                -MATE
            } else {
                self.rules.draw_score(pos.side_to_move())
            };
            return result;
        }
        let max_depth = self.limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut prev = 0;
        let mut trend = RootTrend::default();
        let mut depth = 0;
        while depth < max_depth && self.shared.deepest_depth.load(Ordering::Relaxed) < max_depth {
            depth = match self.role {
                Role::Main => {
                    self.shared.main_depth.store(depth + 1, Ordering::Relaxed);
                    depth + 1
                }
                Role::Helper(n) => (depth + 1)
                    .max(self.shared.main_depth.load(Ordering::Relaxed) + (n % 2) as u32)
                    .min(max_depth),
            };
            self.seldepth = 0;
            let score = self.aspiration(pos, depth as i32, prev);
            if self.stopped {
                // A root move the unfinished iteration searched to the end and
                // found above its window's floor is at least as good as any
                // searched before it, the last iteration's best among them
                // (searched first, from the table): the main thread plays it.
                if self.role == Role::Main
                    && let Some(&mv) = self.pv[0].first()
                {
                    result.best_move = Some(mv);
                    result.pv = self.pv[0].to_vec();
                }
                break;
            }
            if result.depth > 0 {
                trend = RootTrend {
                    stable_iterations: if self.pv[0].first() == result.best_move.as_ref() {
                        trend.stable_iterations + 1
                    } else {
                        0
                    },
                    score_drop: prev.saturating_sub(score),
                };
            }
            prev = score;
            result.score = score;
            result.depth = depth;
            result.pv = self.pv[0].to_vec();
            if let Some(&mv) = self.pv[0].first() {
                result.best_move = Some(mv);
            }
            if self.role != Role::Main {
                if depth > self.shared.deepest_depth.load(Ordering::Relaxed) {
                    let mut deepest = self
                        .shared
                        .deepest
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    if deepest.as_ref().is_none_or(|d| d.depth < depth) {
                        *deepest = Some(SearchInfo {
                            depth,
                            seldepth: self.seldepth as u32,
                            score,
                            nodes: 0,
                            time: Duration::ZERO,
                            hashfull: 0,
                            pv: result.pv.clone(),
                        });
                        self.shared.deepest_depth.store(depth, Ordering::Relaxed);
                    }
                }
                continue;
            }
            self.may_stop_on_time = true;
            info(&SearchInfo {
                depth,
                seldepth: self.seldepth as u32,
                score,
                nodes: self.all_nodes(),
                time: self.clock.elapsed(),
                hashfull: self.tt.hashfull(),
                pv: result.pv.clone(),
            });
            let mate_proven = score.abs() >= MATE_BOUND
                && !self.limits.infinite
                && depth as Score >= MATE - score.abs() + MATE_SETTLE_PLIES;
            if mate_proven
                || self.clock.soft_expired(trend)
                || (root_moves.len() == 1 && self.clock.timed())
            {
                break;
            }
        }
        result.nodes = self.nodes;
        result
    }

    /// One iteration, with a window around the previous score from depth 4 on.
    fn aspiration(&mut self, pos: &mut Position, depth: i32, prev: Score) -> Score {
        let mut delta = self.params.aspiration_window;
        let (mut alpha, mut beta) = if depth >= 4 && prev.abs() < MATE_BOUND {
            ((prev - delta).max(-INF), (prev + delta).min(INF))
        } else {
            (-INF, INF)
        };
        loop {
            let score = self.search(pos, alpha, beta, depth, 0, true);
            if self.stopped {
                return score;
            }
            if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INF);
            } else if score >= beta {
                beta = (score + delta).min(INF);
            } else {
                return score;
            }
            delta += delta / 2;
            if delta > 1000 {
                alpha = -INF;
                beta = INF;
            }
        }
    }

    /// Counts a node and decides whether to stop. The main thread: the node
    /// limit exactly (counting the helpers' nodes as of its last look), the
    /// stop flag and the clock every [`CHECK_EVERY`] nodes. A helper: the main
    /// thread's end and the stop flag every [`CHECK_EVERY`] nodes.
    fn tick(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.nodes += 1;
        let check = self.nodes & (CHECK_EVERY - 1) == 0;
        match self.role {
            Role::Main => {
                if check {
                    self.helper_nodes = self.shared.helper_nodes.load(Ordering::Relaxed);
                    if self.limits.depth.is_some_and(|d| {
                        self.shared.deepest_depth.load(Ordering::Relaxed) >= d.clamp(1, MAX_DEPTH)
                    }) {
                        self.stopped = true;
                    }
                }
                if self.limits.nodes.is_some_and(|n| self.all_nodes() >= n) {
                    self.stopped = true;
                }
                if check
                    && (self.limits.stopped()
                        || (self.may_stop_on_time
                            && self.clock.timed()
                            && self.clock.hard_expired()))
                {
                    self.stopped = true;
                }
            }
            Role::Helper(_) => {
                if check {
                    self.shared
                        .helper_nodes
                        .fetch_add(CHECK_EVERY, Ordering::Relaxed);
                    if self.shared.done.load(Ordering::Relaxed) || self.limits.stopped() {
                        self.stopped = true;
                    }
                }
            }
        }
        self.stopped
    }

    /// Makes `mv` in `pos`, the node at `ply`, and updates the next ply's
    /// piece-square sum.
    fn make(&mut self, pos: &mut Position, mv: Move, ply: usize) -> Undo {
        let (from, to) = (mv.from(), mv.to());
        let before = self.eval.psq_at(pos, from) + self.eval.psq_at(pos, to);
        let undo = pos.make(mv);
        self.psq[ply + 1] = self.eval.psq_after(self.psq[ply], before, pos, from, to);
        undo
    }

    /// The static evaluation of `pos`, the node at `ply`.
    fn evaluate(&self, pos: &Position, ply: usize) -> Score {
        debug_assert_eq!(self.psq[ply], self.eval.psq(pos));
        self.eval.evaluate_with(pos, self.psq[ply])
    }

    fn push(&mut self, hash: u64, gave_check: bool, mv: Option<Move>) {
        self.line.push(HistoryEntry {
            hash,
            gave_check,
            mv,
        });
    }

    /// The rule-based outcome of the current node, if the game would be over here
    /// by repetition, by the natural move limit or (Pikafish code) for
    /// insufficient material.
    fn rule_outcome(&mut self, pos: &Position, ply: usize) -> Option<Score> {
        let now = self.line.len() - 1;
        let floor = self.null_floor.last().copied().unwrap_or(0);
        let reversible = (pos.halfmove_clock() as usize).min(now - floor);
        if let Some(s) = repetition::judge(
            &self.line,
            self.root_index,
            reversible,
            pos,
            self.rules,
            self.mate_memo,
        ) {
            return Some(s);
        }
        if repetition::move_limit_reached(&self.line, reversible, pos, self.rules) {
            if pos.in_check() && !pos.has_legal_move() {
                return Some(-MATE + ply as Score);
            }
            return Some(self.rules.draw_score(pos.side_to_move()));
        }
        if repetition::material_drawn(pos, self.rules) {
            return Some(self.rules.draw_score(pos.side_to_move()));
        }
        None
    }

    /// The score when the side to move has no legal move.
    fn no_moves(&self, pos: &Position, in_check: bool, ply: usize) -> Score {
        if in_check || !self.rules.stalemate_is_draw() {
            -MATE + ply as Score
        } else {
            self.rules.draw_score(pos.side_to_move())
        }
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let dst = &mut head[ply];
        dst.clear();
        dst.push(mv);
        for &m in tail[0].iter().take(MAX_PLY - 1) {
            dst.push(m);
        }
    }

    /// Principal-variation search of `pos` to `depth` plies.
    fn search(
        &mut self,
        pos: &mut Position,
        mut alpha: Score,
        mut beta: Score,
        mut depth: i32,
        ply: usize,
        null_ok: bool,
    ) -> Score {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv[ply].clear();
        // The line's last entry is this node, pushed with its check state.
        let in_check = if root {
            pos.in_check()
        } else {
            self.line.last().is_some_and(|e| e.gave_check)
        };
        debug_assert_eq!(in_check, pos.in_check());

        // Step 1. Quiescence at the horizon.
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply, Some(in_check), true);
        }

        // Step 2. Node count, limits, rule-based game ends, maximum ply.
        if self.tick() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if !root {
            if let Some(s) = self.rule_outcome(pos, ply) {
                return s;
            }
            if ply >= MAX_PLY {
                return self.evaluate(pos, ply);
            }
            // Step 3. Mate distance pruning.
            alpha = alpha.max(-MATE + ply as Score);
            beta = beta.min(MATE - ply as Score - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        // Step 4. Transposition table.
        let hash = pos.hash();
        let hit = self.tt.probe(hash, ply);
        let tt_move = hit.and_then(|h| h.mv).filter(|&m| pos.is_legal(m));
        if let Some(h) = hit
            && !pv_node
            && h.depth >= depth
        {
            let cut = match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            };
            if cut {
                return h.score;
            }
        }

        // Step 5. Static evaluation.
        let eval = if in_check {
            -INF
        } else if let Some(h) = hit {
            h.eval
        } else {
            self.evaluate(pos, ply)
        };
        self.evals[ply] = eval;
        let improving = !in_check && ply >= 2 && eval > self.evals[ply - 2];
        let p = self.params;

        // Step 5a. Internal iterative reduction: a node deep enough to expect a
        // table move and without one is searched a ply shallower.
        if !root && p.iir_depth > 0 && depth >= p.iir_depth && tt_move.is_none() {
            depth -= 1;
        }

        if !pv_node && !in_check {
            // Step 6. Razoring: hopeless positions drop into quiescence.
            if depth <= 3 && eval + p.razor_margin * depth < alpha {
                let v = self.qsearch(pos, alpha - 1, alpha, ply, Some(false), true);
                if v < alpha {
                    return v;
                }
            }

            // Step 7. Reverse futility pruning.
            if depth <= 7
                && beta.abs() < MATE_BOUND
                && eval - p.rfp_margin * (depth - i32::from(improving)) >= beta
            {
                return eval;
            }

            // Step 8. Null-move pruning, guarded by attacking material against zugzwang.
            if null_ok
                && depth >= 3
                && eval >= beta
                && beta.abs() < MATE_BOUND
                && has_attackers(pos, pos.side_to_move())
            {
                let r = p.nmp_base + depth / p.nmp_depth_divisor;
                let clock = pos.make_null();
                self.psq[ply + 1] = self.psq[ply];
                self.push(pos.hash(), false, None);
                self.null_floor.push(self.line.len() - 1);
                let v = -self.search(pos, -beta, -beta + 1, depth - 1 - r, ply + 1, false);
                self.null_floor.pop();
                self.line.pop();
                pos.unmake_null(clock);
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    return if v >= MATE_BOUND { beta } else { v };
                }
            }
        }

        // Step 9. Moves: the TT move first, then the rest generated only if it does
        // not cut off; no legal move ends the game.
        let killers = self.killers[ply];
        let prev = self.previous_move(pos);
        let mut picker: Option<Picker> = None;
        let mut pending_tt = tt_move;

        // Step 10. The move loop.
        let mut best = -INF;
        let mut best_move = None;
        let mut quiets_tried: ArrayVec<Move, { crate::MAX_MOVES }> = ArrayVec::new();
        let mut count: usize = 0;
        let lmp_full = p.lmp_base + p.lmp_scale * depth * depth / 2;
        let lmp_limit = if improving {
            lmp_full
        } else {
            lmp_full * p.lmp_worsening / 100
        } as usize;
        loop {
            let mv = if let Some(m) = pending_tt.take() {
                m
            } else {
                let picker = match &mut picker {
                    Some(pk) => pk,
                    None => {
                        let moves = pos.legal_moves();
                        if moves.is_empty() {
                            return self.no_moves(pos, in_check, ply);
                        }
                        let quiet = self.quiet_scores(prev);
                        picker.insert(Picker::new(pos, moves, tt_move, killers, quiet, p))
                    }
                };
                match picker.next() {
                    Some(m) if Some(m) == tt_move => continue,
                    Some(m) => m,
                    None => break,
                }
            };
            let capture = pos.is_capture(mv);
            let killer = killers.contains(&Some(mv));
            let mover = pos.piece_at(mv.from());
            count += 1;

            let mut undo = self.make(pos, mv, ply);
            let gives_check = pos.in_check();

            // Step 11. Pruning of moves that do not give check, at shallow depth,
            // never before a move has been searched.
            if !root && best > -MATE_BOUND && !in_check && !gives_check {
                // Late-move pruning.
                if !capture && !killer && depth <= 8 && count > lmp_limit {
                    pos.unmake(undo);
                    continue;
                }
                // History pruning of quiet moves that have kept failing.
                if !capture
                    && !killer
                    && depth <= 3
                    && p.history_prune > 0
                    && mover
                        .is_some_and(|pc| self.history.get(pc, mv.to()) < -p.history_prune * depth)
                {
                    pos.unmake(undo);
                    continue;
                }
                // Futility pruning of quiet moves that cannot raise alpha.
                if !pv_node && !capture && depth <= 6 && eval + p.futility_margin * depth <= alpha {
                    pos.unmake(undo);
                    continue;
                }
                // Static exchange pruning.
                if depth <= 6 && Some(mv) != tt_move {
                    let margin = if capture {
                        -p.see_capture_margin * depth
                    } else {
                        -p.see_quiet_margin * depth
                    };
                    pos.unmake(undo);
                    if !see_ge(pos, mv, margin, p) {
                        continue;
                    }
                    undo = pos.make(mv);
                }
            }

            // Step 12. Check extension.
            let new_depth = depth - 1 + i32::from(gives_check);
            self.push(pos.hash(), gives_check, Some(mv));
            if !capture {
                quiets_tried.push(mv);
            }

            // Step 13. Late-move reductions, then principal-variation re-searches.
            let score = if count == 1 {
                -self.search(pos, -beta, -alpha, new_depth, ply + 1, true)
            } else {
                let mut r = 0;
                if depth >= 3 && !capture && !gives_check && count > 1 + usize::from(pv_node) {
                    let mut rh = self.lmr[depth.min(63) as usize][count.min(63)];
                    rh -= 100 * i32::from(pv_node) + 100 * i32::from(killer);
                    rh += 100 * i32::from(!improving);
                    if let Some(pc) = mover {
                        rh -= self.quiet_scores(prev).score(pc, mv.to()) / 80;
                    }
                    r = (rh / 100).clamp(0, (new_depth - 1).max(0));
                }
                let mut s = -self.search(pos, -alpha - 1, -alpha, new_depth - r, ply + 1, true);
                if s > alpha && r > 0 {
                    s = -self.search(pos, -alpha - 1, -alpha, new_depth, ply + 1, true);
                }
                if s > alpha && s < beta && pv_node {
                    s = -self.search(pos, -beta, -alpha, new_depth, ply + 1, true);
                }
                s
            };
            self.line.pop();
            pos.unmake(undo);
            if self.stopped {
                return 0;
            }

            // Step 14. New best move.
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        if !capture {
                            self.reward_quiet(pos, mv, &quiets_tried, depth, ply, prev);
                        }
                        break;
                    }
                }
            }
        }

        // Step 15. Store in the transposition table.
        let bound = if best >= beta {
            Bound::Lower
        } else if best_move.is_some() && pv_node {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let stored_eval = if in_check { 0 } else { eval };
        self.tt
            .store(hash, ply, best_move, best, stored_eval, depth, bound);
        best
    }

    /// The move that led to `pos` (none after a null move or at a game's
    /// start), when the continuation history is on.
    fn previous_move(&self, pos: &Position) -> Option<PreviousMove> {
        if self.params.cont_history == 0 {
            return None;
        }
        let to = self.line.last()?.mv?.to();
        Some((pos.piece_at(to)?, to))
    }

    /// Quiet moves' scores at a node reached by `prev`.
    fn quiet_scores(&self, prev: Option<PreviousMove>) -> QuietScores<'_> {
        let row = prev.and_then(|m| self.continuation.row(m));
        QuietScores::new(self.history, row, self.params.cont_history)
    }

    /// Killer and history updates after the quiet move `mv` caused a cutoff.
    fn reward_quiet(
        &mut self,
        pos: &Position,
        mv: Move,
        tried: &[Move],
        depth: i32,
        ply: usize,
        prev: Option<PreviousMove>,
    ) {
        let k = &mut self.killers[ply];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
        let bonus = (self.params.history_bonus_scale * depth * depth).min(1600);
        for &q in tried {
            if let Some(pc) = pos.piece_at(q.from()) {
                let b = if q == mv { bonus } else { -bonus };
                self.history.update(pc, q.to(), b);
                if let Some(prev) = prev {
                    self.continuation.update(prev, pc, q.to(), b);
                }
            }
        }
    }

    /// Quiescence search: captures (all evasions when in check) until quiet;
    /// with `checks` (its first ply) also the quiet moves that give check and do
    /// not lose by static exchange. `in_check` is the side to move's check state
    /// when the caller knows it.
    fn qsearch(
        &mut self,
        pos: &mut Position,
        mut alpha: Score,
        beta: Score,
        ply: usize,
        in_check: Option<bool>,
        checks: bool,
    ) -> Score {
        self.pv[ply].clear();
        if self.tick() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY {
            return self.evaluate(pos, ply);
        }
        let hash = pos.hash();
        let pv_node = beta - alpha > 1;
        if let Some(h) = self.tt.probe(hash, ply)
            && !pv_node
        {
            let cut = match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            };
            if cut {
                return h.score;
            }
        }
        let in_check = in_check.unwrap_or_else(|| pos.in_check());
        debug_assert_eq!(in_check, pos.in_check());
        let (mut best, stand_pat, mut picker) = if in_check {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return self.no_moves(pos, true, ply);
            }
            // Quiescence moves are not on the line: history alone.
            let quiet = self.quiet_scores(None);
            let p = Picker::new(pos, moves, None, [None; 2], quiet, self.params);
            (-INF, -INF, p)
        } else {
            let stand_pat = self.evaluate(pos, ply);
            if stand_pat >= beta {
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            (
                stand_pat,
                stand_pat,
                Picker::captures(pos, pos.legal_captures()),
            )
        };
        let mut best_move = None;
        let mut quiet_checks: Option<ArrayVec<Move, { crate::MAX_MOVES }>> = None;
        let mut next_check = 0;
        loop {
            // The move, whether it is a capture to prune by exchange, and the
            // child's check state when known (after a quiet check: in check).
            let (mv, capture, child_check) = if let Some(m) = picker.next() {
                (m, !in_check, None)
            } else if checks && !in_check {
                let params = self.params;
                let list = quiet_checks.get_or_insert_with(|| {
                    let mut l = pos.quiet_checks();
                    l.retain(|m| see_ge(pos, *m, 0, params));
                    l
                });
                let Some(&m) = list.get(next_check) else {
                    break;
                };
                next_check += 1;
                (m, false, Some(true))
            } else {
                break;
            };
            if capture {
                let victim = pos
                    .piece_at(mv.to())
                    .map_or(0, |p| see_value(self.params, p.kind()));
                if stand_pat + victim + 200 <= alpha || !see_ge(pos, mv, 0, self.params) {
                    continue;
                }
            }
            let undo = self.make(pos, mv, ply);
            let score = -self.qsearch(pos, -beta, -alpha, ply + 1, child_check, false);
            pos.unmake(undo);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(mv);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        let stored_eval = if in_check { 0 } else { stand_pat };
        self.tt
            .store(hash, ply, best_move, best, stored_eval, 0, bound);
        best
    }
}

/// Whether `color` has a piece that can attack across the board (chariot, horse
/// or cannon).
pub fn has_attackers(pos: &Position, color: Color) -> bool {
    (pos.pieces(color, Kind::Chariot)
        | pos.pieces(color, Kind::Horse)
        | pos.pieces(color, Kind::Cannon))
    .any()
}

#[cfg(test)]
mod tests;
