//! The tools outside Cargo that some end-to-end tests run: a Python with the
//! packages of `tests/py/requirements.txt`, and `buf`. `tests/run` installs both
//! under the target folder, where these functions find them without any
//! environment variable; `XQ_PYTHON` and `XQ_BUF` name others.

use std::path::PathBuf;

/// The target folder of the running test (`<target>/<profile>/deps/<test>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.ancestors()
        .nth(3)
        .map(PathBuf::from)
        .expect("test executable lives in <target>/<profile>/deps")
}

/// The Python interpreter: `XQ_PYTHON`, else the virtual environment
/// `tests/run` makes (`<target>/py-venv`), else `python3` from `PATH`.
pub fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("XQ_PYTHON") {
        return path.into();
    }
    let venv = target_dir().join("py-venv/bin/python");
    if venv.exists() {
        venv
    } else {
        "python3".into()
    }
}

/// The `buf` executable: `XQ_BUF`, else where `tests/run` installs it
/// (`<target>/buf/node_modules/.bin/buf`).
pub fn buf() -> PathBuf {
    if let Some(path) = std::env::var_os("XQ_BUF") {
        return path.into();
    }
    target_dir().join("buf/node_modules/.bin/buf")
}

/// What to tell someone whose Python lacks a package the tests need.
pub const PYTHON_HINT: &str =
    "run tests/run once (it makes target/py-venv from tests/py/requirements.txt), or set XQ_PYTHON";
