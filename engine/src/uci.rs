//! The UCI and UCCI front end: reads commands line by line and writes answers.
//!
//! UCI: `uci`, `isready`, `ucinewgame`, `setoption name <N> [value <V>]`,
//! `position startpos|fen <FEN> [moves <m>…]`, `go` with `depth`, `nodes`,
//! `movetime`, `wtime`, `btime`, `winc`, `binc`, `movestogo`, `infinite` or
//! `perft <depth>`, `stop`, `quit`; plus `d` (print the board) and `bench
//! [depth]` (the bench with the current parameters, ending `Nodes searched: N`).
//! Options: `Hash` (MB), `Threads` (search threads, lazy SMP), `Clear Hash`, `UCI_Variant`, `ParamFile` (a file of
//! `name = value` lines that replaces every parameter, as `--params` does: the
//! stand-in for a network file such as Pikafish's `EvalFile`) and every tunable
//! parameter of [`crate::params`] as a spin option.
//!
//! UCCI (after `ucci`, answered by `ucciok`): the same `position` and
//! `isready`; `setoption <name> <value>` without keywords (`hashsize` for the
//! hash in MB, `threads`, `clearhash`, `paramfile`, parameter names; other standard UCCI options such as
//! `usemillisec`, `batch`, `debug`, `ponder`, `newgame` are accepted and ignored);
//! `go [ponder|draw] [time <ms> [increment <ms>|movestogo <n>] [opptime <ms>]
//! [oppincrement <ms>|oppmovestogo <n>]] [depth <n>] [nodes <n>] [infinite]`,
//! with times in milliseconds (the `usemillisec` convention, always on);
//! `stop`; `quit` (answered by `bye`). Search results are `bestmove <m>`, or
//! `nobestmove` when there is no legal move. Not supported: `ponderhit`,
//! `banmoves`, `probe`, opening books.
//!
//! The search runs on one long-lived search thread; `stop`, `isready` and `quit`
//! are answered while it runs. The `info` lines of a search's first
//! 20 ms go out in one write with the next line (so a short search is one
//! write, `bestmove` included). Any other command first waits for a timed or bounded search to
//! finish, and stops an infinite one. `go` without limits searches until `stop`.
//! Not supported in UCI: `searchmoves`, pondering (`go ponder` searches normally). Bad input is
//! answered with `info string error: …` naming the bad part.

