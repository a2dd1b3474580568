//! This worker's speed with an engine under test, for the runs that scale
//! time controls by it or refuse slow machines ([`xq_proto::capacity::SpeedCheck`]).
//!
//! Measured with the engine's own bench where it has one (its `Nodes/second`
//! line, one search thread), else by a fixed search: [`SEARCH_MS`] on each
//! of the first [`SEARCH_POSITIONS`] bench positions of the built-in engine,
//! one thread and [`SEARCH_HASH_MB`] of hash, the same on every worker. The
//! built-in engine's speed is its registration bench. A measurement is kept
//! per engine build (its executable and assets) and machine, in
//! [`SpeedCache`], so it is taken once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use xq_engine::rules::RuleSet;
use xq_proto::capacity::SpeedMethod;
use xq_proto::{EngineRef, Machine};

use crate::blob_cache;
use crate::external::{EngineConfig, ExternalEngine, Go, Timeouts};

/// Time of the fixed search per position, ms.
pub const SEARCH_MS: u64 = 500;

/// Positions of the fixed search.
pub const SEARCH_POSITIONS: usize = 4;

/// Hash of the fixed search, MiB.
pub const SEARCH_HASH_MB: u32 = 16;

/// How long a bench may take.
pub const BENCH_TIMEOUT: Duration = Duration::from_secs(300);

/// A measured speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured {
    /// Nodes per second, one search thread; at least 1.
    pub nps: u64,
    pub method: SpeedMethod,
}

/// The key a measurement of `engine` on `machine` is kept under: the
/// engine's executable and assets, and the machine's CPU, flags and cores.
pub fn key(engine: &EngineRef, machine: Option<&Machine>) -> String {
    let mut key = engine.sha256.clone();
    for (option, sha) in engine.asset_options() {
        key += &format!(" {option}={sha}");
    }
    match machine {
        Some(m) => key + &format!(" | {} | {} | {}", m.cpu_model, m.flags, m.cores),
        None => key + " | unknown machine",
    }
}

/// Measurements kept in a JSON file, written whole (to a temporary file,
/// then renamed) after each new one.
#[derive(Debug)]
pub struct SpeedCache {
    path: PathBuf,
    entries: BTreeMap<String, Measured>,
}

impl SpeedCache {
    /// The cache of the engine cache `dir`: the file `DIR.speeds.json`
    /// beside it (the engine cache holds verified blobs only); an
    /// unreadable file is started afresh, with a warning.
    pub fn open(dir: &Path) -> SpeedCache {
        let mut name = dir.file_name().unwrap_or_default().to_os_string();
        name.push(".speeds.json");
        let path = dir.with_file_name(name);
        let entries = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %path.display(), error = %e, "unreadable speed cache; measuring again");
                BTreeMap::new()
            }),
            Err(_) => BTreeMap::new(),
        };
        SpeedCache { path, entries }
    }

    pub fn get(&self, key: &str) -> Option<Measured> {
        self.entries.get(key).copied()
    }

    /// Keeps `measured` under `key`; a failed write is logged (the
    /// measurement is still used, and taken again by the next process).
    pub fn insert(&mut self, key: String, measured: Measured) {
        self.entries.insert(key, measured);
        if let Err(e) = self.write() {
            tracing::warn!(path = %self.path.display(), error = %format!("{e:#}"), "cannot write the speed cache");
        }
    }

    fn write(&self) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        xq_proto::atomic_file::write(&self.path, &serde_json::to_vec_pretty(&self.entries)?)?;
        Ok(())
    }
}

