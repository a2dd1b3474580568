//! An engine process spoken to over UCI or UCCI, with a deadline on every wait.
//!
//! Two reader threads drain the engine's stdout and stderr, so a chatty or stuck
//! engine never blocks the runner. The stdout reader folds `info` lines into one
//! running summary and passes on only the other lines, each stamped with the
//! time it was read, so a search wakes the game thread once, at its `bestmove`;
//! stderr goes into a ring of the last lines, kept for the log. Every wait has a
//! deadline; on a timeout, an early exit or a reply that breaks the protocol the
//! process is killed and the failure says what happened. The caller scores the
//! game and starts a fresh process for the next.
//!
//! The handshake, in order: `uci` (or `ucci`) and the option declarations up to
//! `uciok`; `UCI_Variant` when the engine offers it (after `uciok`: Fairy-Stockfish's
//! `uci` resets it to chess); `usemillisec true` when a UCCI engine offers it; the
//! configured options; `isready`. Then a probe, `go depth 1` from the start
//! position, whose answer proves the coordinate dialect before any game.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use xq_engine::rules::RuleSet;
use xq_engine::{Move, Position, START_FEN};
use xq_proto::uci_variant::choose_variant;

use super::dialect::{self, Coords, Dialect, DialectMismatch};
use super::protocol::{self, Go, Info, Protocol, ProtocolText, TimeUnit};

/// How to start an engine and set it up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// The executable.
    pub path: PathBuf,
    /// Command-line arguments.
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub protocol: Protocol,
    /// Options set after the handshake, in order.
    #[serde(default)]
    pub options: Vec<(String, String)>,
    /// Options set after `options` only when the engine declares them at
    /// the handshake (a run's `Threads` and `Hash`, which not every engine
    /// offers); an undeclared one is logged and left out.
    #[serde(default)]
    pub if_offered: Vec<(String, String)>,
    #[serde(default)]
    pub timeouts: Timeouts,
    /// How the engine numbers ranks; `None` to detect it at the handshake (1–10
    /// when the engine offers `UCI_Variant` with `xiangqi`, else 0–9).
    #[serde(default)]
    pub coords: Option<Coords>,
}

/// Deadlines and the forfeit margin, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timeouts {
    /// From start to the end of the handshake.
    pub startup_ms: u64,
    /// For `readyok` after `isready`.
    pub ready_ms: u64,
    /// For `bestmove` after `go` with a node or depth limit.
    pub search_ms: u64,
    /// The forfeit margin (fastchess's `timemargin`): how far a timed move may
    /// overrun the engine's clock or movetime before it loses on time.
    pub margin_ms: u64,
    /// After a timed move overran the margin, how much longer the runner waits
    /// for the move to learn the overrun, before it kills the engine as hung.
    pub overrun_wait_ms: u64,
}

impl Default for Timeouts {
    /// 10 s to start, 5 s to be ready, 60 s per node- or depth-limited move, a
    /// 1 s forfeit margin on timed moves and 1 s more to measure an overrun.
    fn default() -> Self {
        Timeouts {
            startup_ms: 10_000,
            ready_ms: 5_000,
            search_ms: 60_000,
            margin_ms: 1_000,
            overrun_wait_ms: 1_000,
        }
    }
}

/// Why an engine could not go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineFailure {
    #[error("cannot start engine '{path}': {source}")]
    Spawn {
        path: String,
        source: std::io::Error,
    },
    #[error("engine did not answer {what} within {after_ms} ms")]
    Timeout { what: &'static str, after_ms: u64 },
    /// A timed move came, but later than the allotment plus the margin; the
    /// engine is still usable.
    #[error(
        "engine took {elapsed_ms} ms for a move allotted {allotted_ms} ms (margin {margin_ms} ms)"
    )]
    Overran {
        elapsed_ms: u64,
        allotted_ms: u64,
        margin_ms: u64,
    },
    #[error("engine exited during {what}")]
    Exited { what: &'static str },
    #[error("engine broke the protocol during {what}: '{line}'")]
    Protocol { what: &'static str, line: String },
    #[error("cannot write to the engine: {0}")]
    Write(std::io::Error),
    /// The engine numbers ranks otherwise than stated: a setting to fix, not a
    /// game to score.
    #[error("engine '{engine}': {mismatch}")]
    Dialect {
        engine: String,
        mismatch: DialectMismatch,
    },
    /// The engine cannot play the match's rule set: a setting to fix.
    #[error("engine '{engine}' cannot play rule set '{rules}': {why}")]
    Unsupported {
        engine: String,
        rules: String,
        why: String,
    },
    #[error(
        "engine '{engine}' answered the start position (probe 'go depth 1') with '{text}', \
         a move legal in neither coordinate dialect"
    )]
    Probe { engine: String, text: String },
}

