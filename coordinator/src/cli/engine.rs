//! `xq-coordinator engine add|list`: the engine registry, on the database file.
//!
//! Adding an engine needs write access to the coordinator's database, which only
//! its administrator has; workers download registered engines by SHA-256.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::store::engines::{self, MAX_ENGINE_BYTES};
use xq_coordinator::store::{Store, now_ms};
use xq_proto::EngineRef;
use xq_proto::Protocol;
use xq_worker::engine_cache;

/// `engine …`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

#[derive(Debug, Subcommand)]
enum EngineCommand {
    /// Stores an engine executable in the registry under NAME, with the bench
    /// signature it prints (`PATH bench` must print `Nodes searched: N`).
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
                let engine = EngineRef {
                    name,
                    sha256: engine_cache::sha256_hex(&bytes),
                    size: bytes.len() as u64,
                    signature,
                    protocol,
                    options,
                };
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let runtime = tokio::runtime::Runtime::new()?;
                let added = engine.clone();
                runtime.block_on(
                    store.call(move |conn| engines::add(conn, &added, &bytes, now_ms())),
                )?;
                println!(
                    "{} sha256 {} size {} signature {}",
                    engine.name, engine.sha256, engine.size, engine.signature
                );
            }
            EngineCommand::List { db } => {
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let runtime = tokio::runtime::Runtime::new()?;
                for (e, _) in runtime.block_on(store.call(|conn| engines::list(conn)))? {
                    println!(
                        "{}\t{}\t{} bytes\tsignature {}\t{:?}",
                        e.name, e.sha256, e.size, e.signature, e.protocol
                    );
                }
            }
        }
        Ok(())
    }
}