/// Measures `engine`, whose executable and assets are in the engine cache
/// `dir`: its bench when it declares a bench count (it has a bench) and
/// prints a speed, else the fixed search.
pub fn measure(engine: &EngineRef, dir: &Path) -> anyhow::Result<Measured> {
    let path = blob_cache::path(dir, &engine.sha256);
    if matches!(engine.signature, Some(xq_proto::Signature::Bench(_))) {
        let options = blob_cache::asset_paths(dir, engine);
        match blob_cache::bench(&path, engine.protocol, &options, BENCH_TIMEOUT) {
            Ok(report) => {
                if let Some(nps) = report.nps {
                    return Ok(Measured {
                        nps,
                        method: SpeedMethod::Bench,
                    });
                }
            }
            Err(e) => {
                tracing::warn!(engine = %engine.name, error = %format!("{e:#}"), "bench failed; measuring by a fixed search")
            }
        }
    }
    let config = EngineConfig {
        path,
        args: Vec::new(),
        protocol: engine.protocol,
        options: blob_cache::options_with_paths(dir, engine),
        if_offered: vec![
            ("Threads".to_owned(), "1".to_owned()),
            ("Hash".to_owned(), SEARCH_HASH_MB.to_string()),
            ("hashsize".to_owned(), SEARCH_HASH_MB.to_string()),
        ],
        timeouts: Timeouts::default(),
        coords: engine.coords,
    };
    fixed_search(&config)
}

/// The fixed search's speed of the engine `config` starts.
pub fn fixed_search(config: &EngineConfig) -> anyhow::Result<Measured> {
    let label = config.path.display().to_string();
    let mut engine = ExternalEngine::start(config, &RuleSet::STANDARD)
        .with_context(|| format!("start '{label}' to measure its speed"))?;
    let (mut nodes, mut elapsed) = (0u64, Duration::ZERO);
    for fen in xq_engine::bench::POSITIONS.iter().take(SEARCH_POSITIONS) {
        engine
            .new_game()
            .with_context(|| format!("'{label}': a new game"))?;
        let reply = engine
            .go(fen, &[], Go::MoveTimeMs(SEARCH_MS), Some(SEARCH_MS))
            .with_context(|| format!("'{label}': the fixed search"))?;
        nodes += reply.info.nodes.unwrap_or(0);
        elapsed += reply.elapsed;
    }
    let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-3)) as u64;
    if nps == 0 {
        anyhow::bail!("'{label}' reported no nodes in its info lines: its speed is unknown");
    }
    Ok(Measured {
        nps,
        method: SpeedMethod::Search,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurements_are_kept_per_build_and_machine_across_processes() {
        let dir = std::env::temp_dir().join(format!("xq-speed-test-{}", std::process::id()));
        let engine = EngineRef {
            name: "e".to_owned(),
            sha256: "a".repeat(64),
            size: 1,
            signature: None,
            protocol: xq_proto::Protocol::Uci,
            options: [("EvalFile".to_owned(), format!("asset:{}", "b".repeat(64)))].into(),
            coords: None,
            binaries: Vec::new(),
            source: None,
        };
        let machine = crate::machine::detect();
        let here = key(&engine, Some(&machine));
        assert!(here.contains(&"b".repeat(64)), "{here}");
        let elsewhere = key(
            &engine,
            Some(&Machine {
                cores: machine.cores + 1,
                ..machine.clone()
            }),
        );
        assert_ne!(here, elsewhere);
        let _ = std::fs::remove_file(SpeedCache::open(&dir).path);
        let mut cache = SpeedCache::open(&dir);
        assert_eq!(
            cache.path.file_name().unwrap(),
            format!("xq-speed-test-{}.speeds.json", std::process::id()).as_str()
        );
        assert_eq!(cache.get(&here), None);
        let measured = Measured {
            nps: 1_234_567,
            method: SpeedMethod::Search,
        };
        cache.insert(here.clone(), measured);
        let again = SpeedCache::open(&dir);
        assert_eq!(again.get(&here), Some(measured));
        assert_eq!(again.get(&elsewhere), None);
        assert!(cache.path.exists());
        assert!(!dir.exists(), "nothing in the engine cache itself");
        std::fs::write(cache.path.clone(), b"{garbage").unwrap();
        assert_eq!(SpeedCache::open(&dir).get(&here), None);
        let _ = std::fs::remove_file(&cache.path);
    }
}
