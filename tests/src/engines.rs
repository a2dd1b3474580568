//! The real engines the tests play: Debian's `fairy-stockfish` and `sjaakii`,
//! which `tests/run` installs. A missing one fails the test with the command
//! that installs it; it never passes silently.

use std::path::{Path, PathBuf};

/// The engine executable `name`, looked up in the Debian games directory and on
/// `PATH`; panics with `install` when it is missing.
pub fn installed(name: &str, install: &str) -> PathBuf {
    let games = Path::new("/usr/games").join(name);
    if games.is_file() {
        return games;
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!("engine '{name}' is not installed (looked in /usr/games and on PATH): {install}")
    })
}

/// Fairy-Stockfish (UCI, `UCI_Variant xiangqi`, ranks 1-10).
pub fn fairy_stockfish() -> PathBuf {
    installed(
        "fairy-stockfish",
        "install it with `apt-get update && apt-get install -y fairy-stockfish` (tests/run does)",
    )
}

/// Sjaak II (UCI, `UCI_Variant xiangqi`, ranks 1-10).
pub fn sjaak() -> PathBuf {
    installed(
        "sjaakii",
        "install it with `apt-get update && apt-get install -y sjaakii` (tests/run does)",
    )
}
