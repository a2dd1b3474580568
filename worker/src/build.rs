//! Engines built from a git commit: a lease's source engine fetched with
//! the real `git`, built by its own command, and put into the blob cache
//! under the SHA-256 of the executable, after which it is played like a
//! registered engine (benched, and played only if the bench matches).
//!
//! # The build cache (`<dir>`, by default `$XDG_CACHE_HOME/xq-builds`)
//!
//! - `repos/<hash of the URL>.git`: one bare repository per URL. A commit
//!   is fetched by its id (`git fetch URL COMMIT`, which GitHub and local
//!   repositories serve), else with every branch and tag; a ref
//!   `refs/xq/<commit>` keeps it.
//! - `work/<key>-…`: a fresh checkout of the commit for one build (a new
//!   repository that reads the bare one's objects), removed afterwards.
//! - `built/<key>`: the SHA-256 and size of what a build made. A build is
//!   made once per commit, build command, ARCH and executable path (the
//!   key, [`cache_key`]); a later lease finds this record and the
//!   executable in the blob cache and builds nothing.
//! - `logs/<key>.log`: the last build's output (git's and the command's).
//!
//! The build command runs as `sh -c <build>` in the checkout's root, with
//! `ARCH` set to [`BuildConfig::arch`], in a process group of its own that
//! is killed whole when it outlives [`BuildConfig::timeout`] (git's steps
//! count against the same limit) or the lease is lost. git runs without a
//! terminal to prompt on and with only the repository's own transport
//! (`GIT_ALLOW_PROTOCOL`). Building runs the author's code with the
//! worker's rights: see the coordinator's SECURITY.md.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use xq_proto::EngineSource;
use xq_proto::blob;
use xq_proto::engine_source::{BUILD_TOOLS, MAX_BUILD_REASON_BYTES, MAX_LOG_TAIL_BYTES, log_tail};

use crate::blob_cache;

/// Default time limit of a build, git's steps included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How this worker builds source engines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildConfig {
    /// The build cache (see the module docs).
    pub dir: PathBuf,
    /// Longest build, git's steps included.
    pub timeout: Duration,
    /// The `ARCH` value builds get: the best instruction set this machine
    /// runs, in the Stockfish/Pikafish Makefile's words (`x86-64-avx2`,
    /// `armv8-dotprod`, …): the client sets its machine's best
    /// ([`xq_proto::Machine::best_arch`]), else the plain one of the CPU
    /// family ([`default_arch`]).
    pub arch: String,
    /// The tools on PATH, reported at registration (names of
    /// [`BUILD_TOOLS`]); empty: this worker builds nothing.
    pub tools: BTreeSet<String>,
}

impl BuildConfig {
    /// The default cache, time limit and ARCH, with the tools found on PATH.
    pub fn detect() -> BuildConfig {
        BuildConfig {
            dir: default_dir(),
            timeout: DEFAULT_TIMEOUT,
            arch: default_arch(),
            tools: tools_on_path(std::env::var_os("PATH").as_deref()),
        }
    }

    /// [`BuildConfig::detect`] with no tools: a worker that builds nothing
    /// (`--no-build`), and so gets no lease of a run with a source engine.
    pub fn none() -> BuildConfig {
        BuildConfig {
            tools: BTreeSet::new(),
            ..BuildConfig::detect()
        }
    }
}

/// `$XDG_CACHE_HOME/xq-builds`, else `$HOME/.cache/xq-builds`, else a folder
/// in the system temp dir (beside the blob cache's `xq-engines`).
pub fn default_dir() -> PathBuf {
    blob_cache::default_dir().with_file_name("xq-builds")
}

/// The `ARCH` value a build gets on `machine`: the best one it runs
/// ([`xq_proto::Machine::best_arch`]), else the plain one of this CPU family
/// ([`default_arch`]).
pub fn arch_for(machine: Option<&xq_proto::Machine>) -> String {
    machine
        .and_then(xq_proto::Machine::best_arch)
        .map_or_else(default_arch, |a| a.name().to_owned())
}

