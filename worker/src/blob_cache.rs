//! The worker's cache of the registry's content-addressed blobs (engine
//! executables and their assets: network files, opening books): `<dir>/<sha256>`.
//!
//! A download is written chunk by chunk under a temporary name while its
//! SHA-256 is computed, checked against the name it was asked for, and only
//! then renamed into place, so a present file is always a complete, verified
//! copy and no blob is ever held whole in memory.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use xq_proto::atomic_file::AtomicFile;
use xq_proto::blob::MAX_BLOB_BYTES;
use xq_proto::{EngineRef, Protocol, blob};

/// `$XDG_CACHE_HOME/xq-engines`, else `$HOME/.cache/xq-engines`, else a folder
/// in the system temp dir.
pub fn default_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("xq-engines")
}

/// Where the blob with this SHA-256 lives in `dir`.
pub fn path(dir: &Path, sha256: &str) -> PathBuf {
    dir.join(sha256)
}

/// Why a download could not be cached. `what` names the blob (`engine
/// 'fairy'`, `asset EvalFile=asset:… of engine 'pika'`, `opening book …`).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("downloaded {what} has SHA-256 {got}, expected {want}")]
    Digest {
        what: String,
        want: String,
        got: String,
    },
    #[error("downloaded {what} is {got} bytes, the registry says {want}")]
    Size { what: String, want: u64, got: u64 },
    #[error("{what} is {size} bytes; at most {MAX_BLOB_BYTES} are taken")]
    TooLarge { what: String, size: u64 },
    #[error("cannot write the blob cache at '{path}': {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + use<> {
    let path = path.display().to_string();
    move |source| CacheError::Io { path, source }
}

/// A download in progress: chunks appended to an [`AtomicFile`] beside the
/// blob's place and hashed. Dropped before [`Download::finish`], it leaves
/// nothing behind.
#[derive(Debug)]
pub struct Download {
    what: String,
    want: String,
    file: AtomicFile,
    hasher: Sha256,
    written: u64,
    size: Option<u64>,
}

impl Download {
    /// Starts the download of `sha256` (described as `what`) into `dir`.
    pub fn begin(
        dir: &Path,
        sha256: &str,
        what: impl Into<String>,
    ) -> Result<Download, CacheError> {
        xq_proto::private::create_dir_all(dir).map_err(io_error(dir))?;
        let dest = path(dir, sha256);
        let file = AtomicFile::create(&dest).map_err(io_error(&dest))?;
        Ok(Download {
            what: what.into(),
            want: sha256.to_owned(),
            file,
            hasher: Sha256::new(),
            written: 0,
            size: None,
        })
    }

    /// Appends a chunk of a blob whose whole size the sender gives as `size`
    /// (the same in every chunk; never more than [`MAX_BLOB_BYTES`]).
    pub fn push(&mut self, data: &[u8], size: u64) -> Result<(), CacheError> {
        if size > MAX_BLOB_BYTES {
            return Err(CacheError::TooLarge {
                what: self.what.clone(),
                size,
            });
        }
        let want = *self.size.get_or_insert(size);
        let written = self.written + data.len() as u64;
        if want != size || written > want {
            return Err(CacheError::Size {
                what: self.what.clone(),
                want,
                got: written.max(size),
            });
        }
        self.hasher.update(data);
        self.file
            .write_all(data)
            .map_err(io_error(self.file.dest()))?;
        self.written = written;
        Ok(())
    }

    /// Checks the size and digest, makes the file executable when
    /// `executable`, syncs it and moves it into place; returns its path.
    pub fn finish(self, executable: bool) -> Result<PathBuf, CacheError> {
        let want = self.size.unwrap_or(0);
        if self.written != want {
            return Err(CacheError::Size {
                what: self.what,
                want,
                got: self.written,
            });
        }
        let got = blob::lower_hex(&self.hasher.finalize());
        if got != self.want {
            return Err(CacheError::Digest {
                what: self.what,
                want: self.want,
                got,
            });
        }
        let mut file = self.file;
        let dest = file.dest().to_owned();
        #[cfg(unix)]
        if executable {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o755))
                .map_err(io_error(&dest))?;
        }
        #[cfg(not(unix))]
        let _ = executable;
        file.commit().map_err(io_error(&dest))?;
        Ok(dest)
    }
}