use std::io::{BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::params::{ParamError, Params};
use crate::rules::{PRESETS, RuleSet};
use crate::search::{
    HistoryEntry, Limits, MAX_THREADS, SearchInfo, SearchRules, Searcher, score_to_uci,
};
use crate::{Color, Move, Position, perft};

/// Why a command could not be carried out; printed as `info string error: …`.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    #[error("bad position command '{0}': expected 'startpos' or 'fen <FEN>'")]
    BadPosition(String),
    #[error(transparent)]
    Fen(#[from] crate::FenError),
    #[error("illegal or malformed move '{0}' in position command")]
    BadMove(String),
    #[error("bad go command '{0}'")]
    BadGo(String),
    #[error("bad value '{value}' for '{what}'")]
    BadNumber { what: String, value: String },
    #[error("unknown option '{0}'")]
    UnknownOption(String),
    #[error("bad setoption command '{0}': expected 'name <option> [value <v>]'")]
    BadSetOption(String),
    #[error("bad UCI_Variant: {0}")]
    Variant(#[from] crate::rules::RuleSetError),
    #[error("bad DrawContempt '{0}': expected true or false")]
    BadBool(String),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("bad ParamFile '{path}': {reason}")]
    ParamFile { path: String, reason: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    Uci,
    Ucci,
}

/// The engine's state between commands.
#[derive(Debug)]
pub struct Uci {
    pos: Position,
    /// Game positions before `pos`, oldest first (for repetition judgement).
    history: Vec<HistoryEntry>,
    /// The start (the `position` words before `moves`, and whether capture
    /// conversion was on) and the moves that made `pos`: a `position` command
    /// that extends them only plays the new moves.
    line: Option<(String, bool)>,
    moves: Vec<Move>,
    params: Params,
    /// The rule set chosen with `UCI_Variant`.
    rule_set: RuleSet,
    /// Whether draws are valued by the rule set's scoring (`DrawContempt`).
    draw_contempt: bool,
    hash_mb: usize,
    /// Search threads (`Threads`).
    threads: usize,
    /// `None` while a search thread holds it.
    searcher: Option<Searcher>,
    protocol: Protocol,
}

impl Default for Uci {
    fn default() -> Self {
        Uci::with_params(Params::default())
    }
}

/// Whether to keep reading commands.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// The search running on the search thread.
struct Job {
    stop: Arc<AtomicBool>,
    infinite: bool,
}

/// A search handed to the search thread, with everything it needs.
struct Task {
    searcher: Searcher,
    pos: Position,
    history: Vec<HistoryEntry>,
    params: Params,
    rules: SearchRules,
    limits: Limits,
    protocol: Protocol,
    infinite: bool,
}

/// The search thread's channels: tasks in, searchers back (`None` when a
/// search panicked).
struct SearchThread {
    tasks: mpsc::Sender<Task>,
    done: mpsc::Receiver<Option<Searcher>>,
}

/// How long into a search `info` lines are held back, to go out in one write
/// with the next line after this time or with the `bestmove`: a short search
/// then costs its reader one wake-up instead of one per iteration.
const INFO_BATCH: Duration = Duration::from_millis(20);

/// Runs one search, writing its `info` lines and `bestmove` to `out`.
fn run_task<W: Write>(task: Task, out: &Mutex<W>) -> Searcher {
    let Task {
        mut searcher,
        mut pos,
        history,
        params,
        rules,
        limits,
        protocol,
        infinite,
    } = task;
    let started = Instant::now();
    let mut pending = String::new();
    let result = searcher.search(&mut pos, &history, &limits, &params, &rules, |info| {
        pending.push_str(&format_info(info, protocol));
        pending.push('\n');
        if started.elapsed() >= INFO_BATCH {
            write_text(out, &pending);
            pending.clear();
        }
    });
    if infinite && !limits.stopped() {
        write_text(out, &pending);
        pending.clear();
        while !limits.stopped() {
            thread::sleep(Duration::from_millis(1));
        }
    }
    pending.push_str(&match (result.best_move, protocol) {
        (Some(m), _) => format!("bestmove {m}"),
        (None, Protocol::Uci) => "bestmove (none)".to_string(),
        (None, Protocol::Ucci) => "nobestmove".to_string(),
    });
    pending.push('\n');
    write_text(out, &pending);
    searcher
}

/// Writes `text` (whole lines) in one write and flushes.
fn write_text<W: Write>(out: &Mutex<W>, text: &str) {
    if !text.is_empty()
        && let Ok(mut w) = out.lock()
    {
        let _ = w.write_all(text.as_bytes());
        let _ = w.flush();
    }
}

/// Default transposition table size (MB).
pub const DEFAULT_HASH_MB: usize = 16;
const MAX_HASH_MB: usize = 4096;

fn say<W: Write>(out: &Mutex<W>, text: &str) {
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }
}

impl Uci {
    /// A front end whose parameters start as `params`.
    pub fn with_params(params: Params) -> Uci {
        Uci {
            pos: Position::startpos(),
            history: Vec::new(),
            line: None,
            moves: Vec::new(),
            params,
            rule_set: RuleSet::default(),
            draw_contempt: true,
            hash_mb: DEFAULT_HASH_MB,
            threads: 1,
            searcher: None,
            protocol: Protocol::Uci,
        }
    }

    /// Runs the command loop until `quit` or end of input (which waits for a
    /// running search, stopping it first if it is infinite).
    pub fn run<W: Write + Send>(&mut self, input: impl BufRead, out: W) -> std::io::Result<()> {
        let out = Mutex::new(out);
        let out = &out;
        thread::scope(|scope| {
            let (tasks, task_rx) = mpsc::channel::<Task>();
            let (done_tx, done) = mpsc::channel();
            scope.spawn(move || {
                for task in task_rx {
                    let searcher = panic::catch_unwind(AssertUnwindSafe(|| run_task(task, out)));
                    if done_tx.send(searcher.ok()).is_err() {
                        break;
                    }
                }
            });
            let thread = SearchThread { tasks, done };
            let mut job: Option<Job> = None;
            for line in input.lines() {
                let line = line?;
                let cmd = line.split_whitespace().next().unwrap_or("");
                match cmd {
                    "stop" => {
                        if let Some(j) = &job {
                            j.stop.store(true, Ordering::Relaxed);
                        }
                        self.finish(&mut job, &thread);
                    }
                    "isready" => say(out, "readyok"),
                    "quit" => {
                        if let Some(j) = &job {
                            j.stop.store(true, Ordering::Relaxed);
                        }
                        self.finish(&mut job, &thread);
                        if self.protocol == Protocol::Ucci {
                            say(out, "bye");
                        }
                        return Ok(());
                    }
                    "go" => {
                        Self::stop_if_infinite(&job);
                        self.finish(&mut job, &thread);
                        let mut text = Vec::new();
                        match self.go(&line, &mut text) {
                            Ok(Some((limits, infinite))) => {
                                job = self.spawn(&thread, limits, infinite);
                            }
                            Ok(None) => {}
                            Err(e) => {
                                let _ = writeln!(text, "info string error: {e}");
                            }
                        }
                        if !text.is_empty()
                            && let Ok(mut w) = out.lock()
                        {
                            w.write_all(&text)?;
                            w.flush()?;
                        }
                    }
                    _ => {
                        Self::stop_if_infinite(&job);
                        self.finish(&mut job, &thread);
                        let mut text = Vec::new();
                        self.handle(&line, &mut text)?;
                        if let Ok(mut w) = out.lock() {
                            w.write_all(&text)?;
                            w.flush()?;
                        }
                    }
                }
            }
            Self::stop_if_infinite(&job);
            self.finish(&mut job, &thread);
            Ok(())
        })
    }

    /// Stops a running infinite search (it would otherwise never end).
    fn stop_if_infinite(job: &Option<Job>) {
        if let Some(j) = job
            && j.infinite
        {
            j.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Waits for the running search, if any, and takes its searcher back.
    fn finish(&mut self, job: &mut Option<Job>, thread: &SearchThread) {
        if job.take().is_some() {
            self.searcher = thread.done.recv().ok().flatten();
        }
    }

    /// Hands a search to the search thread.
    fn spawn(&mut self, thread: &SearchThread, limits: Limits, infinite: bool) -> Option<Job> {
        let mut searcher = self
            .searcher
            .take()
            .unwrap_or_else(|| Searcher::new(self.hash_mb));
        searcher.set_threads(self.threads);
        let stop = Arc::clone(&limits.stop);
        let task = Task {
            searcher,
            pos: self.pos.clone(),
            history: self.history.clone(),
            params: self.params.clone(),
            rules: SearchRules::scoring_aware(&self.rule_set, self.draw_contempt),
            limits,
            protocol: self.protocol,
            infinite,
        };
        thread.tasks.send(task).ok()?;
        Some(Job { stop, infinite })
    }

    /// Carries out one command line other than `go`, `stop` and `quit`, which
    /// [`Uci::run`] handles because they involve the search thread.
    fn handle(&mut self, line: &str, out: &mut impl Write) -> std::io::Result<Flow> {
        let mut words = line.split_whitespace();
        let Some(cmd) = words.next() else {
            return Ok(Flow::Continue);
        };
        let rest: Vec<&str> = words.collect();
        let result = match cmd {
            "uci" => {
                self.protocol = Protocol::Uci;
                self.announce(out)?;
                Ok(())
            }
            "ucci" => {
                self.protocol = Protocol::Ucci;
                self.announce(out)?;
                Ok(())
            }
            "isready" => {
                writeln!(out, "readyok")?;
                Ok(())
            }
            "ucinewgame" => {
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
                Ok(())
            }
            "setoption" => self.setoption(&rest),
            "position" => self.position(&rest),
            "ponderhit" => Ok(()),
            "d" => {
                writeln!(out, "{}", self.pos)?;
                Ok(())
            }
            "bench" => self.bench(&rest, out),
            _ => {
                writeln!(out, "info string unknown command '{cmd}'")?;
                Ok(())
            }
        };
        if let Err(e) = result {
            writeln!(out, "info string error: {e}")?;
        }
        Ok(Flow::Continue)
    }

    fn announce(&self, out: &mut impl Write) -> std::io::Result<()> {
        let ucci = self.protocol == Protocol::Ucci;
        writeln!(out, "id name xq-engine {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "id author the xq developers")?;
        if ucci {
            writeln!(
                out,
                "option usemillisec type check default true\n\
                 option hashsize type spin min 1 max {MAX_HASH_MB} default {}\n\
                 option threads type spin min 1 max {MAX_THREADS} default {}\n\
                 option clearhash type button\n\
                 option paramfile type string default <empty>",
                self.hash_mb, self.threads
            )?;
        } else {
            writeln!(
                out,
                "option name Hash type spin default {} min 1 max {MAX_HASH_MB}\n\
                 option name Threads type spin default {} min 1 max {MAX_THREADS}\n\
                 option name Clear Hash type button\n\
                 option name UCI_Variant type combo default {} var {}\n\
                 option name DrawContempt type check default {}\n\
                 option name ParamFile type string default <empty>",
                self.hash_mb,
                self.threads,
                self.rule_set.name().unwrap_or_else(|| "custom".to_string()),
                PRESETS.join(" var "),
                self.draw_contempt
            )?;
        }
        for (spec, v) in self.params.iter() {
            if ucci {
                writeln!(
                    out,
                    "option {} type spin min {} max {} default {v}",
                    spec.name, spec.min, spec.max
                )
            } else {
                writeln!(
                    out,
                    "option name {} type spin default {v} min {} max {}",
                    spec.name, spec.min, spec.max
                )
            }?;
        }
        writeln!(out, "{}", if ucci { "ucciok" } else { "uciok" })?;
        Ok(())
    }

    fn setoption(&mut self, args: &[&str]) -> Result<(), UciError> {
        let (name, value) = if args.first() == Some(&"name") {
            let v = args.iter().position(|&w| w == "value");
            let name_end = v.unwrap_or(args.len());
            if name_end <= 1 {
                return Err(UciError::BadSetOption(args.join(" ")));
            }
            let value = v.map(|i| args[i + 1..].join(" ")).unwrap_or_default();
            (args[1..name_end].join(" "), value)
        } else {
            let Some(&name) = args.first() else {
                return Err(UciError::BadSetOption(String::new()));
            };
            (name.to_string(), args[1..].join(" "))
        };
        let key = name.to_ascii_lowercase();
        match key.as_str() {
            "hash" | "hashsize" => {
                let mb = count(&name, &value, MAX_HASH_MB, " MB")?;
                self.hash_mb = mb;
                self.searcher = Some(Searcher::new(mb));
            }
            "threads" => self.threads = count(&name, &value, MAX_THREADS, "")?,
            "clear hash" | "clearhash" => {
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
            }
            "uci_variant" => {
                self.rule_set = value.parse()?;
                self.pos.set_conversion(self.rule_set.conversion);
            }
            "paramfile" => {
                let bad = |reason: String| UciError::ParamFile {
                    path: value.clone(),
                    reason,
                };
                let text = std::fs::read_to_string(&value).map_err(|e| bad(e.to_string()))?;
                self.params = Params::from_toml(&text).map_err(|e| bad(e.to_string()))?;
            }
            "drawcontempt" => {
                self.draw_contempt = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(UciError::BadBool(value)),
                };
            }
            "usemillisec" | "batch" | "debug" | "ponder" | "newgame" | "promotion" | "idle"
            | "bookfiles" | "egtbpaths" | "loadbook" => {}
            _ => {
                if crate::params::spec(&key).is_none() {
                    return Err(UciError::UnknownOption(name));
                }
                self.params.set_str(&key, &value)?;
            }
        }
        Ok(())
    }

    /// `bench [depth]`: the bench of [`crate::bench`] with the current
    /// parameters (a `ParamFile` included), ending `Nodes searched: N`.
    fn bench(&mut self, args: &[&str], out: &mut impl Write) -> Result<(), UciError> {
        let depth = match args {
            [] => crate::bench::DEFAULT_DEPTH,
            [d] => d
                .parse::<u32>()
                .ok()
                .filter(|d| (1..=64).contains(d))
                .ok_or_else(|| UciError::BadNumber {
                    what: "bench depth (1..=64)".to_string(),
                    value: d.to_string(),
                })?,
            _ => {
                return Err(UciError::BadNumber {
                    what: "bench depth".to_string(),
                    value: args.join(" "),
                });
            }
        };
        let io = |e: std::io::Error| UciError::BadNumber {
            what: "bench output".to_string(),
            value: e.to_string(),
        };
        let r = crate::bench::run(depth, &self.params, out).map_err(io)?;
        writeln!(out, "Nodes searched: {}", r.nodes).map_err(io)?;
        Ok(())
    }

    fn position(&mut self, args: &[&str]) -> Result<(), UciError> {
        let moves_at = args
            .iter()
            .position(|&w| w == "moves")
            .unwrap_or(args.len());
        let start = (args[..moves_at].join(" "), self.rule_set.conversion);
        let mut moves = Vec::with_capacity(args.len().saturating_sub(moves_at + 1));
        for &m in args.iter().skip(moves_at + 1) {
            moves.push(Move::parse_coords(m).ok_or_else(|| UciError::BadMove(m.to_string()))?);
        }
        let extends = self.line.as_ref() == Some(&start) && moves.starts_with(&self.moves);
        let (mut pos, mut history, played) = if extends {
            (self.pos.clone(), self.history.clone(), self.moves.len())
        } else {
            let mut pos = match args.first() {
                Some(&"startpos") if moves_at == 1 => Position::startpos(),
                Some(&"fen") if moves_at > 1 => Position::from_fen(&args[1..moves_at].join(" "))?,
                _ => return Err(UciError::BadPosition(args.join(" "))),
            };
            pos.set_conversion(self.rule_set.conversion);
            let history = vec![HistoryEntry::of(&pos, None)];
            (pos, history, 0)
        };
        for &mv in &moves[played..] {
            if !pos.is_legal(mv) {
                return Err(UciError::BadMove(mv.to_string()));
            }
            pos.make(mv);
            history.push(HistoryEntry::of(&pos, Some(mv)));
        }
        self.pos = pos;
        self.history = history;
        self.line = Some(start);
        self.moves = moves;
        Ok(())
    }

    /// Parses a `go` line. `go perft` is answered at once into `out`; otherwise
    /// returns the limits and whether the search is infinite.
    fn go(&mut self, line: &str, out: &mut impl Write) -> Result<Option<(Limits, bool)>, UciError> {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let bad = || UciError::BadGo(args.join(" "));
        if args.first() == Some(&"perft") {
            let d = match args.as_slice() {
                [_, d] => d.parse::<u32>().map_err(|_| bad())?,
                _ => return Err(bad()),
            };
            print_divide(&mut self.pos, d, out).map_err(|_| bad())?;
            return Ok(None);
        }
        let us = self.pos.side_to_move();
        let mut limits = Limits::default();
        let mut i = 0;
        let num = |i: usize| -> Result<u64, UciError> {
            let v = args.get(i + 1).ok_or_else(bad)?;
            v.parse::<u64>().map_err(|_| UciError::BadNumber {
                what: args[i].to_string(),
                value: v.to_string(),
            })
        };
        let ms = |v: u64| Duration::from_millis(v);
        let mut any_limit = false;
        while i < args.len() {
            let side = |c: Color| c.index();
            let used = match args[i] {
                "infinite" => {
                    limits.infinite = true;
                    any_limit = true;
                    1
                }
                "ponder" | "draw" => 1,
                "depth" => {
                    limits.depth = Some(num(i)?.clamp(1, 1000) as u32);
                    2
                }
                "nodes" => {
                    limits.nodes = Some(num(i)?.max(1));
                    2
                }
                "movetime" => {
                    limits.movetime = Some(ms(num(i)?));
                    2
                }
                "wtime" => {
                    limits.time[side(Color::Red)] = Some(ms(num(i)?));
                    2
                }
                "btime" => {
                    limits.time[side(Color::Black)] = Some(ms(num(i)?));
                    2
                }
                "winc" => {
                    limits.inc[side(Color::Red)] = ms(num(i)?);
                    2
                }
                "binc" => {
                    limits.inc[side(Color::Black)] = ms(num(i)?);
                    2
                }
                "time" => {
                    limits.time[side(us)] = Some(ms(num(i)?));
                    2
                }
                "increment" => {
                    limits.inc[side(us)] = ms(num(i)?);
                    2
                }
                "opptime" => {
                    limits.time[side(!us)] = Some(ms(num(i)?));
                    2
                }
                "oppincrement" => {
                    limits.inc[side(!us)] = ms(num(i)?);
                    2
                }
                "movestogo" => {
                    limits.movestogo = Some(num(i)?.clamp(1, 1000) as u32);
                    2
                }
                "oppmovestogo" => {
                    num(i)?;
                    2
                }
                _ => return Err(bad()),
            };
            if used == 2 && args[i] != "oppmovestogo" && args[i] != "movestogo" {
                any_limit = true;
            }
            i += used;
        }
        if !any_limit {
            limits.infinite = true;
        }
        let infinite = limits.infinite;
        Ok(Some((limits, infinite)))
    }
}

/// The `info` line for a completed iteration.
fn format_info(info: &SearchInfo, protocol: Protocol) -> String {
    let pv: Vec<String> = info.pv.iter().map(Move::to_string).collect();
    match protocol {
        Protocol::Uci => format!(
            "info depth {} seldepth {} score {} nodes {} nps {} time {} hashfull {} pv {}",
            info.depth,
            info.seldepth,
            score_to_uci(info.score),
            info.nodes,
            info.nps(),
            info.time.as_millis(),
            info.hashfull,
            pv.join(" ")
        ),
        Protocol::Ucci => format!(
            "info depth {} score {} time {} nodes {} pv {}",
            info.depth,
            info.score,
            info.time.as_millis(),
            info.nodes,
            pv.join(" ")
        ),
    }
}

/// Prints `<move>: <count>` per root move, then `Nodes searched: <total>`.
pub fn print_divide(pos: &mut Position, depth: u32, out: &mut impl Write) -> std::io::Result<u64> {
    let parts = perft::divide(pos, depth);
    let total = if depth == 0 {
        1
    } else {
        parts.iter().map(|p| p.1).sum()
    };
    for (mv, n) in parts {
        writeln!(out, "{mv}: {n}")?;
    }
    writeln!(out)?;
    writeln!(out, "Nodes searched: {total}")?;
    Ok(total)
}

/// The value of the spin option `name`, from 1 to `max` (`unit` follows
/// the range in the error).
fn count(name: &str, value: &str, max: usize, unit: &str) -> Result<usize, UciError> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| UciError::BadNumber {
            what: format!("{name} (1..={max}{unit})"),
            value: value.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(lines: &str) -> String {
        let mut out = Vec::new();
        Uci::default().run(lines.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn perft_over_uci() {
        let out = session("position startpos moves h2e2\ngo perft 1\nquit\n");
        assert!(out.contains("Nodes searched: 45"), "{out}");
        let out = session("position startpos\ngo perft 2\n");
        assert!(out.contains("h2e2: 45"), "{out}");
        assert!(out.contains("Nodes searched: 1920"), "{out}");
    }

    #[test]
    fn bad_input_is_reported() {
        let out = session("position startpos moves h2h8\nposition fen 9/9\ngo perft x\nfoo\n");
        assert!(out.contains("illegal or malformed move 'h2h8'"), "{out}");
        assert!(out.contains("10 separated by '/'"), "{out}");
        assert!(out.contains("bad go command 'perft x'"), "{out}");
        assert!(out.contains("unknown command 'foo'"), "{out}");
        let out = session(
            "setoption name horse_value value 9999\nsetoption name Bogus value 1\n\
             go depth x\ngo sideways\nsetoption name Hash value 0\n",
        );
        assert!(
            out.contains("'horse_value' = 9999 is out of range 50..=1000"),
            "{out}"
        );
        assert!(out.contains("unknown option 'Bogus'"), "{out}");
        assert!(out.contains("bad value 'x' for 'depth'"), "{out}");
        assert!(out.contains("bad go command 'sideways'"), "{out}");
        assert!(out.contains("bad value '0' for 'Hash"), "{out}");
    }

    #[test]
    fn uci_handshake_lists_options() {
        let out = session("uci\nisready\n");
        assert!(out.starts_with("id name xq-engine"), "{out}");
        assert!(out.contains("option name Hash type spin"), "{out}");
        assert!(
            out.contains("option name UCI_Variant type combo default standard"),
            "{out}"
        );
        assert!(
            out.contains("option name chariot_value type spin default 1411 min 100 max 2000"),
            "{out}"
        );
        assert!(out.contains("uciok\nreadyok\n"), "{out}");
    }

    #[test]
    fn threads_are_an_option_that_searches() {
        let out =
            session("uci\nsetoption name Threads value 0\nsetoption name Threads value 257\n");
        assert!(
            out.contains("option name Threads type spin default 1 min 1 max 256"),
            "{out}"
        );
        assert!(out.contains("bad value '0' for 'Threads"), "{out}");
        assert!(out.contains("bad value '257' for 'Threads"), "{out}");
        let out =
            session("setoption name Threads value 3\nposition startpos\ngo depth 6\nisready\n");
        assert!(out.contains("info depth 6 "), "{out}");
        assert!(out.contains("bestmove "), "{out}");
        let out = session("ucci\nsetoption threads 2\nposition startpos\ngo depth 5\n");
        assert!(
            out.contains("option threads type spin min 1 max 256 default 1"),
            "{out}"
        );
        assert!(out.contains("bestmove "), "{out}");
    }

    #[test]
    fn go_depth_prints_info_and_bestmove() {
        let out = session(
            "setoption name Hash value 1\nucinewgame\nposition startpos moves h2e2\ngo depth 3\n",
        );
        assert!(out.contains("info depth 3 seldepth"), "{out}");
        assert!(out.contains(" pv "), "{out}");
        assert!(
            out.lines()
                .last()
                .is_some_and(|l| l.starts_with("bestmove ")),
            "{out}"
        );
        let out = session("position fen 3k5/1R7/9/9/9/9/9/9/R8/4K4 w\ngo depth 2\n");
        assert!(out.contains("score mate 1"), "{out}");
        let out = session("position fen 3k5/3R5/3R5/9/9/9/9/9/9/4K4 b\ngo depth 2\n");
        assert!(out.contains("bestmove (none)"), "{out}");
    }

    #[test]
    fn a_position_that_extends_the_last_plays_only_the_new_moves_and_ends_alike() {
        let stepwise = session(
            "position startpos moves h2e2\nposition startpos moves h2e2 h9g7\n\
             position startpos moves h2e2 h9g7 h0g2 i9h9\nd\ngo perft 2\n",
        );
        let direct = session("position startpos moves h2e2 h9g7 h0g2 i9h9\nd\ngo perft 2\n");
        assert_eq!(stepwise, direct);
        let out = session(
            "position startpos moves h2e2\nposition startpos moves h2e2 h2h8\nd\n\
             position startpos moves b0c2\nd\n",
        );
        assert!(out.contains("illegal or malformed move 'h2h8'"), "{out}");
        let fresh = session("position startpos moves h2e2\nd\nposition startpos moves b0c2\nd\n");
        assert_eq!(out.split_once('\n').map(|x| x.1), Some(fresh.as_str()));
    }

    #[test]
    fn a_param_file_sets_the_parameters_and_the_bench_shows_it() {
        let dir = std::env::temp_dir().join(format!("xq-uci-paramfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.toml");
        std::fs::write(&good, "chariot_value = 700\n").unwrap();
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, "chariot_value = 99999\n").unwrap();
        let default = session("bench 3\n");
        let tuned = session(&format!(
            "setoption name ParamFile value {}\nbench 3\n",
            good.display()
        ));
        let nodes = |out: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix("Nodes searched: "))
                .map(str::to_owned)
        };
        assert!(nodes(&default).is_some(), "{default}");
        assert_ne!(nodes(&default), nodes(&tuned), "{tuned}");
        let out = session(&format!(
            "setoption name ParamFile value {}\nsetoption name ParamFile value /no/such/file\n",
            bad.display()
        ));
        assert!(out.contains("bad ParamFile"), "{out}");
        assert!(out.contains("out of range"), "{out}");
        assert!(out.contains("bad ParamFile '/no/such/file'"), "{out}");
        assert!(session("bench x\n").contains("bad value 'x' for 'bench depth"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn infinite_search_stops_on_stop() {
        let out = session("go infinite\nisready\nstop\nisready\n");
        let ready = out.find("readyok").unwrap_or(usize::MAX);
        assert!(out.contains("bestmove "), "{out}");
        assert!(ready < out.rfind("bestmove").unwrap_or(0), "{out}");
    }

    #[test]
    fn new_position_ends_an_infinite_search() {
        let out = session("go infinite\nposition startpos moves h2e2\ngo depth 2\n");
        assert_eq!(out.matches("bestmove").count(), 2, "{out}");
    }

    #[test]
    fn ucci_subset() {
        let out = session(
            "ucci\nsetoption hashsize 2\nsetoption usemillisec true\nsetoption tempo 12\n\
             position fen 3k5/1R7/9/9/9/9/9/9/R8/4K4 w - - 0 1\ngo time 1000 increment 0 depth 2\nquit\n",
        );
        assert!(out.contains("option hashsize type spin"), "{out}");
        assert!(out.contains("ucciok"), "{out}");
        assert!(out.contains("info depth 2 score"), "{out}");
        assert!(out.contains("bestmove "), "{out}");
        assert!(out.trim_end().ends_with("bye"), "{out}");
        assert!(!out.contains("error"), "{out}");
    }
}
