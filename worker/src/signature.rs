//! Measuring an engine's [`Signature`] on this machine, as the kind the
//! engine declares: its bench's `Nodes searched`, or the nodes of a fixed
//! search for an engine without a bench (ElephantEye).
//!
//! The fixed search: for each of the first [`SIGNATURE_POSITIONS`] bench
//! positions of the built-in engine, a new game, then `go depth D`; the
//! signature is the sum of the last `nodes` each search's `info` lines
//! report. The engine gets one thread and [`SIGNATURE_HASH_MB`] of hash
//! where it offers them (`Threads`, `Hash`, UCCI's `hashsize`), so the count
//! is the same on every machine for a deterministic engine.
//!
//! Both are bounded in time and cancellable: a worker never waits on an
//! engine that does not finish for longer than its limit, and reports the
//! time-out as the cause ([`MeasureError`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use xq_engine::rules::RuleSet;
use xq_proto::{EngineRef, Signature};

use crate::blob_cache::{self, BenchError, BenchReport};
use crate::external::{EngineConfig, ExternalEngine, Go, Timeouts};

/// Positions of the fixed search (the first bench positions of `xq-engine`).
pub const SIGNATURE_POSITIONS: usize = 4;

/// Hash of the fixed search, MiB.
pub const SIGNATURE_HASH_MB: u32 = 16;

/// What was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// The node count to compare with the declared signature's.
    pub nodes: u64,
    /// The bench's speed, when it printed one (a fixed search gives none:
    /// its speed is measured apart, see [`crate::speed`]).
    pub nps: Option<u64>,
}

/// Why nothing was measured; its text is the one-line cause a worker
/// reports (`ReportEngineMismatch.failure`).
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("bench timed out after {secs} s")]
    BenchTimedOut { secs: u64 },
    #[error("fixed search (go depth {depth}) timed out after {secs} s")]
    SearchTimedOut { depth: u32, secs: u64 },
    /// The lease was lost or the worker stops: nothing to report.
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
}

/// Most bytes of the cause a worker reports.
pub const MAX_CAUSE_BYTES: usize = 256;

