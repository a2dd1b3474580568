//! `xq-coordinator engine add|list`: the engine registry, on the database
//! file or at a served coordinator (the rule:
//! [`super::registry::Place::choose`]), through the registry service either
//! way.
//!
//! A name that is not the caller's, or that holds the build already, is
//! refused first. Then the engine is handshaken and benched here, with the
//! assets its options name (downloaded from the registry and verified), so
//! it is registered with exactly the signature, spin options and
//! `UCI_Variant` values workers will see; a worker checks the signature on
//! first use. The executable is then uploaded (streamed, hashed first) and
//! registered as the caller's: the token's user, or on the database file
//! `--user` (default `admin`).
//!
//! An engine name may hold an untagged executable and builds tagged with the
//! ARCH value they need (`--arch x86-64-avx2`): each worker takes the best
//! build its machine runs. Every build of a name shares its protocol,
//! options and bench signature and belongs to the name's owner; a build this
//! machine cannot run is not benched here, so its signature is stated
//! (`--signature N`) and the workers check it on first use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::in_process::Acting;
use xq_coordinator::service::registry::{Entry, NewEngine};
use xq_coordinator::spin_options::{self, SpinOption};
use xq_engine::rules::RuleSet;
use xq_proto::outln;
use xq_proto::{Arch, Coords, EngineBinary, EngineRef, Machine, Protocol, Signature, pb};
use xq_worker::blob_cache;
use xq_worker::external::{EngineConfig, ExternalEngine, Timeouts};

use super::registry::{Coordinator, PlaceArgs};
use xq_proto::blob::UploadPurpose;

/// `engine …`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

#[derive(Debug, Subcommand)]
enum EngineCommand {
    /// Registers an engine executable under NAME, with the bench signature
    /// it prints here (`PATH bench` must print `Nodes searched: N`; with
    /// options naming assets, UCI `bench` with those set; a fixed search's
    /// count with `--signature-depth D`; `--no-bench` for none) and the spin options it advertises (SPSA runs can tune those).
    /// At a coordinator the executable is uploaded and the name is yours:
    /// nobody else registers it or adds builds to it. Given a NAME you
    /// registered already, adds PATH as another build of it (`--arch`): the
    /// same protocol, options and bench signature, which it keeps unless
    /// they are given again.
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
        /// Register without a signature, for an engine that prints no
        /// bench count (Sjaak II, ElephantEye): workers check the
        /// executable's SHA-256 only, not its build's search.
        #[arg(long, conflicts_with = "signature_depth")]
        no_bench: bool,
        /// Sign the engine by a fixed search instead of its bench, for an
        /// engine without a bench command (ElephantEye): the nodes of `go
        /// depth D` from 4 fixed positions, measured here and by every
        /// worker (1 to 20).
        #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=20))]
        signature_depth: Option<u32>,
        /// The signature (a bench's count, or with --signature-depth the
        /// fixed search's), stated: required for a build this machine
        /// cannot run (workers check it on first use); else checked against
        /// the bench measured here.
        #[arg(long)]
        signature: Option<u64>,
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
                arch,
                protocol,
                options,
                coords,
                bench_timeout,
                no_bench,
                signature,
                signature_depth,
            } => {
                if name.is_empty() || name.chars().count() > 64 {
                    bail!("bad engine name {name:?}: it must be 1 to 64 characters");
                }
                let mut coordinator = place.place()?.connect(Acting::For(user))?;
                let adding = Adding {
                    name,
                    path,
                    arch,
                    protocol,
                    options,
                    coords,
                };
                let declared = match (no_bench, signature_depth) {
                    (true, _) => Declared::None,
                    (false, None) => Declared::Bench(signature),
                    (false, Some(depth)) => Declared::Search { depth, signature },
                };
                adding.run(
                    &mut coordinator,
                    Duration::from_secs(bench_timeout),
                    declared,
                )
            }
            EngineCommand::List { place } => {
                let coordinator = place.place()?.connect(Acting::Administrator)?;
                for entry in list(&coordinator)? {
                    print_builds(&entry)?;
                }
                Ok(())
            }
        }
    }
}

/// `engine add`'s engine, as its flags give it.
struct Adding {
    name: String,
    path: PathBuf,
    arch: Option<Arch>,
    protocol: Option<String>,
    options: Vec<String>,
    coords: Option<Coords>,
}