impl EngineFailure {
    /// Whether the failure is a configuration the user must change (a dialect
    /// or a rule set), which would fail every game alike.
    pub fn is_setting(&self) -> bool {
        matches!(
            self,
            EngineFailure::Dialect { .. } | EngineFailure::Unsupported { .. }
        )
    }
}

/// An engine's answer to `go`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The move text in the engine's dialect, unchecked; `None` when the engine
    /// says it has no move.
    pub bestmove: Option<String>,
    /// The `info` lines' fields, later lines over earlier.
    pub info: Info,
    /// The principal variation, read in the engine's dialect up to the first
    /// word that is not a move.
    pub pv: Vec<Move>,
    /// From the write of `go` to the read of `bestmove`: the time the engine
    /// is charged, without the runner's own overhead.
    pub elapsed: Duration,
}

/// Lines of stderr kept for the log.
const STDERR_LINES: usize = 50;

/// A stdout line other than `info`, with the `info` lines read before it.
#[derive(Debug)]
struct Line {
    text: String,
    /// When the reader thread read it.
    at: Instant,
    /// The `info` lines since the previous line, merged.
    info: Info,
}

/// What the handshake settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The name from the engine's `id name` line.
    pub name: Option<String>,
    pub coords: Coords,
    /// Whether `coords` was detected rather than stated.
    pub coords_detected: bool,
    /// The `UCI_Variant` value set, if the engine offers the option.
    pub variant: Option<String>,
    /// The `UCI_Variant` values the engine offers; `None` without the option.
    pub offered_variants: Option<Vec<String>>,
    /// The unit of UCCI clock fields.
    pub unit: TimeUnit,
}

/// A running engine. Killed when dropped.
#[derive(Debug)]
pub struct ExternalEngine {
    config: EngineConfig,
    /// The rule set the handshake chose `UCI_Variant` for.
    rules: RuleSet,
    child: Child,
    stdin: ChildStdin,
    stdout: Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    session: Session,
    /// The command buffer, reused.
    out: String,
}

