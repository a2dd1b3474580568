//! Helpers for the end-to-end tests in `tests/tests/`.
//!
//! The tests start the workspace's real binaries. `cargo test` builds a
//! package's binaries only for that package's own integration tests, so the
//! first call of [`binary`] in a test process runs `cargo build --bins` for the
//! whole workspace, in the profile of the running test (cargo has released its
//! build lock by the time tests run). An up-to-date build costs well under a
//! second.

pub mod accounts;
pub mod bench_pair;
pub mod browser;
pub mod cluster;
pub mod docs;
pub mod engines;
pub mod invariants;
pub mod procs;
pub mod proxy;
pub mod scrape;
pub mod tools;
pub mod web;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The profile folder of the running test (`<target>/debug` or `<target>/release`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .expect("test executable lives in <target>/<profile>/deps")
}

/// Builds every workspace binary once per process; panics with cargo's output
/// if the build fails.
fn build_binaries() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = profile_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--workspace", "--bins", "--quiet"]);
        // Cargo gives test processes per-package variables; build scripts that
        // watch the environment (the C builds of ring and SQLite) would see
        // them as changes and rerun on every call.
        for (key, _) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("CARGO_PKG_")
                || k.starts_with("CARGO_MANIFEST_")
                || k.starts_with("CARGO_BIN_")
                || matches!(
                    &*k,
                    "CARGO_CRATE_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR"
                )
            {
                cmd.env_remove(&key);
            }
        }
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if let Some(target) = dir.parent() {
            cmd.arg("--target-dir").arg(target);
        }
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = cmd
            .current_dir(workspace.parent().unwrap_or(&workspace))
            .output()
            .expect("run cargo build");
        assert!(
            out.status.success(),
            "cargo build --workspace --bins failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// Path of a workspace binary (`xq-engine`, `xq-worker`, `xq-coordinator`) built
/// in the same profile as the running test, building it first if needed.
pub fn binary(name: &str) -> PathBuf {
    build_binaries();
    let mut path = profile_dir().join(name);
    if cfg!(windows) {
        path.set_extension("exe");
    }
    path
}

/// `xq-coordinator ARGS…`: its stdout. Panics with the arguments and the
/// command's stderr if it fails.
pub fn coordinator_cli<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let out = Command::new(binary("xq-coordinator"))
        .args(&args)
        .output()
        .expect("run xq-coordinator");
    assert!(
        out.status.success(),
        "xq-coordinator {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `xq-coordinator engine add NAME PATH EXTRA… --db DB`: its stdout.
pub fn engine_add(
    db: &std::path::Path,
    name: &str,
    path: &std::path::Path,
    extra: &[&str],
) -> String {
    let mut args: Vec<std::ffi::OsString> = vec!["engine".into(), "add".into(), name.into()];
    args.push(path.into());
    args.extend(extra.iter().map(Into::into));
    args.extend(["--db".into(), db.into()]);
    coordinator_cli(args)
}

/// `xq-coordinator pgn RUN` reading from `source` (`--db FILE` or
/// `--coordinator URL …`), writing `out`, with `extra` flags; the PGN it
/// wrote. Panics with the command's stderr if it fails.
pub fn pgn_from(source: &[&str], run: u64, out: &std::path::Path, extra: &[&str]) -> String {
    let mut args: Vec<std::ffi::OsString> = vec!["pgn".into(), run.to_string().into()];
    args.extend(source.iter().map(Into::into));
    args.extend(["--out".into(), out.into()]);
    args.extend(extra.iter().map(Into::into));
    coordinator_cli(args);
    std::fs::read_to_string(out).expect("pgn written")
}

/// [`pgn_from`] the database file `db`.
pub fn pgn_of_db(db: &std::path::Path, run: u64, out: &std::path::Path, extra: &[&str]) -> String {
    pgn_from(
        &["--db", db.to_str().expect("a UTF-8 path")],
        run,
        out,
        extra,
    )
}
