//! `xq-coordinator engine add|list`: the engine registry, on the database
//! file or at a served coordinator (the rule: [`Place::choose`]).
//!
//! Either way the engine is handshaken and benched here first, with the
//! assets its options name (copied out of the registry or downloaded from
//! the coordinator and verified), so it is registered with exactly the
//! signature, spin options and `UCI_Variant` values workers will see; a
//! worker checks the signature on first use. Remotely the executable is
//! then uploaded (streamed, hashed first) and registered as the user of the
//! personal token.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::events::Actor;
use xq_coordinator::spin_options::{self, SpinOption};
use xq_coordinator::store::engines::{Entry, NewEngine};
use xq_coordinator::store::{Store, now_ms};
use xq_coordinator::store::{assets, blobs, engines, users};
use xq_engine::rules::RuleSet;
use xq_proto::blob::{MAX_BLOB_BYTES, MAX_UPLOAD_BYTES};
use xq_proto::outln;
use xq_proto::{Coords, EngineRef, Protocol, pb};
use xq_worker::blob_cache;
use xq_worker::external::{EngineConfig, ExternalEngine, Timeouts};

use super::registry::{Coordinator, Place};
use super::remote::Remote;

/// `engine …`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

/// Where a command works: `--db FILE`, or a coordinator (`--coordinator`,
/// `--token`, a stored login); see [`Place::choose`].
#[derive(Debug, Args)]
struct PlaceArgs {
    /// The coordinator's database file: work on it (no server needed).
    /// Without `--db`, `--coordinator`, `--token` or a stored login: xq.db.
    #[arg(long, conflicts_with = "coordinator")]
    db: Option<PathBuf>,
    #[command(flatten)]
    remote: Remote,
}

#[derive(Debug, Subcommand)]
enum EngineCommand {
    /// Registers an engine executable under NAME, with the bench signature
    /// it prints here (`PATH bench` must print `Nodes searched: N`; with
    /// options naming assets, UCI `bench` with those set; `--no-bench` for
    /// none) and the spin options it advertises (SPSA runs can tune those).
    /// At a coordinator the executable is uploaded and the name is yours:
    /// nobody registers it again.
    Add {
        /// Registry name (1 to 64 characters), used by `--dev-engine`/`--base-engine`.
        name: String,
        /// The executable.
        path: PathBuf,
        #[command(flatten)]
        place: PlaceArgs,
        /// On the database file: the user the engine belongs to (default:
        /// `admin`, made if there is none). At a coordinator it is yours.
        #[arg(long)]
        user: Option<String>,
        /// Protocol the engine speaks: uci or ucci.
        #[arg(long, default_value = "uci")]
        protocol: String,
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
    },
    /// Lists the registered engines: name, SHA-256, size, signature,
    /// protocol, coordinates, owner.
    List {
        #[command(flatten)]
        place: PlaceArgs,
    },
}

