//! Helpers for the end-to-end tests in `tests/tests/`.
//!
//! The tests start the workspace's real binaries. `cargo test --workspace` builds every
//! binary before any test runs, so they are found next to the test executable's
//! `deps/` folder.

use std::path::PathBuf;

/// Path of a workspace binary (`xq-engine`, `xq-worker`, `xq-coordinator`) built in the
/// same profile as the running test.
///
/// # Panics
/// If the test executable's location cannot be read (only in a broken environment).
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable lives in <target>/<profile>/deps");
    let mut path = profile_dir.join(name);
    if cfg!(windows) {
        path.set_extension("exe");
    }
    path
}

pub mod cluster;
pub mod procs;
