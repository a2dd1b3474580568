//! End-to-end: `xq-coordinator texel --data FILE` on positions in the training
//! text format prints a parameter file that the engine reads back, and names
//! what is wrong with a bad data line, an unknown or search parameter and a bad
//! option.

use std::path::PathBuf;
use std::process::{Command, Output};

use xq_engine::eval::Evaluator;
use xq_engine::{Color, Params, Position};

/// A file under the system temp dir, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("xq-texel-{}-{tag}.txt", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TempFile(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `fen | score | result` lines along fixed pseudo-random games: the score is
/// the default evaluation for Red, the result Red's win beyond +150 cp, Black's
/// below −150, a draw between.
fn positions() -> String {
    let eval = Evaluator::new(&Params::default());
    let mut text = String::new();
    for game in 0..20u64 {
        let mut pos = Position::startpos();
        let mut state = game.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for _ in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            pos.make(moves[(state >> 33) as usize % moves.len()]);
            let stm = eval.evaluate(&pos);
            let red = if pos.side_to_move() == Color::Red {
                stm
            } else {
                -stm
            };
            let result = match red {
                r if r > 150 => "1.0",
                r if r < -150 => "0.0",
                _ => "0.5",
            };
            text.push_str(&format!("{} | {red} | {result}\n", pos.to_fen()));
        }
    }
    text
}

fn texel(args: &[&str]) -> Output {
    Command::new(xq_tests::binary("xq-coordinator"))
        .arg("texel")
        .args(args)
        .output()
        .expect("run xq-coordinator")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assigned(file: &str) -> Vec<&str> {
    file.lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .map(|l| l.split('=').next().unwrap_or_default().trim())
        .collect()
}

#[test]
fn the_printed_parameter_file_reads_back() {
    let data = TempFile::new("data", &positions());
    let out = texel(&["--data", data.arg(), "--iterations", "30"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let params = Params::from_toml(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    let names = assigned(&stdout);
    assert!(
        names.contains(&"horse_value") && names.contains(&"tempo"),
        "{stdout}"
    );
    assert!(
        !names.contains(&"lmr_base"),
        "search parameters are not fitted: {stdout}"
    );
    assert_eq!(params.lmr_base, Params::default().lmr_base);
    for want in [
        "# K = ",
        "# loss before: train ",
        "held out ",
        "positions/s per pass",
    ] {
        assert!(stdout.contains(want), "{want}: {stdout}");
    }
    assert!(stderr.contains("pass 30/30: training loss"), "{stderr}");

    let file = TempFile::new("out", "");
    let out = texel(&[
        "--data",
        data.arg(),
        "--params",
        "horse_value, tempo",
        "--lambda",
        "0.5",
        "--holdout",
        "0",
        "--iterations",
        "20",
        "--out",
        file.arg(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&file.0).unwrap();
    assert_eq!(assigned(&written), ["horse_value", "tempo"], "{written}");
    assert!(written.contains("held out - (none held out)"), "{written}");
    Params::from_toml(&written).unwrap();
}

#[test]
fn bad_input_is_named() {
    let good = positions();
    let mut lines: Vec<&str> = good.lines().take(5).collect();
    let broken = lines[2]
        .replace("| 0.5", "| 0.7")
        .replace("| 1.0", "| 0.7")
        .replace("| 0.0", "| 0.7");
    lines[2] = &broken;
    let bad = TempFile::new("bad", &(lines.join("\n") + "\n"));
    let data = TempFile::new("good", &good);
    let missing = std::env::temp_dir().join("xq-texel-no-such-file.txt");
    for (args, want) in [
        (vec!["--data", bad.arg()], "line 3: bad result '0.7'"),
        (
            vec!["--data", data.arg(), "--params", "horse_valu"],
            "unknown parameter 'horse_valu'",
        ),
        (
            vec!["--data", data.arg(), "--params", "lmr_base"],
            "'lmr_base' is a search parameter",
        ),
        (
            vec!["--data", data.arg(), "--lambda", "2"],
            "lambda 2 is not in 0..=1",
        ),
        (
            vec!["--data", data.arg(), "--holdout", "1"],
            "hold-out share 1 is not in 0..1",
        ),
        (
            vec!["--data", data.arg(), "--rate", "0"],
            "rate 0 is not a positive",
        ),
        (vec!["--data", missing.to_str().unwrap()], "cannot open"),
    ] {
        let out = texel(&args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