/// The plain `ARCH` value of this CPU family in the Stockfish/Pikafish
/// Makefile's words: `x86-64` on x86_64, `armv8` on aarch64, else Rust's
/// name of the architecture.
pub fn default_arch() -> String {
    match std::env::consts::ARCH {
        "x86_64" => "x86-64",
        "aarch64" => "armv8",
        other => other,
    }
    .to_owned()
}

/// Which of [`BUILD_TOOLS`] are executable files in the directories of
/// `path` (a `PATH` value).
pub fn tools_on_path(path: Option<&std::ffi::OsStr>) -> BTreeSet<String> {
    let dirs: Vec<PathBuf> = path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    BUILD_TOOLS
        .iter()
        .filter(|tool| dirs.iter().any(|d| is_executable(&d.join(tool))))
        .map(|t| (*t).to_owned())
        .collect()
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// The key of a build: 32 hex digits of the SHA-256 of its commit, build
/// command, ARCH and executable path. Builds with equal keys make the same
/// executable, so one is made.
pub fn cache_key(source: &EngineSource, arch: &str) -> String {
    let text = format!(
        "commit {}\nbuild {}\narch {arch}\nbinary {}\n",
        source.commit, source.build, source.binary
    );
    blob::sha256_hex(text.as_bytes())[..32].to_owned()
}

/// A source engine's executable, in the blob cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub sha256: String,
    pub size: u64,
    /// Found in the build cache: nothing was fetched or built.
    pub cached: bool,
}

/// Why there is no executable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The build failed: `reason` in one line, and the end of its output.
    #[error("{reason}")]
    Failed { reason: String, log_tail: String },
    /// The build was stopped: the lease was lost or the worker shuts down.
    #[error("the build was cancelled")]
    Cancelled,
}

fn failed(reason: impl Into<String>, log: &Log) -> BuildError {
    BuildError::Failed {
        reason: one_line(&reason.into()),
        log_tail: log.tail(),
    }
}

/// `text` as a failure's reason: control characters left out, cut at a
/// character boundary to at most [`MAX_BUILD_REASON_BYTES`] bytes.
fn one_line(text: &str) -> String {
    let mut line = String::new();
    for c in text.chars().filter(|c| !c.is_control()) {
        if line.len() + c.len_utf8() > MAX_BUILD_REASON_BYTES {
            break;
        }
        line.push(c);
    }
    line
}

/// The output of one build, written to `logs/<key>.log`.
struct Log {
    path: PathBuf,
    file: std::fs::File,
}

impl Log {
    fn create(path: PathBuf) -> std::io::Result<Log> {
        let file = std::fs::File::create(&path)?;
        Ok(Log { path, file })
    }

    /// A line of the build's own (the step about to run).
    fn note(&mut self, line: &str) {
        let _ = writeln!(self.file, "$ {line}");
    }

    /// A handle the next step writes its stdout and stderr to.
    fn stdio(&self) -> std::io::Result<(Stdio, Stdio)> {
        Ok((self.file.try_clone()?.into(), self.file.try_clone()?.into()))
    }

    /// The last [`MAX_LOG_TAIL_BYTES`] of the log, as text.
    fn tail(&self) -> String {
        let read = || -> std::io::Result<Vec<u8>> {
            let mut f = std::fs::File::open(&self.path)?;
            let len = f.metadata()?.len();
            f.seek(SeekFrom::Start(
                len.saturating_sub(MAX_LOG_TAIL_BYTES as u64 + 4),
            ))?;
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)?;
            Ok(bytes)
        };
        log_tail(&read().unwrap_or_default(), MAX_LOG_TAIL_BYTES)
    }
}

/// A deadline shared by a build's steps, and the flag that cancels them.
struct Limits<'a> {
    deadline: Instant,
    timeout: Duration,
    cancel: &'a AtomicBool,
}