impl Adding {
    /// Checks the name (its owner, the build it would add) before anything
    /// is benched or uploaded, then measures the engine's `declared`
    /// signature (`PATH bench` or the fixed search, within
    /// `bench_timeout`), uploads it and registers it.
    fn run(
        self,
        coordinator: &mut Coordinator,
        bench_timeout: Duration,
        declared: Declared,
    ) -> anyhow::Result<()> {
        let Adding {
            name,
            path,
            arch,
            protocol,
            options,
            coords,
        } = self;
        let stored = list(coordinator)?
            .into_iter()
            .find(|e| e.engine.name == name);
        if let Some(taken) = &stored {
            refuse_taken(coordinator, taken, arch)?;
        }
        let stored = stored.map(|e| e.engine);
        let protocol = match (&protocol, &stored) {
            (Some(p), _) => Protocol::parse(p)
                .with_context(|| format!("unknown protocol {p:?}; expected uci or ucci"))?,
            (None, Some(e)) => e.protocol,
            (None, None) => Protocol::Uci,
        };
        let options = match &stored {
            Some(e) if options.is_empty() => e.options.clone(),
            _ => parse_options(&options, coordinator)?,
        };
        let coords = coords.or(stored.as_ref().and_then(|e| e.coords));
        let (sha256, size) = std::fs::File::open(&path)
            .map(std::io::BufReader::new)
            .and_then(xq_proto::blob::sha256_of_reader)
            .with_context(|| format!("cannot read engine {}", path.display()))?;
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
        match arch {
            None => (engine.sha256, engine.size) = (sha256.clone(), size),
            Some(arch) => engine.binaries.push(EngineBinary {
                arch,
                sha256: sha256.clone(),
                size,
            }),
        }
        let measuring = Measuring {
            path: &path,
            arch,
            bench_timeout,
            declared,
            machine: xq_worker::machine::detect(),
        };
        let new = measuring.measure(engine, coordinator)?;
        let spins = new.spins.len();
        let what = format!("engine '{}'", new.engine.name);
        if coordinator.upload(
            &path,
            &sha256,
            size,
            UploadPurpose::Engine(new.engine.name.clone()),
            &what,
        )? {
            eprintln!("{what}: {} had its executable already", coordinator.url);
        }
        let request = pb::AddEngineRequest::from(new);
        let entry = coordinator
            .block_on(coordinator.registry().add_engine(request))
            .with_context(|| format!("cannot register {what} in {}", coordinator.url))?
            .into_inner()
            .engine
            .context("the coordinator answered without the engine")?;
        let e = Entry::try_from(entry)?.engine;
        outln!(
            "{}{} sha256 {sha256} size {size} signature {} spin options {spins}",
            e.name,
            arch.map_or_else(String::new, |a| format!(" arch {a}")),
            e.signature_text(),
        )?;
        Ok(())
    }
}

/// Refuses, before any bench or upload, a build for a name that is not the
/// caller's or that holds this build already: names are never overwritten
/// and executables never replaced (the registry refuses both).
fn refuse_taken(
    coordinator: &Coordinator,
    taken: &Entry,
    arch: Option<Arch>,
) -> anyhow::Result<()> {
    let e = &taken.engine;
    let by = taken.owner.as_deref().unwrap_or("nobody");
    if taken.owner.as_deref() != Some(coordinator.me()?.as_str()) {
        bail!(
            "an engine named '{}' exists already, registered by {by}; names are never \
             overwritten and only their owner adds builds to them: pick another",
            e.name
        );
    }
    let held = match arch {
        None => e.has_untagged().then_some(e.sha256.as_str()),
        Some(a) => e
            .binaries
            .iter()
            .find(|b| b.arch == a)
            .map(|b| b.sha256.as_str()),
    };
    if let Some(sha) = held {
        bail!(
            "engine '{}' (registered by {by}) has {} executable already \
             (sha256 {sha}); executables are never replaced: pick another name \
             or another --arch",
            e.name,
            arch.map_or_else(|| "an untagged".to_owned(), |a| format!("an {a}"))
        );
    }
    Ok(())
}

/// The registered engines.
fn list(coordinator: &Coordinator) -> anyhow::Result<Vec<Entry>> {
    let answer = coordinator
        .block_on(
            coordinator
                .registry()
                .list_engines(pb::ListEnginesRequest {}),
        )
        .with_context(|| format!("cannot list the engines of {}", coordinator.url))?;
    Ok(answer
        .into_inner()
        .engines
        .into_iter()
        .map(Entry::try_from)
        .collect::<Result<_, _>>()?)
}

/// `engine list`'s lines for one engine: one per build.
fn print_builds(entry: &Entry) -> anyhow::Result<()> {
    let Entry {
        engine: e,
        owner,
        created_ms: _,
    } = entry;
    let builds = std::iter::once(("untagged", e.sha256.as_str(), e.size))
        .filter(|_| e.has_untagged())
        .chain(
            e.binaries
                .iter()
                .map(|b| (b.arch.name(), b.sha256.as_str(), b.size)),
        );
    for (arch, sha256, size) in builds {
        outln!(
            "{}\t{arch}\t{sha256}\t{size} bytes\tsignature {}\t{:?}\tcoords {}\towner {}",
            e.name,
            e.signature_text(),
            e.protocol,
            e.coords.map_or("detected", Coords::name),
            owner.as_deref().unwrap_or("-")
        )?;
    }
    Ok(())
}

/// `NAME=VALUE` options; a value `asset:NAME` or `asset:SHA256` is resolved
/// to `asset:SHA256` of a registered asset (an unknown one is refused, named).
fn parse_options(
    list: &[String],
    coordinator: &mut Coordinator,
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
            let sha = coordinator
                .asset_sha256(reference)
                .with_context(|| format!("engine option {o:?}"))?;
            value = format!("{}{sha}", xq_proto::blob::ASSET_PREFIX);
        }
        options.insert(name, value);
    }
    Ok(options)
}