impl EngineArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            EngineCommand::Add {
                name,
                path,
                place,
                user,
                protocol,
                options,
                coords,
                bench_timeout,
                no_bench,
            } => {
                if name.is_empty() || name.chars().count() > 64 {
                    bail!("bad engine name {name:?}: it must be 1 to 64 characters");
                }
                let Some(protocol) = Protocol::parse(&protocol) else {
                    bail!("unknown protocol {protocol:?}; expected uci or ucci")
                };
                let mut registry = Registry::open(Place::choose(place.db, &place.remote)?)?;
                if user.is_some() && matches!(registry, Registry::Remote(_)) {
                    bail!(
                        "--user works only on the database file; at a coordinator the engine is yours"
                    );
                }
                // Names are never overwritten: no bench or upload for a taken one.
                if let Some(taken) = registry.list()?.into_iter().find(|e| e.engine.name == name) {
                    bail!(
                        "an engine named '{name}' exists already, registered by {} (sha256 {}); \
                         names are never overwritten: pick another",
                        taken.owner.as_deref().unwrap_or("nobody"),
                        taken.engine.sha256
                    );
                }
                let (sha256, size) = std::fs::File::open(&path)
                    .map(std::io::BufReader::new)
                    .and_then(xq_proto::blob::sha256_of_reader)
                    .with_context(|| format!("cannot read engine {}", path.display()))?;
                let most = registry.most_bytes();
                if size > most {
                    bail!(
                        "engine {} is {size} bytes; the registry takes at most {most}",
                        path.display()
                    );
                }
                let engine = EngineRef {
                    name,
                    sha256,
                    size,
                    signature: None,
                    protocol,
                    options: parse_options(&options, &mut registry)?,
                    coords,
                };
                let bench_timeout = Duration::from_secs(bench_timeout);
                let new = measure(&path, engine, &mut registry, bench_timeout, no_bench)?;
                let spins = new.spins.len();
                let entry = registry.add(&path, new, user)?;
                let e = &entry.engine;
                outln!(
                    "{} sha256 {} size {} signature {} spin options {spins}",
                    e.name,
                    e.sha256,
                    e.size,
                    e.signature_text(),
                )?;
            }
            EngineCommand::List { place } => {
                let mut registry = Registry::open(Place::choose(place.db, &place.remote)?)?;
                for Entry {
                    engine: e,
                    owner,
                    created_ms: _,
                } in registry.list()?
                {
                    outln!(
                        "{}\t{}\t{} bytes\tsignature {}\t{:?}\tcoords {}\towner {}",
                        e.name,
                        e.sha256,
                        e.size,
                        e.signature_text(),
                        e.protocol,
                        e.coords.map_or("detected", Coords::name),
                        owner.as_deref().unwrap_or("-")
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// The engine registry an `engine` command works on.
enum Registry {
    File {
        store: Store,
        runtime: tokio::runtime::Runtime,
    },
    Remote(Box<Coordinator>),
}

impl Registry {
    fn open(place: Place) -> anyhow::Result<Registry> {
        Ok(match place {
            Place::File(db) => Registry::File {
                store: Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?,
                runtime: tokio::runtime::Runtime::new()?,
            },
            Place::Remote(coordinator) => Registry::Remote(coordinator),
        })
    }

    /// The largest executable it takes, in bytes.
    fn most_bytes(&self) -> u64 {
        match self {
            Registry::File { .. } => MAX_BLOB_BYTES,
            Registry::Remote(_) => MAX_UPLOAD_BYTES,
        }
    }

    /// The SHA-256 of the registered asset `reference` (a name or a SHA-256).
    fn asset_sha256(&mut self, reference: &str) -> anyhow::Result<String> {
        match self {
            Registry::File { store, runtime } => {
                let reference = reference.to_owned();
                Ok(runtime.block_on(store.call(move |conn| assets::resolve(conn, &reference)))?)
            }
            Registry::Remote(coordinator) => coordinator.asset_sha256(reference),
        }
    }

    /// Copies the registered blob `sha256` (described as `what`) into the
    /// folder `dir`, checking its digest as it is written.
    fn fetch(&mut self, dir: &Path, sha256: &str, what: &str) -> anyhow::Result<()> {
        let (store, runtime) = match self {
            Registry::Remote(coordinator) => return coordinator.download(dir, sha256, what),
            Registry::File { store, runtime } => (store, runtime),
        };
        let mut download = blob_cache::Download::begin(dir, sha256, what)?;
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

    /// Registers `new`, whose executable is at `path`: on the file for
    /// `user` (default `admin`), logged as the command line's; remotely
    /// uploaded first and registered as the token's user.
    fn add(&mut self, path: &Path, new: NewEngine, user: Option<String>) -> anyhow::Result<Entry> {
        match self {
            Registry::File { store, runtime } => {
                let source = std::fs::File::open(path)
                    .map(std::io::BufReader::new)
                    .with_context(|| format!("cannot read engine {}", path.display()))?;
                Ok(runtime.block_on(store.call(move |conn| {
                    let tx = conn.transaction()?;
                    let owner = users::named_or_admin(&tx, user.as_deref(), now_ms())?;
                    let entry = engines::add(&tx, &new, source, owner, &Actor::cli(), now_ms())?;
                    tx.commit()?;
                    Ok(entry)
                }))?)
            }
            Registry::Remote(coordinator) => {
                let what = format!("engine '{}'", new.engine.name);
                let (sha256, size) = (new.engine.sha256.clone(), new.engine.size);
                if coordinator.upload(path, &sha256, size, &what)? {
                    eprintln!("{what}: {} had its executable already", coordinator.url);
                }
                let request = pb::AddEngineRequest::from(new);
                let answer = coordinator
                    .call(|mut c| async move { c.add_engine(request).await })
                    .with_context(|| format!("cannot register {what} at {}", coordinator.url))?;
                let entry = answer
                    .engine
                    .context("the coordinator answered without the engine")?;
                Ok(Entry::try_from(entry)?)
            }
        }
    }

    fn list(&mut self) -> anyhow::Result<Vec<Entry>> {
        match self {
            Registry::File { store, runtime } => {
                Ok(runtime.block_on(store.call(|conn| engines::list(conn)))?)
            }
            Registry::Remote(coordinator) => {
                let url = coordinator.url.clone();
                let answer = coordinator
                    .call(|mut c| async move { c.list_engines(pb::ListEnginesRequest {}).await })
                    .with_context(|| format!("cannot list the engines of {url}"))?;
                Ok(answer
                    .engines
                    .into_iter()
                    .map(Entry::try_from)
                    .collect::<Result<_, _>>()?)
            }
        }
    }
}

/// `NAME=VALUE` options; a value `asset:NAME` or `asset:SHA256` is resolved
/// to `asset:SHA256` of a registered asset (an unknown one is refused, named).
fn parse_options(
    list: &[String],
    registry: &mut Registry,
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
            let sha = registry
                .asset_sha256(reference)
                .with_context(|| format!("engine option {o:?}"))?;
            value = format!("{}{sha}", xq_proto::blob::ASSET_PREFIX);
        }
        options.insert(name, value);
    }
    Ok(options)
}

/// Benches `engine` at `path` (unless `no_bench`) with the assets its
/// options name, fetched into a temporary folder laid out as a worker's
/// cache, reads the spin options it advertises and handshakes with it: what
/// to register.
fn measure(
    path: &Path,
    mut engine: EngineRef,
    registry: &mut Registry,
    bench_timeout: Duration,
    no_bench: bool,
) -> anyhow::Result<NewEngine> {
    let assets = AssetDir::new()?;
    for (option, sha) in engine.asset_options() {
        let what = format!("asset {option}=asset:{sha}");
        registry.fetch(&assets.0, sha, &what)?;
    }
    if !no_bench {
        engine.signature = Some(blob_cache::bench_signature(
            path,
            engine.protocol,
            &blob_cache::asset_paths(&assets.0, &engine),
            bench_timeout,
        )?);
    }
    let spins = advertised_spins(path, engine.protocol, bench_timeout)?;
    let config = EngineConfig {
        path: path.to_owned(),
        args: Vec::new(),
        protocol: engine.protocol,
        options: blob_cache::options_with_paths(&assets.0, &engine),
        timeouts: Timeouts::default(),
        coords: engine.coords,
    };
    let session = ExternalEngine::start(&config, &RuleSet::STANDARD)
        .map(|e| e.session().clone())
        .with_context(|| format!("engine {} fails its handshake", path.display()))?;
    Ok(NewEngine {
        engine,
        spins,
        variants: session.offered_variants,
    })
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