/// Stores `bytes` as the blob `sha256` in `dir` after checking the digest;
/// returns its path.
pub fn store(
    dir: &Path,
    sha256: &str,
    what: &str,
    bytes: &[u8],
    executable: bool,
) -> Result<PathBuf, CacheError> {
    let mut download = Download::begin(dir, sha256, what)?;
    for chunk in bytes.chunks(blob::BLOB_CHUNK_BYTES) {
        download.push(chunk, bytes.len() as u64)?;
    }
    if bytes.is_empty() {
        download.push(&[], 0)?;
    }
    download.finish(executable)
}

/// Whether a verified copy of `sha256` is in `dir` (the file is hashed in chunks).
pub fn has(dir: &Path, sha256: &str) -> bool {
    std::fs::File::open(path(dir, sha256))
        .and_then(blob::sha256_of_reader)
        .is_ok_and(|(got, _)| got == sha256)
}

/// `engine`'s options with every `asset:<sha256>` value replaced by the path
/// of its copy in `dir`, by option name.
pub fn options_with_paths(dir: &Path, engine: &EngineRef) -> Vec<(String, String)> {
    engine
        .options
        .iter()
        .map(|(k, v)| match blob::asset_sha256(v) {
            Some(sha) => (k.clone(), path(dir, sha).display().to_string()),
            None => (k.clone(), v.clone()),
        })
        .collect()
}

/// Only the options of `engine` that name assets, as paths in `dir` (what
/// its bench is measured with).
pub fn asset_paths(dir: &Path, engine: &EngineRef) -> Vec<(String, String)> {
    engine
        .asset_options()
        .map(|(k, sha)| (k.to_owned(), path(dir, sha).display().to_string()))
        .collect()
}

/// What an engine's bench printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchReport {
    /// `Nodes searched` (at least 1): the bench signature.
    pub nodes: u64,
    /// Its `Nodes/second` line (Stockfish family), else `nodes` over its
    /// `Total time (ms)`; `None` when it printed neither or said 0.
    pub nps: Option<u64>,
}

/// Why a bench gave no count.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// It did not finish within its time limit and was killed.
    #[error("bench timed out after {secs} s")]
    TimedOut { secs: u64 },
    /// The caller gave up on it (its lease was lost, or the worker stops).
    #[error("bench cancelled")]
    Cancelled,
    /// It could not run, or printed no usable count.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

/// The `Nodes searched` count (at least 1) of the engine at `path`'s bench
/// ([`bench`]).
pub fn bench_signature(
    path: &Path,
    protocol: Protocol,
    options: &[(String, String)],
    timeout: std::time::Duration,
) -> anyhow::Result<u64> {
    bench(path, protocol, options, timeout).map(|r| r.nodes)
}

/// Runs the engine at `path`'s bench and reads its `Nodes searched` count,
/// printed on stdout (`xq-engine`: `Nodes searched: N`) or stderr
/// (Stockfish-family engines such as Fairy-Stockfish and Pikafish: `Nodes
/// searched  : N`), and its speed.
///
/// Without `options` it runs `<path> bench`. With options (the ones that name
/// an asset, as paths: an engine's network changes its evaluation, so its
/// signature is measured with it) it speaks UCI: `uci`, a `setoption` per
/// option, `isready`, `bench`, `quit`.
pub fn bench(
    path: &Path,
    protocol: Protocol,
    options: &[(String, String)],
    timeout: std::time::Duration,
) -> anyhow::Result<BenchReport> {
    let never = std::sync::atomic::AtomicBool::new(false);
    Ok(bench_until(path, protocol, options, timeout, &never)?)
}