impl MeasureError {
    /// The first line of the message, at most [`MAX_CAUSE_BYTES`] bytes
    /// (cut at a character boundary): what the worker reports.
    pub fn cause(&self) -> String {
        let text = self.to_string();
        let line = text.lines().next().unwrap_or_default();
        let mut end = line.len().min(MAX_CAUSE_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line[..end].to_owned()
    }
}

/// Measures `engine`, whose executable and assets are in the engine cache
/// `dir`, as its declared `signature` says, within `timeout` and until
/// `cancel` is set.
pub fn measure(
    engine: &EngineRef,
    dir: &Path,
    signature: Signature,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<Measured, MeasureError> {
    let path = blob_cache::path(dir, &engine.sha256);
    match signature {
        Signature::Bench(_) => {
            let options = blob_cache::asset_paths(dir, engine);
            match blob_cache::bench_until(&path, engine.protocol, &options, timeout, cancel) {
                Ok(BenchReport { nodes, nps }) => Ok(Measured { nodes, nps }),
                Err(BenchError::TimedOut { secs }) => Err(MeasureError::BenchTimedOut { secs }),
                Err(BenchError::Cancelled) => Err(MeasureError::Cancelled),
                Err(e @ BenchError::Failed(_)) => Err(MeasureError::Failed(e.to_string())),
            }
        }
        Signature::Search { depth, .. } => {
            let config = EngineConfig {
                path,
                args: Vec::new(),
                protocol: engine.protocol,
                options: blob_cache::options_with_paths(dir, engine),
                if_offered: fixed_search_options(),
                timeouts: Timeouts::default(),
                coords: engine.coords,
            };
            fixed_search(&config, depth, timeout, cancel).map(|nodes| Measured { nodes, nps: None })
        }
    }
}

/// One thread and [`SIGNATURE_HASH_MB`] of hash, where the engine offers them.
pub fn fixed_search_options() -> Vec<(String, String)> {
    vec![
        ("Threads".to_owned(), "1".to_owned()),
        ("Hash".to_owned(), SIGNATURE_HASH_MB.to_string()),
        ("hashsize".to_owned(), SIGNATURE_HASH_MB.to_string()),
    ]
}

/// The fixed search's node count (at least 1) of the engine `config`
/// starts: the whole search gets `timeout`, each `go depth` what is left of it.
pub fn fixed_search(
    config: &EngineConfig,
    depth: u32,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<u64, MeasureError> {
    let label = config.path.display().to_string();
    let deadline = Instant::now() + timeout;
    let timed_out = || MeasureError::SearchTimedOut {
        depth,
        secs: timeout.as_secs(),
    };
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        MeasureError::Failed(format!("'{label}': {what}: {e}"))
    };
    let mut config = config.clone();
    config.timeouts.search_ms = timeout.as_millis().try_into().unwrap_or(u64::MAX);
    let mut engine = ExternalEngine::start(&config, &RuleSet::STANDARD)
        .map_err(|e| failed("cannot start it for its fixed search", &e))?;
    let mut nodes = 0u64;
    for fen in xq_engine::bench::POSITIONS.iter().take(SIGNATURE_POSITIONS) {
        if cancel.load(Ordering::Relaxed) {
            return Err(MeasureError::Cancelled);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        engine.set_search_timeout(left);
        engine.new_game().map_err(|e| failed("a new game", &e))?;
        let reply = engine
            .go(fen, &[], Go::Depth(depth), None)
            .map_err(|e| match e {
                crate::external::EngineFailure::Timeout { .. } => timed_out(),
                e => failed("the fixed search", &e),
            })?;
        nodes = nodes.saturating_add(reply.info.nodes.unwrap_or(0));
    }
    if nodes == 0 {
        return Err(MeasureError::Failed(format!(
            "'{label}' reported no nodes in the info lines of its fixed search (go depth \
             {depth}): it cannot be signed that way"
        )));
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_one_bounded_line() {
        assert_eq!(
            MeasureError::BenchTimedOut { secs: 60 }.cause(),
            "bench timed out after 60 s"
        );
        assert_eq!(
            MeasureError::SearchTimedOut { depth: 5, secs: 9 }.cause(),
            "fixed search (go depth 5) timed out after 9 s"
        );
        let long = MeasureError::Failed(format!("{}\nsecond line", "é".repeat(300)));
        let cause = long.cause();
        assert!(cause.len() <= MAX_CAUSE_BYTES && cause.len() >= MAX_CAUSE_BYTES - 1);
        assert!(!cause.contains("second"));
    }

    /// A fake engine's script, run by `sh`: `bench` hangs; as an UCI engine
    /// it answers `go depth N` with `N * 100` nodes.
    fn fake_engine(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("fake-engine");
        std::fs::write(
            &path,
            "#!/bin/sh\n\
             if [ \"$1\" = bench ]; then sleep 30; exit 0; fi\n\
             while read -r cmd a b c; do\n\
               case \"$cmd\" in\n\
                 uci) echo 'id name fake'; echo uciok ;;\n\
                 isready) echo readyok ;;\n\
                 go) echo \"info depth $b nodes $((b * 100))\"; echo 'bestmove h2e2' ;;\n\
                 quit) exit 0 ;;\n\
               esac\n\
             done\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn config(path: std::path::PathBuf) -> EngineConfig {
        EngineConfig {
            path,
            args: Vec::new(),
            protocol: xq_proto::Protocol::Uci,
            options: Vec::new(),
            if_offered: fixed_search_options(),
            timeouts: Timeouts::default(),
            coords: None,
        }
    }

    #[test]
    fn a_hanging_bench_times_out_as_such_and_a_fixed_search_counts_its_nodes() {
        let dir = std::env::temp_dir().join(format!("xq-signature-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = fake_engine(&dir);
        let never = AtomicBool::new(false);
        let started = Instant::now();
        let err = blob_cache::bench_until(
            &path,
            xq_proto::Protocol::Uci,
            &[],
            Duration::from_secs(1),
            &never,
        )
        .unwrap_err();
        assert!(matches!(err, BenchError::TimedOut { secs: 1 }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let cancelled = AtomicBool::new(true);
        let err = blob_cache::bench_until(
            &path,
            xq_proto::Protocol::Uci,
            &[],
            Duration::from_secs(60),
            &cancelled,
        )
        .unwrap_err();
        assert!(matches!(err, BenchError::Cancelled), "{err}");
        let nodes = fixed_search(&config(path), 3, Duration::from_secs(30), &never).unwrap();
        assert_eq!(nodes, SIGNATURE_POSITIONS as u64 * 300);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
