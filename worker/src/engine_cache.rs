//! The worker's cache of registered engine executables: `<dir>/<sha256>`.
//!
//! A file is written under a temporary name, checked against its SHA-256, made
//! executable and only then renamed into place, so a present file is always a
//! complete, verified copy.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `$XDG_CACHE_HOME/xq-engines`, else `$HOME/.cache/xq-engines`, else a folder
/// in the system temp dir.
pub fn default_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("xq-engines")
}

/// Where the engine with this SHA-256 lives in `dir`.
pub fn path(dir: &Path, sha256: &str) -> PathBuf {
    dir.join(sha256)
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a download could not be cached.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("downloaded engine has SHA-256 {got}, expected {want}")]
    Digest { want: String, got: String },
    #[error("cannot write the engine cache at '{path}': {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Stores `bytes` as the engine `sha256` in `dir` after checking the digest;
/// returns its path.
pub fn store(dir: &Path, sha256: &str, bytes: &[u8]) -> Result<PathBuf, CacheError> {
    let got = sha256_hex(bytes);
    if got != sha256 {
        return Err(CacheError::Digest {
            want: sha256.to_string(),
            got,
        });
    }
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| CacheError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let final_path = path(dir, sha256);
    let tmp = dir.join(format!("{sha256}.part{}", std::process::id()));
    let mut file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io(&tmp))?;
    drop(file);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).map_err(io(&tmp))?;
    }
    std::fs::rename(&tmp, &final_path).map_err(io(&final_path))?;
    Ok(final_path)
}

/// Whether a verified copy of `sha256` is in `dir`.
pub fn has(dir: &Path, sha256: &str) -> bool {
    std::fs::read(path(dir, sha256)).is_ok_and(|b| sha256_hex(&b) == sha256)
}

/// Runs `<path> bench` and returns the `Nodes searched` count it prints, on
/// stdout (`xq-engine`: `Nodes searched: N`) or stderr (Stockfish-family
/// engines such as Fairy-Stockfish and Pikafish: `Nodes searched  : N`).
pub fn bench_signature(path: &Path, timeout: std::time::Duration) -> anyhow::Result<u64> {
    use anyhow::Context;
    let dir = std::env::temp_dir().join(format!(
        "xq-bench-{}-{}",
        std::process::id(),
        BENCH_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = std::process::Command::new(path)
        .arg("bench")
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .spawn()
        .with_context(|| format!("cannot run '{} bench'", path.display()))?;
    let deadline = std::time::Instant::now() + timeout;
    let finished = loop {
        if child.try_wait()?.is_some() {
            break true;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let text = read(&out_path).unwrap_or_default() + &read(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    if !finished {
        anyhow::bail!(
            "'{} bench' took longer than {} s",
            path.display(),
            timeout.as_secs()
        );
    }
    parse_nodes_searched(&text).with_context(|| {
        format!(
            "'{} bench' printed no 'Nodes searched: N' line",
            path.display()
        )
    })
}

/// Distinguishes concurrent bench runs' output files.
static BENCH_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The count of the last `Nodes searched <spaces>: N` line.
fn parse_nodes_searched(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| {
        let rest = l.trim_start().strip_prefix("Nodes searched")?;
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
    }

    #[test]
    fn stores_only_verified_copies() {
        let dir = std::env::temp_dir().join(format!("xq-cache-test-{}", std::process::id()));
        let bytes = b"#!/bin/sh\necho hi\n";
        let sha = sha256_hex(bytes);
        assert_eq!(sha.len(), 64);
        let bad = store(&dir, &"0".repeat(64), bytes);
        assert!(matches!(bad, Err(CacheError::Digest { .. })));
        assert!(!has(&dir, &sha));
        let p = store(&dir, &sha, bytes).unwrap();
        assert_eq!(p, path(&dir, &sha));
        assert!(has(&dir, &sha));
        let _ = std::fs::remove_dir_all(dir);
    }
}
