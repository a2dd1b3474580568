//! An engine process spoken to over UCI or UCCI, with a deadline on every wait.
//!
//! Two reader threads drain the engine's stdout (into a channel) and stderr (into
//! a ring of the last lines, kept for the log), so a chatty or stuck engine never
//! blocks the runner. Every wait has a deadline; on a timeout, an early exit or a
//! reply that breaks the protocol the process is killed and the failure says what
//! happened. The caller scores the game and starts a fresh process for the next.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use xq_engine::Move;

use super::protocol::{self, Go, Info, Protocol, ProtocolText};

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
    #[serde(default)]
    pub timeouts: Timeouts,
}

/// Deadlines, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timeouts {
    /// From start to the end of the handshake.
    pub startup_ms: u64,
    /// For `readyok` after `isready`.
    pub ready_ms: u64,
    /// For `bestmove` after `go` with a node or depth limit.
    pub search_ms: u64,
    /// Added to the time a timed `go` may take before the engine counts as hung.
    pub margin_ms: u64,
}

impl Default for Timeouts {
    /// 10 s to start, 5 s to be ready, 60 s per node- or depth-limited move, 1 s of
    /// grace on timed moves.
    fn default() -> Self {
        Timeouts {
            startup_ms: 10_000,
            ready_ms: 5_000,
            search_ms: 60_000,
            margin_ms: 1_000,
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
    #[error("engine exited during {what}")]
    Exited { what: &'static str },
    #[error("engine broke the protocol during {what}: '{line}'")]
    Protocol { what: &'static str, line: String },
    #[error("cannot write to the engine: {0}")]
    Write(std::io::Error),
}

/// An engine's answer to `go`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The move text, unchecked; `None` when the engine says it has no move.
    pub bestmove: Option<String>,
    /// The last `info` line's fields.
    pub info: Info,
}

/// Lines of stderr kept for the log.
const STDERR_LINES: usize = 50;

/// A running engine. Killed when dropped.
#[derive(Debug)]
pub struct ExternalEngine {
    config: EngineConfig,
    child: Child,
    stdin: ChildStdin,
    stdout: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The name the engine gave in its `id name` line.
    name: Option<String>,
}

impl ExternalEngine {
    /// Starts the engine, completes the handshake, sets the options and waits
    /// until it is ready.
    pub fn start(config: &EngineConfig) -> Result<ExternalEngine, EngineFailure> {
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
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
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
            child,
            stdin,
            stdout: rx,
            stderr: ring,
            name: None,
        };
        let (hello, ok) = config.protocol.handshake();
        engine.send(hello, "the handshake")?;
        let deadline = Instant::now() + Duration::from_millis(config.timeouts.startup_ms);
        loop {
            let line = engine.next_line("the handshake", deadline, config.timeouts.startup_ms)?;
            if let Some(name) = line.strip_prefix("id name ") {
                engine.name = Some(name.trim().to_string());
            }
            if line.trim() == ok {
                break;
            }
        }
        for (name, value) in &config.options {
            let cmd = config.protocol.setoption(name, value);
            engine.send(&cmd, "the handshake")?;
        }
        engine.ready()?;
        Ok(engine)
    }

    /// The name from the engine's `id name` line.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
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
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    EngineFailure::Exited { what }
                } else {
                    EngineFailure::Write(e)
                }
            })
    }

    /// The next stdout line before `deadline`; kills the engine on a timeout.
    fn next_line(
        &mut self,
        what: &'static str,
        deadline: Instant,
        budget_ms: u64,
    ) -> Result<String, EngineFailure> {
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
        while self.next_line("isready", deadline, budget)?.trim() != "readyok" {}
        Ok(())
    }

    /// Moves the running engine to `config` with `setoption` for each option
    /// that is new or has a new value (an SPSA lease's θ); `false`, with
    /// nothing sent, when that cannot reach it (another executable,
    /// arguments, protocol or timeouts, or an option no longer given) and the
    /// engine must be restarted instead.
    pub fn reconfigure(&mut self, config: &EngineConfig) -> Result<bool, EngineFailure> {
        let old = &self.config;
        let same_process = old.path == config.path
            && old.args == config.args
            && old.protocol == config.protocol
            && old.timeouts == config.timeouts;
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

    /// Prepares for a new game.
    pub fn new_game(&mut self) -> Result<(), EngineFailure> {
        if self.config.protocol == Protocol::Uci {
            self.send("ucinewgame", "a new game")?;
        }
        self.ready()
    }

    /// Sends the position (`fen` and the moves played from it) and `go`, and waits
    /// for the engine's move. `allotted_ms` is the time the engine may use under a
    /// clock or movetime (the deadline adds the margin); `None` for node and depth
    /// limits, which get the fixed search deadline.
    pub fn go(
        &mut self,
        fen: &str,
        moves: &[Move],
        limit: Go,
        allotted_ms: Option<u64>,
    ) -> Result<Reply, EngineFailure> {
        let mut position = format!("position fen {fen}");
        if !moves.is_empty() {
            position.push_str(" moves");
            for m in moves {
                position.push(' ');
                position.push_str(&m.to_string());
            }
        }
        self.send(&position, "a search")?;
        self.send(
            &protocol::go_command(self.config.protocol, limit),
            "a search",
        )?;
        let t = &self.config.timeouts;
        let budget = allotted_ms.map_or(t.search_ms, |ms| ms + t.margin_ms);
        let deadline = Instant::now() + Duration::from_millis(budget);
        let mut info = Info::default();
        loop {
            let line = self.next_line("a search", deadline, budget)?;
            if line.starts_with("info ") {
                let i = protocol::parse_info(&line);
                info = Info {
                    depth: i.depth.or(info.depth),
                    score_cp: i.score_cp.or(info.score_cp),
                    nodes: i.nodes.or(info.nodes),
                };
                continue;
            }
            if let Some(bestmove) = protocol::parse_bestmove(&line) {
                return Ok(Reply { bestmove, info });
            }
            let trimmed = line.trim();
            if !trimmed.is_empty() && !trimmed.starts_with("id ") && trimmed != "readyok" {
                let _ = self.child.kill();
                return Err(EngineFailure::Protocol {
                    what: "a search",
                    line,
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
