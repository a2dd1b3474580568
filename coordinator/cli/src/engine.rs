//! `xq-coordinator engine add|list`: the engine registry, on the database file.
//!
//! Adding an engine needs write access to the coordinator's database, which only
//! its administrator has; workers download registered engines by SHA-256.
//! An engine name may hold an untagged executable and builds tagged with the
//! ARCH value they need (`--arch x86-64-avx2`): each worker takes the best
//! build its machine runs. Every build of a name shares its protocol,
//! options and bench signature; a build this machine cannot run is not
//! benched here, so its signature is stated (`--signature N`) and the
//! workers check it on first use.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::spin_options::{self, SpinOption};
use xq_coordinator::store::{Store, now_ms};
use xq_coordinator::store::{assets, blobs, engines};
use xq_engine::rules::RuleSet;
use xq_proto::Machine;
use xq_proto::blob::MAX_BLOB_BYTES;
use xq_proto::outln;
use xq_proto::{Arch, Coords, EngineBinary, EngineRef, Protocol};
use xq_worker::blob_cache;
use xq_worker::external::{EngineConfig, ExternalEngine, Session, Timeouts};

/// `engine …`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

#[derive(Debug, Subcommand)]
enum EngineCommand {
    /// Stores an engine executable in the registry under NAME, with the bench
    /// signature it prints (`PATH bench` must print `Nodes searched: N`; with
    /// options naming assets, UCI `bench` with those set; `--no-bench` for
    /// none) and the spin options it advertises (SPSA runs can tune those).
    /// Given a NAME registered already, adds PATH as another build of it
    /// (`--arch`): the same protocol, options and bench signature, which it
    /// keeps unless they are given again.
    Add {
        /// Registry name (1 to 64 characters), used by `--dev-engine`/`--base-engine`.
        name: String,
        /// The executable.
        path: PathBuf,
        /// The coordinator's database.
        #[arg(long, default_value = "xq.db")]
        db: PathBuf,
        /// The ARCH value the build needs, as Stockfish's and Pikafish's
        /// Makefiles name them: x86-64-avx512icl, x86-64-vnni512,
        /// x86-64-avx512, x86-64-avxvnni, x86-64-bmi2, x86-64-avx2,
        /// x86-64-sse41-popcnt, x86-64-ssse3, x86-64-sse3-popcnt, x86-64,
        /// armv8-dotprod, armv8. Only workers whose machine runs it take it.
        /// Absent: the untagged executable, which any worker may take.
        #[arg(long)]
        arch: Option<Arch>,
        /// Protocol the engine speaks: uci or ucci (default uci; a build of
        /// a registered engine keeps the engine's).
        #[arg(long)]
        protocol: Option<String>,
        /// An option set after the handshake, `NAME=VALUE` (repeatable). A
        /// value `asset:NAME` or `asset:SHA256` names a registered asset
        /// (`xq-coordinator asset add`): workers set the path of their cached
        /// copy, e.g. `--option EvalFile=asset:pikafish.nnue`.
        #[arg(long = "option")]
        options: Vec<String>,
        /// How the engine numbers ranks: 0-9 (UCCI, ElephantEye, Pikafish) or
        /// 1-10 (Fairy-Stockfish, Sjaak II); detected at each handshake when absent.
        #[arg(long)]
        coords: Option<Coords>,
        /// Seconds `PATH bench` may take.
        #[arg(long, default_value_t = 300)]
        bench_timeout: u64,
        /// Register without a bench signature, for an engine that prints no
        /// bench count (Sjaak II, ElephantEye): workers check the
        /// executable's SHA-256 only, not its build's search.
        #[arg(long)]
        no_bench: bool,
        /// The bench signature (`Nodes searched`), stated: needed for a build
        /// this machine cannot run (workers check it on first use);
        /// otherwise the bench here must agree with it.
        #[arg(long, value_name = "N", conflicts_with = "no_bench")]
        signature: Option<u64>,
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
                arch,
                protocol,
                options,
                coords,
                bench_timeout,
                no_bench,
                signature,
            } => {
                let added = Addition {
                    name,
                    path,
                    arch,
                    protocol,
                    options,
                    coords,
                    bench_timeout: Duration::from_secs(bench_timeout),
                    no_bench,
                    signature,
                };
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                added.run(&store)?;
            }
            EngineCommand::List { db } => {
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let runtime = tokio::runtime::Runtime::new()?;
                for (e, _) in runtime.block_on(store.call(|conn| engines::list(conn)))? {
                    let builds = std::iter::once(("untagged", e.sha256.as_str(), e.size))
                        .filter(|_| e.has_untagged())
                        .chain(
                            e.binaries
                                .iter()
                                .map(|b| (b.arch.name(), b.sha256.as_str(), b.size)),
                        );
                    for (arch, sha256, size) in builds {
                        outln!(
                            "{}\t{arch}\t{sha256}\t{size} bytes\tsignature {}\t{:?}\tcoords {}",
                            e.name,
                            e.signature_text(),
                            e.protocol,
                            e.coords.map_or("detected", Coords::name)
                        )?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// An executable to register, as `engine add` was given it.
struct Addition {
    name: String,
    path: PathBuf,
    arch: Option<Arch>,
    protocol: Option<String>,
    options: Vec<String>,
    coords: Option<Coords>,
    bench_timeout: Duration,
    no_bench: bool,
    signature: Option<u64>,
}

impl Addition {
    /// Benches and shakes hands with the executable when this machine runs
    /// it, then registers it ([`engines::add`]): a new engine, or a build of
    /// the registered one, whose settings it takes unless they are given.
    fn run(self, store: &Store) -> anyhow::Result<()> {
        let name = self.name.clone();
        if name.is_empty() || name.chars().count() > 64 {
            bail!("bad engine name {name:?}: it must be 1 to 64 characters");
        }
        let runtime = tokio::runtime::Runtime::new()?;
        let lookup = name.clone();
        let stored = runtime.block_on(store.call(move |conn| engines::get(conn, &lookup)))?;
        let protocol = match (&self.protocol, &stored) {
            (Some(p), _) => Protocol::parse(p)
                .with_context(|| format!("unknown protocol {p:?}; expected uci or ucci"))?,
            (None, Some(e)) => e.protocol,
            (None, None) => Protocol::Uci,
        };
        let options = match &stored {
            Some(e) if self.options.is_empty() => e.options.clone(),
            _ => parse_options(&self.options, store, &runtime)?,
        };
        let coords = self.coords.or(stored.as_ref().and_then(|e| e.coords));
        let path = &self.path;
        let (sha256, size) = std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .and_then(xq_proto::blob::sha256_of_reader)
            .with_context(|| format!("cannot read engine {}", path.display()))?;
        if size > MAX_BLOB_BYTES {
            bail!(
                "engine {} is {size} bytes; the registry takes at most {MAX_BLOB_BYTES}",
                path.display()
            );
        }
        let mut engine = EngineRef {
            name,
            sha256: String::new(),
            size: 0,
            signature: None,
            protocol,
            options,
            coords,
            binaries: Vec::new(),
            source: None,
        };
        match self.arch {
            None => (engine.sha256, engine.size) = (sha256.clone(), size),
            Some(arch) => engine.binaries.push(EngineBinary {
                arch,
                sha256: sha256.clone(),
                size,
            }),
        }
        let machine = xq_worker::machine::detect();
        let runs_here = self.arch.is_none_or(|a| machine.runs(a));
        // The assets the options name, copied out of the registry (and
        // verified) so that the engine is benched and shaken hands with
        // exactly what workers will give it.
        let assets = AssetDir::new()?;
        if runs_here {
            for (option, sha) in engine.asset_options() {
                let what = format!("asset {option}=asset:{sha}");
                assets.extract(store, &runtime, sha, &what)?;
            }
        }
        engine.signature = self.signature(&engine, &assets, &machine)?;
        let (spins, session) = if runs_here {
            let (spins, session) = self.probe(&engine, &assets)?;
            (spins, Some(session))
        } else {
            (Vec::new(), None)
        };
        let added = engine.clone();
        let stored_spins = spins.clone();
        let source = std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .with_context(|| format!("cannot read engine {}", path.display()))?;
        runtime.block_on(store.call(move |conn| {
            let what = engines::add(conn, &added, &stored_spins, source, now_ms())?;
            if let (engines::Added::Engine, Some(session)) = (what, session) {
                engines::set_variants(conn, &added.name, session.offered_variants.as_deref())?;
            }
            Ok(())
        }))?;
        let arch = self.arch.map_or_else(String::new, |a| format!(" arch {a}"));
        outln!(
            "{}{arch} sha256 {} size {} signature {} spin options {}",
            engine.name,
            sha256,
            size,
            engine.signature_text(),
            spins.len()
        )?;
        Ok(())
    }
}

impl Addition {
    /// The bench signature to register: none with `--no-bench`; measured
    /// here when `machine` runs the build (and equal to a stated one);
    /// else the stated one, which is then required.
    fn signature(
        &self,
        engine: &EngineRef,
        assets: &AssetDir,
        machine: &Machine,
    ) -> anyhow::Result<Option<u64>> {
        if self.no_bench {
            return Ok(None);
        }
        if let Some(arch) = self.arch.filter(|a| !machine.runs(*a)) {
            let Some(stated) = self.signature else {
                bail!(
                    "this machine ({}, flags {}) cannot run an {arch} build, so it cannot bench \
                     it: state its bench signature with --signature N (workers check it on first \
                     use) or register it with --no-bench",
                    machine.isa,
                    machine.flags,
                );
            };
            return Ok(Some(stated));
        }
        let measured = blob_cache::bench_signature(
            &self.path,
            engine.protocol,
            &blob_cache::asset_paths(&assets.0, engine),
            self.bench_timeout,
        )?;
        if let Some(stated) = self.signature.filter(|s| *s != measured) {
            bail!(
                "{} benches {measured} nodes here, not the stated {stated}",
                self.path.display()
            );
        }
        Ok(Some(measured))
    }

    /// The spin options the executable advertises and its handshake's
    /// session (which `UCI_Variant`s it offers).
    fn probe(
        &self,
        engine: &EngineRef,
        assets: &AssetDir,
    ) -> anyhow::Result<(Vec<SpinOption>, Session)> {
        let path = &self.path;
        let spins = advertised_spins(path, engine.protocol, self.bench_timeout)?;
        let config = EngineConfig {
            path: path.clone(),
            args: Vec::new(),
            protocol: engine.protocol,
            options: blob_cache::options_with_paths(&assets.0, engine),
            timeouts: Timeouts::default(),
            coords: engine.coords,
        };
        let session = ExternalEngine::start(&config, &RuleSet::STANDARD)
            .map(|e| e.session().clone())
            .with_context(|| format!("engine {} fails its handshake", path.display()))?;
        Ok((spins, session))
    }
}

/// `NAME=VALUE` options; a value `asset:NAME` or `asset:SHA256` is resolved
/// to `asset:SHA256` of a registered asset (an unknown one is refused, named).
fn parse_options(
    list: &[String],
    store: &Store,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut options = BTreeMap::new();
    for o in list {
        let Some((name, value)) = o.split_once('=') else {
            bail!("bad engine option {o:?}: expected NAME=VALUE");
        };
        let (name, mut value) = (name.trim().to_owned(), value.trim().to_owned());
        if name.is_empty() {
            bail!("bad engine option {o:?}: the option has no name");
        }
        if let Some(reference) = xq_proto::blob::asset_reference(&value) {
            let reference = reference.to_owned();
            let sha = runtime
                .block_on(store.call(move |conn| assets::resolve(conn, &reference)))
                .with_context(|| format!("engine option {o:?}"))?;
            value = format!("{}{sha}", xq_proto::blob::ASSET_PREFIX);
        }
        options.insert(name, value);
    }
    Ok(options)
}

/// A temporary folder laid out like a worker's blob cache, removed on drop.
struct AssetDir(PathBuf);

impl AssetDir {
    fn new() -> anyhow::Result<AssetDir> {
        static DIRS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "xq-engine-add-{}-{}",
            std::process::id(),
            DIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
        Ok(AssetDir(dir))
    }

    /// Copies the stored blob `sha256` (described as `what`) here, checking
    /// its digest as it is written.
    fn extract(
        &self,
        store: &Store,
        runtime: &tokio::runtime::Runtime,
        sha256: &str,
        what: &str,
    ) -> anyhow::Result<()> {
        let mut download = blob_cache::Download::begin(&self.0, sha256, what)?;
        let sha = sha256.to_owned();
        let size = runtime
            .block_on(store.call(move |conn| blobs::size(conn, &sha)))?
            .with_context(|| format!("{what} is not registered"))?;
        for seq in 0..xq_proto::blob::chunk_count(size) {
            let sha = sha256.to_owned();
            let data = runtime
                .block_on(store.call(move |conn| blobs::chunk(conn, &sha, seq)))?
                .with_context(|| format!("{what}: the registry lacks its chunk {seq}"))?;
            download.push(&data, size)?;
        }
        if size == 0 {
            download.push(&[], 0)?;
        }
        download.finish(false)?;
        Ok(())
    }
}

impl Drop for AssetDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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
