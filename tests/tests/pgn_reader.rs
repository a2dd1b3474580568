//! End-to-end: the PGN that `xq-worker play --pgn` writes, read by independent
//! Xiangqi readers from PyPI (cchess and Fairy-Stockfish's pyffish, see
//! `tests/py/check_pgn.py`), run by [`xq_tests::tools::python`].

use std::path::{Path, PathBuf};
use std::process::Command;

use xq_tests::binary;
use xq_tests::tools::{PYTHON_HINT, python};

fn play(dir: &Path, notation: &str) -> PathBuf {
    let pgn = dir.join(format!("games-{notation}.pgn"));
    let out = Command::new(binary("xq-worker"))
        .args([
            "play",
            "--pairs",
            "6",
            "--nodes",
            "800",
            "--threads",
            "2",
            "--seed",
            "11",
            "--quiet",
            "--pgn-notation",
            notation,
        ])
        .arg("--pgn")
        .arg(&pgn)
        .output()
        .expect("run xq-worker");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    pgn
}

#[test]
fn independent_readers_read_every_game_in_every_notation() {
    let dir = std::env::temp_dir().join(format!("xq-pgn-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let files: Vec<PathBuf> = ["iccs", "wxf", "chinese"]
        .iter()
        .map(|n| play(&dir, n))
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/check_pgn.py");
    let out = Command::new(python())
        .arg(&script)
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {PYTHON_HINT}", python().display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "the PGN readers are not installed for {}: {PYTHON_HINT}\n{stderr}",
        python().display()
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout.matches("12 games read").count(), 3, "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