/// [`bench`], killed once `timeout` has passed ([`BenchError::TimedOut`]) or
/// `cancel` is set ([`BenchError::Cancelled`]), whichever comes first.
pub fn bench_until(
    path: &Path,
    protocol: Protocol,
    options: &[(String, String)],
    timeout: std::time::Duration,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<BenchReport, BenchError> {
    run_bench(path, protocol, options, timeout, cancel).map_err(|e| match e.downcast() {
        Ok(b) => b,
        Err(e) => BenchError::Failed(e),
    })
}

fn run_bench(
    path: &Path,
    protocol: Protocol,
    options: &[(String, String)],
    timeout: std::time::Duration,
    cancel: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<BenchReport> {
    use anyhow::Context;
    if !options.is_empty() && protocol != Protocol::Uci {
        anyhow::bail!(
            "'{}': an engine whose options name assets is benched through UCI's 'bench' \
             command, and it speaks {}",
            path.display(),
            protocol.name()
        );
    }
    let dir = std::env::temp_dir().join(format!(
        "xq-bench-{}-{}",
        std::process::id(),
        BENCH_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut command = std::process::Command::new(path);
    if options.is_empty() {
        command.arg("bench").stdin(std::process::Stdio::null());
    } else {
        command.stdin(std::process::Stdio::piped());
    }
    let mut child = command
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .spawn()
        .with_context(|| format!("cannot run '{}' to bench it", path.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let mut script = String::from("uci\n");
        for (name, value) in options {
            script += &format!("setoption name {name} value {value}\n");
        }
        script += "isready\nbench\nquit\n";
        // An engine that exits early closes the pipe; its output still tells.
        let _ = stdin.write_all(script.as_bytes());
    }
    let deadline = std::time::Instant::now() + timeout;
    let stopped = loop {
        if child.try_wait()?.is_some() {
            break None;
        }
        let cancelled = cancel.load(std::sync::atomic::Ordering::Relaxed);
        if cancelled || std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break Some(if cancelled {
                BenchError::Cancelled
            } else {
                BenchError::TimedOut {
                    secs: timeout.as_secs(),
                }
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let text = read(&out_path).unwrap_or_default() + &read(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(stopped) = stopped {
        return Err(stopped.into());
    }
    if !options.is_empty()
        && let Some(complaint) = text.lines().find(|l| complains(l))
    {
        anyhow::bail!(
            "'{}' refused its options ({}): {}",
            path.display(),
            options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
            complaint.trim()
        );
    }
    let nodes = parse_nodes_searched(&text).with_context(|| {
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        format!(
            "the bench of '{}' printed no 'Nodes searched: N' line (last lines: {:?}); \
             an engine without a bench count is signed by a fixed search or not at all",
            path.display(),
            tail
        )
    })?;
    if nodes == 0 {
        anyhow::bail!(
            "the bench of '{}' searched 0 nodes, which signs nothing",
            path.display()
        );
    }
    let nps = bench_field(&text, "Nodes/second")
        .or_else(|| {
            let ms = bench_field(&text, "Total time (ms)")?;
            (ms > 0).then(|| nodes.saturating_mul(1000) / ms)
        })
        .filter(|&n| n > 0);
    Ok(BenchReport { nodes, nps })
}

/// Whether an engine's output line reports an error (`info string error: …`
/// of xq-engine, `info string ERROR: …` or `ERROR: …` of the Stockfish family
/// when a network file does not load).
fn complains(line: &str) -> bool {
    let l = line.trim_start();
    let l = l.strip_prefix("info string").map_or(l, str::trim_start);
    l.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("error"))
        && l.get(5..).is_some_and(|rest| rest.starts_with([':', ' ']))
}

/// Distinguishes concurrent bench runs' output files.
static BENCH_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The count of the last `Nodes searched <spaces>: N` line.
fn parse_nodes_searched(text: &str) -> Option<u64> {
    bench_field(text, "Nodes searched")
}

/// The number of the last `NAME : N` line of a bench's output.
fn bench_field(text: &str, name: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| {
        let rest = l.trim_start().strip_prefix(name)?;
        rest.trim_start().strip_prefix(':')?.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_searched_in_either_spelling() {
        assert_eq!(parse_nodes_searched("x\nNodes searched: 12\n"), Some(12));
        assert_eq!(
            parse_nodes_searched(
                "Total time (ms) : 5\nNodes searched  : 4846400\nNodes/second    : 1"
            ),
            Some(4846400)
        );
        assert_eq!(parse_nodes_searched("Nodes searched: x\nnothing"), None);
        let stockfish =
            "Total time (ms) : 2000\nNodes searched  : 4846400\nNodes/second    : 2423200";
        assert_eq!(bench_field(stockfish, "Nodes/second"), Some(2_423_200));
        assert_eq!(bench_field(stockfish, "Total time (ms)"), Some(2000));
    }

    #[test]
    fn complaints_are_recognised() {
        assert!(complains("info string error: bad ParamFile 'x': no"));
        assert!(complains(
            "info string ERROR: The network file nn.nnue was not loaded"
        ));
        assert!(complains("ERROR: Network evaluation parameters compatible"));
        assert!(!complains("info depth 3 score cp 20 pv h2e2"));
        assert!(!complains("info string errors are fine to mention later"));
    }

    fn temp_dir(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("xq-cache-test-{tag}-{}", std::process::id()))
    }

    fn leftovers(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().contains(".part"))
            })
            .count()
        })
    }

    #[test]
    fn stores_only_verified_copies() {
        let dir = temp_dir("verified");
        let bytes = b"#!/bin/sh\necho hi\n";
        let sha = blob::sha256_hex(bytes);
        assert_eq!(sha.len(), 64);
        let bad = store(&dir, &"0".repeat(64), "engine 'x'", bytes, true);
        assert!(
            matches!(&bad, Err(CacheError::Digest { what, .. }) if what == "engine 'x'"),
            "{bad:?}"
        );
        assert!(bad.unwrap_err().to_string().contains("engine 'x'"));
        assert!(!has(&dir, &sha));
        let p = store(&dir, &sha, "engine 'x'", bytes, true).unwrap();
        assert_eq!(p, path(&dir, &sha));
        assert!(has(&dir, &sha));
        assert_eq!(leftovers(&dir), 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_chunked_download_is_hashed_as_it_is_written() {
        let dir = temp_dir("chunks");
        let bytes: Vec<u8> = (0..3 * blob::BLOB_CHUNK_BYTES + 17)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let sha = blob::sha256_hex(&bytes);
        assert_eq!(
            blob::sha256_of_reader(&bytes[..]).unwrap(),
            (sha.clone(), bytes.len() as u64)
        );
        let size = bytes.len() as u64;
        let mut d = Download::begin(&dir, &sha, "asset nn").unwrap();
        for c in bytes.chunks(blob::BLOB_CHUNK_BYTES) {
            d.push(c, size).unwrap();
        }
        assert_eq!(d.finish(false).unwrap(), path(&dir, &sha));
        assert!(has(&dir, &sha));

        // One flipped byte in one chunk: refused, nothing cached, no leftovers.
        let other = "1".repeat(64);
        let mut corrupt = bytes.clone();
        corrupt[blob::BLOB_CHUNK_BYTES + 5] ^= 1;
        let mut d = Download::begin(&dir, &sha, "asset nn").unwrap();
        std::fs::remove_file(path(&dir, &sha)).unwrap();
        for c in corrupt.chunks(blob::BLOB_CHUNK_BYTES) {
            d.push(c, size).unwrap();
        }
        let e = d.finish(false).unwrap_err().to_string();
        assert!(e.contains("asset nn") && e.contains(&sha), "{e}");
        assert!(!has(&dir, &sha));

        // Short, long and size-changing streams.
        let mut d = Download::begin(&dir, &other, "asset short").unwrap();
        d.push(&bytes[..10], size).unwrap();
        let e = d.finish(false).unwrap_err().to_string();
        assert!(e.contains("asset short is 10 bytes"), "{e}");
        let mut d = Download::begin(&dir, &other, "asset long").unwrap();
        assert!(d.push(&bytes[..10], 5).is_err());
        drop(d);
        let mut d = Download::begin(&dir, &other, "asset moving").unwrap();
        d.push(&bytes[..10], size).unwrap();
        assert!(d.push(&bytes[..10], size + 1).is_err());
        drop(d);
        let mut d = Download::begin(&dir, &other, "asset huge").unwrap();
        let e = d.push(&[], MAX_BLOB_BYTES + 1).unwrap_err().to_string();
        assert!(e.contains("asset huge"), "{e}");
        drop(d);
        assert_eq!(leftovers(&dir), 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// `xq_games::openings::OpeningBook::load` reads a book asset at this
    /// cache's layout, `<dir>/<sha256>`, without depending on this crate.
    #[test]
    fn an_opening_book_loads_from_its_cached_copy() {
        use xq_games::openings::OpeningBook;
        use xq_proto::OpeningSource;
        let dir = temp_dir("book");
        let text = b"4k4/9/9/9/9/9/9/9/4A4/3AK4 w - - 0 1\n";
        let sha256 = blob::sha256_hex(text);
        store(&dir, &sha256, "opening book", text, false).unwrap();
        let source = OpeningSource::Book {
            sha256,
            random_plies: 0,
        };
        let book = OpeningBook::load(&source, &dir).unwrap();
        assert!(matches!(book, OpeningBook::Lines { lines, .. } if lines.len() == 1));
        let _ = std::fs::remove_dir_all(dir);
    }
}