/// Distinguishes the build directories of one process.
static BUILDS: AtomicU64 = AtomicU64::new(0);

/// The executable `source` builds on this machine, in the blob cache
/// `blobs`: found in the build cache, or fetched, checked out, built and
/// copied there (see the module docs). `cancel` stops a build in progress.
/// Blocking: call it off the async threads.
pub fn build(
    config: &BuildConfig,
    source: &EngineSource,
    blobs: &Path,
    cancel: &AtomicBool,
) -> Result<Built, BuildError> {
    let key = cache_key(source, &config.arch);
    for sub in ["repos", "work", "built", "logs"] {
        xq_proto::private::create_dir_all(&config.dir.join(sub))
            .map_err(|e| io_failure("cannot make the build cache", &config.dir, e))?;
    }
    let _key_lock = lock(&config.dir.join("built").join(format!("{key}.lock")))?;
    let record = config.dir.join("built").join(&key);
    if let Some(built) = read_record(&record, blobs) {
        return Ok(built);
    }
    let mut log = Log::create(config.dir.join("logs").join(format!("{key}.log")))
        .map_err(|e| io_failure("cannot write the build log", &config.dir, e))?;
    let missing: Vec<&str> = source
        .tools()
        .into_iter()
        .filter(|t| !config.tools.contains(*t))
        .collect();
    if !missing.is_empty() {
        return Err(failed(
            format!("this worker lacks {}", missing.join(", ")),
            &log,
        ));
    }
    let limits = Limits {
        deadline: Instant::now() + config.timeout,
        timeout: config.timeout,
        cancel,
    };
    let work = config.dir.join("work").join(format!(
        "{key}-{}-{}",
        std::process::id(),
        BUILDS.fetch_add(1, Ordering::Relaxed)
    ));
    let made = checkout(config, source, &work, &mut log, &limits)
        .and_then(|()| run_build(config, source, &work, &mut log, &limits))
        .and_then(|()| keep_executable(source, &work, blobs, &log));
    let _ = std::fs::remove_dir_all(&work);
    let (sha256, size) = made?;
    let text = format!("{sha256} {size}\n");
    xq_proto::atomic_file::write(&record, text.as_bytes())
        .map_err(|e| io_failure("cannot record the build", &record, e))?;
    Ok(Built {
        sha256,
        size,
        cached: false,
    })
}

fn io_failure(what: &str, path: &Path, e: std::io::Error) -> BuildError {
    BuildError::Failed {
        reason: one_line(&format!("{what} at {}: {e}", path.display())),
        log_tail: String::new(),
    }
}

/// An exclusive lock on `path` (created if needed), held until dropped: two
/// worker processes sharing a cache build one key, or fetch into one
/// repository, one after the other.
fn lock(path: &Path) -> Result<std::fs::File, BuildError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| io_failure("cannot lock the build cache", path, e))?;
    file.lock()
        .map_err(|e| io_failure("cannot lock the build cache", path, e))?;
    Ok(file)
}

/// A recorded build whose executable is still in the blob cache.
fn read_record(record: &Path, blobs: &Path) -> Option<Built> {
    let text = std::fs::read_to_string(record).ok()?;
    let (sha256, size) = text.trim().split_once(' ')?;
    let size = size.parse().ok()?;
    (xq_proto::is_sha256_hex(sha256) && blob_cache::has(blobs, sha256)).then(|| Built {
        sha256: sha256.to_owned(),
        size,
        cached: true,
    })
}

/// One step of a build: what the log shows before it runs, and what a
/// failure calls it.
struct Step<'a> {
    note: &'a str,
    name: &'a str,
}