/// The signature `engine add` is told to register, declared once.
#[derive(Debug, Clone, Copy)]
enum Declared {
    /// `--no-bench`: none.
    None,
    /// Its bench's count, measured here, or stated (`--signature N`).
    Bench(Option<u64>),
    /// `--signature-depth D`: a fixed search's count, measured here, or
    /// stated.
    Search { depth: u32, signature: Option<u64> },
}

impl Declared {
    /// The count stated with `--signature`.
    fn stated(self) -> Option<u64> {
        match self {
            Declared::None => None,
            Declared::Bench(s) | Declared::Search { signature: s, .. } => s,
        }
    }

    /// `nodes` as a signature of this kind.
    fn signature(self, nodes: u64) -> Option<Signature> {
        match self {
            Declared::None => None,
            Declared::Bench(_) => Some(Signature::Bench(nodes)),
            Declared::Search { depth, .. } => Some(Signature::Search { depth, nodes }),
        }
    }
}

/// How `engine add` measures an executable before registering it.
struct Measuring<'a> {
    path: &'a Path,
    arch: Option<Arch>,
    bench_timeout: Duration,
    declared: Declared,
    /// This machine, which may not run a tagged build.
    machine: Machine,
}

impl Measuring<'_> {
    /// Benches `engine` and shakes hands with it here, with the assets its
    /// options name (downloaded from `coordinator` and verified), when this
    /// machine runs it: its signature, spin options and `UCI_Variant`
    /// values as workers will see them. A build this machine cannot run
    /// takes the stated signature and records neither.
    fn measure(
        &self,
        mut engine: EngineRef,
        coordinator: &mut Coordinator,
    ) -> anyhow::Result<NewEngine> {
        let runs_here = self.arch.is_none_or(|a| self.machine.runs(a));
        let assets = AssetDir::new()?;
        if runs_here {
            for (option, sha) in engine.asset_options() {
                let what = format!("asset {option}=asset:{sha}");
                coordinator.download(&assets.0, sha, &what)?;
            }
        }
        engine.signature = self.signature(&engine, &assets, runs_here)?;
        if !runs_here {
            return Ok(NewEngine {
                engine,
                spins: Vec::new(),
                variants: None,
            });
        }
        let spins = advertised_spins(self.path, engine.protocol, self.bench_timeout)?;
        let config = EngineConfig {
            path: self.path.to_owned(),
            args: Vec::new(),
            protocol: engine.protocol,
            options: blob_cache::options_with_paths(&assets.0, &engine),
            if_offered: Vec::new(),
            timeouts: Timeouts::default(),
            coords: engine.coords,
        };
        let session = ExternalEngine::start(&config, &RuleSet::STANDARD)
            .map(|e| e.session().clone())
            .with_context(|| format!("engine {} fails its handshake", self.path.display()))?;
        Ok(NewEngine {
            engine,
            spins,
            variants: session.offered_variants,
        })
    }

    /// The signature to register: none with `--no-bench`; measured here
    /// (by the bench, or the fixed search of `--signature-depth`) when this
    /// machine runs the build (and equal to a stated one); else the stated
    /// one, which is then required.
    fn signature(
        &self,
        engine: &EngineRef,
        assets: &AssetDir,
        runs_here: bool,
    ) -> anyhow::Result<Option<Signature>> {
        if let Declared::None = self.declared {
            return Ok(None);
        }
        if !runs_here {
            let Some(stated) = self.declared.stated() else {
                bail!(
                    "this machine ({}, flags {}) cannot run an {} build, so it cannot bench \
                     it: state its bench signature with --signature N (workers check it on first \
                     use) or register it with --no-bench",
                    self.machine.isa,
                    self.machine.flags,
                    self.arch.map_or("untagged", Arch::name),
                );
            };
            return Ok(self.declared.signature(stated));
        }
        let measured = match self.declared {
            Declared::Search { depth, .. } => {
                let config = EngineConfig {
                    path: self.path.to_owned(),
                    args: Vec::new(),
                    protocol: engine.protocol,
                    options: blob_cache::options_with_paths(&assets.0, engine),
                    if_offered: xq_worker::signature::fixed_search_options(),
                    timeouts: Timeouts::default(),
                    coords: engine.coords,
                };
                let never = std::sync::atomic::AtomicBool::new(false);
                xq_worker::signature::fixed_search(&config, depth, self.bench_timeout, &never)?
            }
            _ => blob_cache::bench_signature(
                self.path,
                engine.protocol,
                &blob_cache::asset_paths(&assets.0, engine),
                self.bench_timeout,
            )?,
        };
        if let Some(stated) = self.declared.stated().filter(|s| *s != measured) {
            bail!(
                "{} gives {measured} nodes here, not the stated {stated}",
                self.path.display()
            );
        }
        Ok(self.declared.signature(measured))
    }
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