impl ExternalEngine {
    /// Starts the engine, completes the handshake for a match under `rules`,
    /// sets the options, waits until it is ready and probes its dialect.
    pub fn start(config: &EngineConfig, rules: &RuleSet) -> Result<ExternalEngine, EngineFailure> {
        let spawn = |source| EngineFailure::Spawn {
            path: config.path.display().to_string(),
            source,
        };
        // A just-written executable may be briefly "busy" while another thread's
        // fork still holds its write descriptor (ETXTBSY); that clears in
        // milliseconds, so retry a few times.
        let mut attempt = 0;
        let mut child = loop {
            let spawned = Command::new(&config.path)
                .args(&config.args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn();
            match spawned {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 20 => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(10 * attempt));
                }
                other => break other.map_err(spawn)?,
            }
        };
        let missing = || spawn(std::io::Error::other("no pipe to the process"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut info = Info::default();
            for text in BufReader::new(stdout).lines() {
                let Ok(text) = text else { break };
                if text.split_whitespace().next() == Some("info") {
                    info.merge(protocol::parse_info(&text));
                    continue;
                }
                let line = Line {
                    text,
                    at: Instant::now(),
                    info: std::mem::take(&mut info),
                };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let ring = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_LINES)));
        let sink = Arc::clone(&ring);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut r = sink.lock().unwrap_or_else(PoisonError::into_inner);
                if r.len() == STDERR_LINES {
                    r.pop_front();
                }
                r.push_back(line);
            }
        });
        let mut engine = ExternalEngine {
            config: config.clone(),
            rules: *rules,
            child,
            stdin,
            stdout: rx,
            stderr: ring,
            session: Session {
                name: None,
                coords: Coords::default(),
                coords_detected: false,
                variant: None,
                offered_variants: None,
                unit: TimeUnit::Millis,
            },
            out: String::new(),
        };
        let protocol = config.protocol;
        let (hello, ok) = protocol.handshake();
        engine.send(hello, "the handshake")?;
        let deadline = Instant::now() + Duration::from_millis(config.timeouts.startup_ms);
        let mut options = Vec::new();
        loop {
            let line = engine.next_line("the handshake", deadline, config.timeouts.startup_ms)?;
            let text = line.text.trim();
            if let Some(name) = text.strip_prefix("id name ") {
                engine.session.name = Some(name.trim().to_string());
            } else if let Some(option) = protocol::parse_option(protocol, text) {
                options.push(option);
            } else if text == ok {
                break;
            }
        }
        let offered = |name: &str| options.iter().find(|o| o.name.eq_ignore_ascii_case(name));
        let variant_decl = offered("UCI_Variant");
        let offered_variants = variant_decl.map(|v| v.vars.clone());
        let variant = choose_variant(offered_variants.as_deref(), rules).map_err(|why| {
            EngineFailure::Unsupported {
                engine: engine.label(),
                rules: rules.name().unwrap_or_else(|| "custom".to_string()),
                why,
            }
        })?;
        let (coords, detected) = match config.coords {
            Some(c) => (c, false),
            None => {
                let xiangqi = variant_decl.is_some_and(|v| v.vars.iter().any(|x| x == "xiangqi"));
                (
                    if xiangqi {
                        Coords::FromOne
                    } else {
                        Coords::FromZero
                    },
                    true,
                )
            }
        };
        let mut setup = Vec::new();
        if let Some(v) = &variant {
            setup.push(protocol.setoption("UCI_Variant", v));
        }
        let unit = match protocol {
            Protocol::Uci => TimeUnit::Millis,
            Protocol::Ucci if offered("usemillisec").is_some() => {
                setup.push(protocol.setoption("usemillisec", "true"));
                TimeUnit::Millis
            }
            Protocol::Ucci => TimeUnit::Seconds,
        };
        for (name, value) in &config.options {
            setup.push(protocol.setoption(name, value));
        }
        for (name, value) in &config.if_offered {
            match offered(name) {
                Some(declared) => setup.push(protocol.setoption(&declared.name, value)),
                None => tracing::warn!(
                    engine = %engine.label(),
                    option = %name,
                    %value,
                    "the engine offers no such option; left out"
                ),
            }
        }
        for cmd in &setup {
            engine.send(cmd, "the handshake")?;
        }
        engine.session.coords = coords;
        engine.session.coords_detected = detected;
        engine.session.variant = variant;
        engine.session.offered_variants = offered_variants;
        engine.session.unit = unit;
        engine.ready()?;
        engine.probe()?;
        Ok(engine)
    }

    /// Asks for a move from the start position, where every legal move of one
    /// dialect is illegal read in the other, so a wrong dialect shows at once.
    fn probe(&mut self) -> Result<(), EngineFailure> {
        let reply = self.search(START_FEN, &[], Go::Depth(1), None, "the probe")?;
        let Some(text) = reply.bestmove else {
            return Err(EngineFailure::Probe {
                engine: self.label(),
                text: "(none)".to_string(),
            });
        };
        match dialect::judge(self.session.coords, &Position::startpos(), &text) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(EngineFailure::Probe {
                engine: self.label(),
                text,
            }),
            Err(mismatch) => Err(EngineFailure::Dialect {
                engine: self.label(),
                mismatch,
            }),
        }
    }

    /// The engine's name for messages: its `id name`, else its path.
    pub fn label(&self) -> String {
        self.session
            .name
            .clone()
            .unwrap_or_else(|| self.config.path.display().to_string())
    }

    /// The name from the engine's `id name` line.
    pub fn name(&self) -> Option<&str> {
        self.session.name.as_deref()
    }

    /// What the handshake settled.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The last lines the engine wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Writes a command; a closed pipe means the engine has exited.
    fn send(&mut self, line: &str, what: &'static str) -> Result<(), EngineFailure> {
        self.out.clear();
        self.out.push_str(line);
        self.out.push('\n');
        self.flush_out(what)
    }

    /// Writes the command buffer in one write.
    fn flush_out(&mut self, what: &'static str) -> Result<(), EngineFailure> {
        self.stdin
            .write_all(self.out.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    EngineFailure::Exited { what }
                } else {
                    EngineFailure::Write(e)
                }
            })
    }

    /// The next non-`info` stdout line before `deadline`; kills the engine on a
    /// timeout.
    fn next_line(
        &mut self,
        what: &'static str,
        deadline: Instant,
        budget_ms: u64,
    ) -> Result<Line, EngineFailure> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.stdout.recv_timeout(left) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(EngineFailure::Timeout {
                    what,
                    after_ms: budget_ms,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.child.kill();
                Err(EngineFailure::Exited { what })
            }
        }
    }

    /// `isready`, then waits for `readyok`.
    fn ready(&mut self) -> Result<(), EngineFailure> {
        self.send("isready", "isready")?;
        let budget = self.config.timeouts.ready_ms;
        let deadline = Instant::now() + Duration::from_millis(budget);
        while self.next_line("isready", deadline, budget)?.text.trim() != "readyok" {}
        Ok(())
    }

    /// Moves the running engine to `config` with `setoption` for each option
    /// that is new or has a new value (an SPSA lease's θ); `false`, with
    /// nothing sent, when that cannot reach it (another executable,
    /// arguments, protocol or timeouts, or an option no longer given) and the
    /// engine must be restarted instead.
    pub fn reconfigure(
        &mut self,
        config: &EngineConfig,
        rules: &RuleSet,
    ) -> Result<bool, EngineFailure> {
        let old = &self.config;
        let same_process = old.path == config.path
            && old.args == config.args
            && old.protocol == config.protocol
            && old.timeouts == config.timeouts
            && old.coords == config.coords
            && old.if_offered == config.if_offered
            && self.rules == *rules;
        let kept = old
            .options
            .iter()
            .all(|(n, _)| config.options.iter().any(|(m, _)| m == n));
        if !same_process || !kept {
            return Ok(false);
        }
        let changed: Vec<(String, String)> = config
            .options
            .iter()
            .filter(|o| !self.config.options.contains(o))
            .cloned()
            .collect();
        for (name, value) in &changed {
            let cmd = config.protocol.setoption(name, value);
            self.send(&cmd, "setoption")?;
        }
        self.config = config.clone();
        Ok(true)
    }

    /// The protocol it speaks.
    pub fn protocol(&self) -> Protocol {
        self.config.protocol
    }

    /// The deadline of node- and depth-limited searches from now on
    /// ([`Timeouts::search_ms`]).
    pub fn set_search_timeout(&mut self, timeout: std::time::Duration) {
        self.config.timeouts.search_ms = timeout.as_millis().try_into().unwrap_or(u64::MAX);
    }

    /// Prepares for a new game.
    pub fn new_game(&mut self) -> Result<(), EngineFailure> {
        if self.config.protocol == Protocol::Uci {
            self.send("ucinewgame", "a new game")?;
        }
        self.ready()
    }

    /// Sends the position (`fen` and the moves played from it) and `go`, and waits
    /// for the engine's move. `allotted_ms` is the time the engine may use under a
    /// clock or movetime (the deadline adds the forfeit margin); `None` for node
    /// and depth limits, which get the fixed search deadline.
    pub fn go(
        &mut self,
        fen: &str,
        moves: &[Move],
        limit: Go,
        allotted_ms: Option<u64>,
    ) -> Result<Reply, EngineFailure> {
        self.search(fen, moves, limit, allotted_ms, "a search")
    }

    fn search(
        &mut self,
        fen: &str,
        moves: &[Move],
        limit: Go,
        allotted_ms: Option<u64>,
        what: &'static str,
    ) -> Result<Reply, EngineFailure> {
        let coords = self.session.coords;
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        out.push_str("position fen ");
        out.push_str(&coords.fen(fen));
        if !moves.is_empty() {
            out.push_str(" moves");
            for &m in moves {
                out.push(' ');
                coords.write_move(m, &mut out);
            }
        }
        out.push('\n');
        protocol::write_go(&mut out, self.config.protocol, limit, self.session.unit);
        out.push('\n');
        self.out = out;
        let t = self.config.timeouts;
        let budget = allotted_ms.map_or(t.search_ms, |ms| ms + t.margin_ms + t.overrun_wait_ms);
        let sent = Instant::now();
        self.flush_out(what)?;
        let deadline = sent + Duration::from_millis(budget);
        let mut info = Info::default();
        loop {
            let line = self.next_line(what, deadline, budget)?;
            info.merge(line.info);
            if let Some(bestmove) = protocol::parse_bestmove(&line.text) {
                let elapsed = line.at.saturating_duration_since(sent);
                let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
                if let Some(allotted_ms) = allotted_ms
                    && elapsed_ms > allotted_ms + t.margin_ms
                {
                    return Err(EngineFailure::Overran {
                        elapsed_ms,
                        allotted_ms,
                        margin_ms: t.margin_ms,
                    });
                }
                let pv = info
                    .pv
                    .as_deref()
                    .unwrap_or("")
                    .split_whitespace()
                    .map_while(|w| coords.read_move(w))
                    .collect();
                return Ok(Reply {
                    bestmove,
                    info,
                    pv,
                    elapsed,
                });
            }
            let trimmed = line.text.trim();
            if !trimmed.is_empty() && !trimmed.starts_with("id ") && trimmed != "readyok" {
                let _ = self.child.kill();
                return Err(EngineFailure::Protocol {
                    what,
                    line: line.text,
                });
            }
        }
    }
}

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        let _ = self.send("quit", "quit");
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
