//! End-to-end: `xq-coordinator book make` and `asset add FILE.pgn` on real game
//! records (`tests/fixtures/books/`, whose README gives their sources): the same
//! five master games written in Chinese, full-width WXF, 一字三码 and ICCS make the
//! same book; games that cannot give an opening are reported by number and
//! reason. Fairy-Stockfish (pyffish, [`xq_tests::tools::python`]) checks the games and the book.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use xq_engine::{Move, Position};
use xq_tests::cluster::TempDb;
use xq_tests::tools::{PYTHON_HINT, python};

const PLIES: usize = 16;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/books")
        .join(name)
}

fn coordinator(args: &[&str]) -> Output {
    Command::new(xq_tests::binary("xq-coordinator"))
        .args(args)
        .output()
        .expect("run xq-coordinator")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `book make FILE --plies 16` to standard output: (book, stderr).
fn make(file: &Path) -> (String, String) {
    let file = file.to_str().unwrap();
    let out = coordinator(&["book", "make", file, "--plies", &PLIES.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// The position after `PLIES` plies of each game of the ICCS fixture, replayed
/// here without the PGN reader or the notation module: `H2-E2` words read as
/// coordinates, `[FEN]` tags as start positions.
fn expected_book() -> String {
    let pgn = std::fs::read_to_string(fixture("masters-iccs.pgn")).unwrap();
    let mut lines = Vec::new();
    for game in pgn.split("[Game ").skip(1) {
        let mut pos = game
            .lines()
            .find_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
            .map_or_else(Position::startpos, |fen| Position::from_fen(fen).unwrap());
        let moves = game
            .split_whitespace()
            .filter(|w| w.len() == 5 && w.as_bytes()[2] == b'-')
            .map(|w| Move::parse_coords(&w.replace('-', "").to_ascii_lowercase()).unwrap());
        for mv in moves.take(PLIES) {
            assert!(pos.is_legal(mv), "{mv} in {}", pos.to_fen());
            pos.make(mv);
        }
        lines.push(pos.to_fen() + "\n");
    }
    assert_eq!(lines.len(), 5);
    lines.concat()
}

#[test]
fn the_same_games_in_every_notation_make_the_same_book() {
    let expected = expected_book();
    for name in [
        "masters-chinese.pgn",
        "masters-wxf.pgn",
        "masters-yizisanma.pgn",
        "masters-iccs.pgn",
    ] {
        let (book, stderr) = make(&fixture(name));
        assert_eq!(book, expected, "{name}");
        assert!(
            stderr.ends_with(
                "games read 5, openings written 5, duplicates 0, skipped 0 (16 plies)\n"
            ),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
    }
}

#[test]
fn games_without_an_opening_are_reported_by_number_and_reason() {
    let file = fixture("reported.pgn");
    let (book, stderr) = make(&file);
    let first_master = expected_book().lines().next().unwrap().to_owned() + "\n";
    assert_eq!(book, first_master);
    let prefix = format!("{}: ", file.display());
    let reports: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l))
        .collect();
    assert_eq!(
        reports,
        vec![
            "game 2: duplicate: same position as game 1",
            "game 3: skipped: ply 7: illegal move '兵三进二'",
            "game 4: skipped: the arbiter ends it at ply 8: repetition (draw)",
            "game 5: skipped: it has 10 plies, fewer than 16",
            "game 6: skipped: [FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w - - 0 1\"]: \
             rank 0 is too short: 'RNBAKABN' describes 8 of 9 points",
            "game 7: skipped: the arbiter ends it at ply 1: checkmate (red)",
            "games read 7, openings written 1, duplicates 1, skipped 5 (16 plies)",
        ]
    );
}

#[test]
fn book_make_writes_the_file_and_refuses_what_gives_no_book() {
    let dir = std::env::temp_dir().join(format!("xq-books-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("book.epd");
    let games = fixture("masters-chinese.pgn");
    let out = coordinator(&[
        "book",
        "make",
        games.to_str().unwrap(),
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&out_file).unwrap();
    assert_eq!(written, expected_book(), "the default is 16 plies");
    let openings = xq_proto::openings::parse_lines(&written).unwrap();
    assert_eq!(openings.len(), 5);

    let short = coordinator(&["book", "make", games.to_str().unwrap(), "--plies", "200"]);
    assert!(!short.status.success());
    assert!(
        text(&short.stderr).contains("no game gave an opening of 200 plies"),
        "{}",
        text(&short.stderr)
    );
    let gbk = dir.join("gbk.pgn");
    // 炮二平五 in GBK.
    std::fs::write(&gbk, b"1. \xc5\xda\xb6\xfe\xc6\xbd\xce\xe5 *\n").unwrap();
    let refused = coordinator(&["book", "make", gbk.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("is not UTF-8 (byte 3)"),
        "{}",
        text(&refused.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn asset_add_of_a_pgn_file_stores_its_book() {
    let db = TempDb::new("books");
    let dbs = db.0.to_str().unwrap();
    let games = fixture("masters-wxf.pgn");
    let out = coordinator(&["asset", "add", games.to_str().unwrap(), "--db", dbs]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    let words: Vec<&str> = line.split_whitespace().collect();
    let book = expected_book();
    let (sha256, size) = xq_proto::blob::sha256_of_reader(book.as_bytes()).unwrap();
    assert_eq!(
        words,
        vec![
            "masters-wxf.epd",
            "sha256",
            sha256.as_str(),
            "size",
            &size.to_string()
        ]
    );
    assert!(text(&out.stderr).contains("openings written 5"));
    let list = coordinator(&["asset", "list", "--db", dbs]);
    assert!(text(&list.stdout).contains(&sha256));

    let eight = coordinator(&[
        "asset",
        "add",
        games.to_str().unwrap(),
        "--plies",
        "8",
        "--name",
        "masters-8",
        "--db",
        dbs,
    ]);
    assert!(eight.status.success(), "{}", text(&eight.stderr));
    assert!(
        !text(&eight.stdout).contains(&sha256),
        "another cut, another book"
    );

    let not_pgn = coordinator(&[
        "asset",
        "add",
        fixture("README.md").to_str().unwrap(),
        "--plies",
        "8",
        "--db",
        dbs,
    ]);
    assert!(!not_pgn.status.success());
    assert!(
        text(&not_pgn.stderr).contains("--plies is for a PGN file (.pgn)"),
        "{}",
        text(&not_pgn.stderr)
    );
}

#[test]
fn fairy_stockfish_agrees_with_the_games_and_the_book() {
    let dir = std::env::temp_dir().join(format!("xq-books-ff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let book = dir.join("book.epd");
    std::fs::write(&book, make(&fixture("masters-yizisanma.pgn")).0).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/check_book_fixture.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(fixture("masters-iccs.pgn"))
        .arg(fixture("masters-wxf.pgn"))
        .arg(&book)
        .arg(PLIES.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {PYTHON_HINT}", python().display()));
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "pyffish is not installed for {}: {PYTHON_HINT}\n{stderr}",
        python().display()
    );
    assert!(out.status.success(), "{}{stderr}", text(&out.stdout));
    assert_eq!(text(&out.stdout), "5 games agree with Fairy-Stockfish\n");
    let _ = std::fs::remove_dir_all(&dir);
}
