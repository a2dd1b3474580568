//! `xq-coordinator engine add|list`: the engine registry, on the database file.
//!
//! Adding an engine needs write access to the coordinator's database, which only
//! its administrator has; workers download registered engines by SHA-256.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::spin_options::{self, SpinOption};
use xq_coordinator::store::engines::{self, MAX_ENGINE_BYTES};
use xq_coordinator::store::{Store, now_ms};
use xq_engine::rules::RuleSet;
use xq_proto::{Coords, EngineRef, Protocol};
use xq_worker::engine_cache;
use xq_worker::external::{EngineConfig, ExternalEngine, Timeouts};

/// `engine …`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

#[derive(Debug, Subcommand)]
enum EngineCommand {
    /// Stores an engine executable in the registry under NAME, with the bench
    /// signature it prints (`PATH bench` must print `Nodes searched: N`) and
    /// the spin options it advertises (SPSA runs can tune those).
    Add {
        /// Registry name (1 to 64 characters), used by `--dev-engine`/`--base-engine`.
        name: String,
        /// The executable.
        path: PathBuf,
        /// The coordinator's database.
        #[arg(long, default_value = "xq.db")]
        db: PathBuf,
        /// Protocol the engine speaks: uci or ucci.
        #[arg(long, default_value = "uci")]
        protocol: String,
        /// An option set after the handshake, `NAME=VALUE` (repeatable).
        #[arg(long = "option")]
        options: Vec<String>,
        /// How the engine numbers ranks: 0-9 (UCCI, ElephantEye, Pikafish) or
        /// 1-10 (Fairy-Stockfish, Sjaak II); detected at each handshake when absent.
        #[arg(long)]
        coords: Option<Coords>,
        /// Seconds `PATH bench` may take.
        #[arg(long, default_value_t = 300)]
        bench_timeout: u64,
    },
    /// Lists the registered engines.
    List {
        #[arg(long, default_value = "xq.db")]
        db: PathBuf,
    },
}

impl EngineArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            EngineCommand::Add {
                name,
                path,
                db,
                protocol,
                options,
                coords,
                bench_timeout,
            } => {
                if name.is_empty() || name.chars().count() > 64 {
                    bail!("bad engine name {name:?}: it must be 1 to 64 characters");
                }
                let Some(protocol) = Protocol::parse(&protocol) else {
                    bail!("unknown protocol {protocol:?}; expected uci or ucci")
                };
                let options = options
                    .iter()
                    .map(|o| match o.split_once('=') {
                        Some((n, v)) => Ok((n.trim().to_owned(), v.trim().to_owned())),
                        None => bail!("bad engine option {o:?}: expected NAME=VALUE"),
                    })
                    .collect::<anyhow::Result<BTreeMap<_, _>>>()?;
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("cannot read engine {}", path.display()))?;
                if bytes.len() > MAX_ENGINE_BYTES {
                    bail!(
                        "engine {} is {} bytes; the registry takes at most {MAX_ENGINE_BYTES}",
                        path.display(),
                        bytes.len()
                    );
                }
                let signature =
                    engine_cache::bench_signature(&path, Duration::from_secs(bench_timeout))?;
                let spins = advertised_spins(&path, protocol, Duration::from_secs(bench_timeout))?;
                let engine = EngineRef {
                    name,
                    sha256: engine_cache::sha256_hex(&bytes),
                    size: bytes.len() as u64,
                    signature,
                    protocol,
                    options,
                    coords,
                };
                let config = EngineConfig {
                    path: path.clone(),
                    args: Vec::new(),
                    protocol,
                    options: engine
                        .options
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    timeouts: Timeouts::default(),
                    coords,
                };
                let session = ExternalEngine::start(&config, &RuleSet::STANDARD)
                    .map(|e| e.session().clone())
                    .with_context(|| format!("engine {} fails its handshake", path.display()))?;
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let runtime = tokio::runtime::Runtime::new()?;
                let added = engine.clone();
                let stored = spins.clone();
                runtime.block_on(store.call(move |conn| {
                    engines::add(conn, &added, &stored, &bytes, now_ms())?;
                    engines::set_variants(conn, &added.name, session.offered_variants.as_deref())
                }))?;
                println!(
                    "{} sha256 {} size {} signature {} spin options {}",
                    engine.name,
                    engine.sha256,
                    engine.size,
                    engine.signature,
                    spins.len()
                );
            }
            EngineCommand::List { db } => {
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let runtime = tokio::runtime::Runtime::new()?;
                for (e, _) in runtime.block_on(store.call(|conn| engines::list(conn)))? {
                    println!(
                        "{}\t{}\t{} bytes\tsignature {}\t{:?}\tcoords {}",
                        e.name,
                        e.sha256,
                        e.size,
                        e.signature,
                        e.protocol,
                        e.coords.map_or("detected", Coords::name)
                    );
                }
            }
        }
        Ok(())
    }
}

/// The spin options `path` advertises: it is sent the protocol's hello and
/// `quit`, and its answer is read until it exits (within `timeout`).
fn advertised_spins(
    path: &std::path::Path,
    protocol: Protocol,
    timeout: Duration,
) -> anyhow::Result<Vec<SpinOption>> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", path.display()))?;
    let hello = protocol.name();
    if let Some(mut stdin) = child.stdin.take() {
        // An engine that exits early closes the pipe; its answer still counts.
        let _ = writeln!(stdin, "{hello}\nquit");
    }
    let mut stdout = child.stdout.take().context("no pipe from the engine")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let deadline = std::time::Instant::now() + timeout;
    while child.try_wait()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "'{}' did not answer '{hello}' and 'quit' within {} s",
                path.display(),
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let answer = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the engine's output reader panicked"))?;
    Ok(spin_options::parse(&answer))
}