/// Runs `command` with the build's log as its output, until it exits, the
/// deadline passes (its process group is killed) or the build is cancelled.
fn run_step(
    mut command: Command,
    step: Step<'_>,
    log: &mut Log,
    limits: &Limits<'_>,
) -> Result<(), BuildError> {
    log.note(step.note);
    let name = step.name;
    let (out, err) = log
        .stdio()
        .map_err(|e| failed(format!("cannot write the build log: {e}"), log))?;
    command.stdin(Stdio::null()).stdout(out).stderr(err);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| failed(format!("cannot run {name}: {e}"), log))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(failed(format!("cannot wait for {name}: {e}"), log)),
        }
        let cancelled = limits.cancel.load(Ordering::Relaxed);
        if cancelled || Instant::now() > limits.deadline {
            kill_group(&mut child);
            if cancelled {
                return Err(BuildError::Cancelled);
            }
            let secs = limits.timeout.as_secs();
            log.note(&format!("killed: the build took longer than {secs} s"));
            return Err(failed(
                format!("the build timed out after {secs} s (in {name})"),
                log,
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        return Ok(());
    }
    Err(failed(format!("{name} failed ({status})"), log))
}

/// Kills the child and everything it started (its process group).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let _ = rustix::process::kill_process_group(
            rustix::process::Pid::from_child(child),
            rustix::process::Signal::KILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `git` with the environment every step uses: no prompts, only the
/// repository's own transport.
fn git(source: &EngineSource) -> Command {
    let mut command = Command::new("git");
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", source.scheme())
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
    command
}

/// Fetches the commit into the URL's bare repository (unless it is there)
/// and checks it out into `work`.
fn checkout(
    config: &BuildConfig,
    source: &EngineSource,
    work: &Path,
    log: &mut Log,
    limits: &Limits<'_>,
) -> Result<(), BuildError> {
    let name = &blob::sha256_hex(source.repo.as_bytes())[..16];
    let bare = config.dir.join("repos").join(format!("{name}.git"));
    let _repo_lock = lock(&config.dir.join("repos").join(format!("{name}.lock")))?;
    let commit = source.commit.as_str();
    let in_bare = || {
        let mut command = git(source);
        command.arg("--git-dir").arg(&bare);
        command
    };
    if !bare.join("HEAD").exists() {
        let mut init = git(source);
        init.args(["init", "--quiet", "--bare"]).arg(&bare);
        let step = Step {
            note: "git init --bare",
            name: "git init",
        };
        run_step(init, step, log, limits)?;
    }
    let has_commit = |log: &mut Log| {
        let mut cat = in_bare();
        cat.args(["cat-file", "-e", &format!("{commit}^{{commit}}")]);
        let step = Step {
            note: &format!("git cat-file -e {commit} (is it here?)"),
            name: "git cat-file",
        };
        run_step(cat, step, log, limits)
    };
    if has_commit(log).is_err() {
        let mut by_id = in_bare();
        by_id.args(["fetch", "--quiet", "--no-tags", "--", &source.repo, commit]);
        let note = format!("git fetch {} {commit}", source.repo);
        let fetched = run_step(
            by_id,
            Step {
                note: &note,
                name: "git fetch",
            },
            log,
            limits,
        );
        if fetched == Err(BuildError::Cancelled) {
            return fetched;
        }
        if fetched.is_err() || has_commit(log).is_err() {
            let mut all = in_bare();
            all.args([
                "fetch",
                "--quiet",
                "--",
                &source.repo,
                "+refs/heads/*:refs/remotes/origin/*",
                "+refs/tags/*:refs/tags/*",
            ]);
            let note = format!("git fetch {} (every branch and tag)", source.repo);
            run_step(
                all,
                Step {
                    note: &note,
                    name: "git fetch",
                },
                log,
                limits,
            )?;
            if has_commit(log).is_err() {
                return Err(failed(
                    format!("{} has no commit {commit}", source.repo),
                    log,
                ));
            }
        }
        let mut keep = in_bare();
        keep.args(["update-ref", &format!("refs/xq/{commit}"), commit]);
        let step = Step {
            note: &format!("git update-ref refs/xq/{commit}"),
            name: "git update-ref",
        };
        run_step(keep, step, log, limits)?;
    }
    let mut init = git(source);
    init.args(["init", "--quiet", "--"]).arg(work);
    let step = Step {
        note: "git init (a fresh build directory, reading the cache's objects)",
        name: "git init",
    };
    run_step(init, step, log, limits)?;
    let objects = bare.join("objects").canonicalize();
    objects
        .and_then(|o| {
            let alternates = work.join(".git/objects/info/alternates");
            std::fs::write(alternates, format!("{}\n", o.display()))
        })
        .map_err(|e| failed(format!("cannot share the cache's objects: {e}"), log))?;
    let mut switch = git(source);
    switch
        .arg("-C")
        .arg(work)
        .args(["checkout", "--quiet", "--detach", commit]);
    let note = format!("git checkout {commit}");
    run_step(
        switch,
        Step {
            note: &note,
            name: "git checkout",
        },
        log,
        limits,
    )
}

/// Runs the build command in the checkout, with `ARCH` set.
fn run_build(
    config: &BuildConfig,
    source: &EngineSource,
    work: &Path,
    log: &mut Log,
    limits: &Limits<'_>,
) -> Result<(), BuildError> {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(&source.build)
        .current_dir(work)
        .env("ARCH", &config.arch);
    let note = format!("ARCH={} sh -c {:?}", config.arch, source.build);
    let step = Step {
        note: &note,
        name: "the build command",
    };
    run_step(command, step, log, limits)
}

/// Copies the built executable into the blob cache (hashed as it is
/// written); returns its SHA-256 and size. The executable must be a file
/// inside the checkout.
fn keep_executable(
    source: &EngineSource,
    work: &Path,
    blobs: &Path,
    log: &Log,
) -> Result<(String, u64), BuildError> {
    let path = work.join(&source.binary);
    let inside = match (path.canonicalize(), work.canonicalize()) {
        (Ok(p), Ok(w)) => p.starts_with(w) && p.is_file(),
        _ => false,
    };
    if !inside {
        return Err(failed(
            format!("the build left no executable at {}", source.binary),
            log,
        ));
    }
    let copy = || -> Result<(String, u64), String> {
        let (sha256, size) = std::fs::File::open(&path)
            .and_then(blob::sha256_of_reader)
            .map_err(|e| e.to_string())?;
        if blob_cache::has(blobs, &sha256) {
            return Ok((sha256, size));
        }
        let what = format!("the engine built from {}", source.label());
        let mut download =
            blob_cache::Download::begin(blobs, &sha256, what).map_err(|e| e.to_string())?;
        let mut file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; blob::BLOB_CHUNK_BYTES];
        loop {
            let n = file.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            download.push(&buf[..n], size).map_err(|e| e.to_string())?;
        }
        if size == 0 {
            download.push(&[], 0).map_err(|e| e.to_string())?;
        }
        download.finish(true).map_err(|e| e.to_string())?;
        Ok((sha256, size))
    };
    copy().map_err(|e| {
        failed(
            format!("cannot copy {} into the engine cache: {e}", source.binary),
            log,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(build: &str) -> EngineSource {
        EngineSource {
            repo: "file:///src/engine".to_owned(),
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            git_ref: Some("main".to_owned()),
            build: build.to_owned(),
            binary: "engine".to_owned(),
            needs: Vec::new(),
        }
    }

    #[test]
    fn the_cache_key_changes_with_commit_command_arch_and_binary_only() {
        let a = source("make");
        let key = cache_key(&a, "x86-64");
        assert_eq!(key.len(), 32);
        assert_eq!(key, cache_key(&a, "x86-64"), "stable");
        let other_ref = EngineSource {
            git_ref: Some("feature".to_owned()),
            repo: "https://mirror.example/engine.git".to_owned(),
            needs: vec!["make".to_owned()],
            ..a.clone()
        };
        assert_eq!(
            key,
            cache_key(&other_ref, "x86-64"),
            "same commit, same build"
        );
        assert_ne!(key, cache_key(&a, "x86-64-avx2"));
        assert_ne!(key, cache_key(&source("make -j4"), "x86-64"));
        let other_commit = EngineSource {
            commit: "f".repeat(40),
            ..a.clone()
        };
        assert_ne!(key, cache_key(&other_commit, "x86-64"));
        let other_binary = EngineSource {
            binary: "bin/engine".to_owned(),
            ..a
        };
        assert_ne!(key, cache_key(&other_binary, "x86-64"));
    }

    #[test]
    fn tools_are_found_on_the_path_only_when_executable() {
        let dir = std::env::temp_dir().join(format!("xq-tools-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("make"), "#!/bin/sh\n").unwrap();
        std::fs::write(dir.join("g++"), "not executable").unwrap();
        std::fs::write(dir.join("rm"), "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        for name in ["make", "rm"] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let path = std::env::join_paths([dir.clone(), dir.join("missing")]).unwrap();
        let tools = tools_on_path(Some(&path));
        assert_eq!(tools.into_iter().collect::<Vec<_>>(), ["make"]);
        assert!(tools_on_path(None).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A temporary folder, removed on drop.
    struct Temp(PathBuf);

    impl Temp {
        fn new(tag: &str) -> Temp {
            static N: AtomicU64 = AtomicU64::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let dir =
                std::env::temp_dir().join(format!("xq-build-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Temp(dir)
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn git_in(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A repository with one commit holding `file`; returns its URL and the commit.
    fn repo(at: &Path, file: &str, text: &str) -> (String, String) {
        let src = at.join("src");
        std::fs::create_dir_all(&src).unwrap();
        git_in(&src, &["init", "--quiet", "-b", "main"]);
        std::fs::write(src.join(file), text).unwrap();
        git_in(&src, &["add", "."]);
        git_in(&src, &["commit", "--quiet", "-m", "c"]);
        (
            format!("file://{}", src.display()),
            git_in(&src, &["rev-parse", "HEAD"]),
        )
    }

    fn config(at: &Path) -> BuildConfig {
        BuildConfig {
            dir: at.join("builds"),
            timeout: Duration::from_secs(60),
            arch: "x86-64-test".to_owned(),
            tools: ["git".to_owned()].into(),
        }
    }

    #[test]
    fn a_commit_is_built_once_with_its_arch_and_kept_in_the_blob_cache() {
        let t = Temp::new("once");
        let (url, commit) = repo(&t.0, "engine.in", "#!/bin/sh\necho built\n");
        let marker = t.0.join("builds-run");
        let build = format!(
            "echo run >> {} && sed \"s/built/built for $ARCH/\" engine.in > engine && chmod +x engine",
            marker.display()
        );
        let src = EngineSource {
            repo: url,
            commit,
            git_ref: None,
            build,
            binary: "engine".to_owned(),
            needs: Vec::new(),
        };
        let (c, blobs) = (config(&t.0), t.0.join("blobs"));
        let no = AtomicBool::new(false);
        let first = super::build(&c, &src, &blobs, &no).unwrap();
        assert!(!first.cached);
        let exe = blob_cache::path(&blobs, &first.sha256);
        let out = Command::new(&exe).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "built for x86-64-test\n"
        );
        let second = super::build(&c, &src, &blobs, &no).unwrap();
        assert!(
            second.cached,
            "a second build of the same key is a cache hit"
        );
        assert_eq!(second.sha256, first.sha256);
        assert_eq!(
            std::fs::read_to_string(&marker).unwrap(),
            "run\n",
            "built once"
        );
        let other_arch = BuildConfig {
            arch: "x86-64-avx2".to_owned(),
            ..c
        };
        assert!(!super::build(&other_arch, &src, &blobs, &no).unwrap().cached);
        assert!(
            std::fs::read_dir(other_arch.dir.join("work"))
                .unwrap()
                .next()
                .is_none(),
            "build directories are removed"
        );
    }

    #[test]
    fn a_failed_build_tells_why_with_the_end_of_its_log() {
        let t = Temp::new("fail");
        let (url, commit) = repo(&t.0, "main.cpp", "int main() { return 0 }\n");
        let src = |build: &str, binary: &str| EngineSource {
            repo: url.clone(),
            commit: commit.clone(),
            git_ref: None,
            build: build.to_owned(),
            binary: binary.to_owned(),
            needs: Vec::new(),
        };
        let (c, blobs) = (config(&t.0), t.0.join("blobs"));
        let no = AtomicBool::new(false);
        let fail = |s: &EngineSource, c: &BuildConfig| match super::build(c, s, &blobs, &no) {
            Err(BuildError::Failed { reason, log_tail }) => (reason, log_tail),
            other => panic!("{other:?}"),
        };
        let (reason, log) = fail(
            &src(
                "echo compiling; echo 'main.cpp:1: error: expected ;' >&2; exit 3",
                "e",
            ),
            &c,
        );
        assert!(
            reason.contains("the build command failed") && reason.contains('3'),
            "{reason}"
        );
        assert!(
            log.contains("main.cpp:1: error: expected ;") && log.contains("compiling"),
            "{log}"
        );
        let (reason, _) = fail(&src("true", "e"), &c);
        assert!(reason.contains("no executable at e"), "{reason}");
        let (reason, _) = fail(&src("ln -s /bin/sh e", "e"), &c);
        assert!(
            reason.contains("no executable at e"),
            "a link out of the checkout: {reason}"
        );
        let missing = EngineSource {
            commit: "f".repeat(40),
            ..src("true", "e")
        };
        let (reason, log) = fail(&missing, &c);
        assert!(reason.contains("has no commit"), "{reason}\n{log}");
        let (reason, _) = fail(&src("make", "e"), &c);
        assert_eq!(reason, "this worker lacks make");
        let nothing = BuildConfig {
            tools: BTreeSet::new(),
            ..c.clone()
        };
        let (reason, _) = fail(&src("true", "e"), &nothing);
        assert_eq!(reason, "this worker lacks git");
    }

    #[test]
    fn a_build_past_its_time_limit_is_killed_with_everything_it_started() {
        let t = Temp::new("slow");
        let (url, commit) = repo(&t.0, "x", "x");
        let pid_file = t.0.join("child.pid");
        let src = EngineSource {
            repo: url,
            commit,
            git_ref: None,
            build: format!("sleep 60 & echo $! > {}; wait", pid_file.display()),
            binary: "e".to_owned(),
            needs: Vec::new(),
        };
        let c = BuildConfig {
            timeout: Duration::from_secs(2),
            ..config(&t.0)
        };
        let start = Instant::now();
        let no = AtomicBool::new(false);
        match super::build(&c, &src, &t.0.join("blobs"), &no) {
            Err(BuildError::Failed { reason, log_tail }) => {
                assert!(reason.contains("timed out after 2 s"), "{reason}");
                assert!(log_tail.contains("killed"), "{log_tail}");
            }
            other => panic!("{other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(20));
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Dead, or a zombie no one reaped (its parent, the shell, was killed).
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        let running = stat.is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        });
        assert!(
            !running,
            "the build's background process {} was killed too",
            pid.trim()
        );
        let cancel = AtomicBool::new(true);
        let src = EngineSource {
            build: "sleep 60".to_owned(),
            ..src
        };
        assert_eq!(
            super::build(&config(&t.0), &src, &t.0.join("blobs"), &cancel),
            Err(BuildError::Cancelled)
        );
    }

    #[test]
    fn the_default_arch_is_the_makefiles_plain_value() {
        let arch = default_arch();
        match std::env::consts::ARCH {
            "x86_64" => assert_eq!(arch, "x86-64"),
            "aarch64" => assert_eq!(arch, "armv8"),
            other => assert_eq!(arch, other),
        }
    }
}
