//! End-to-end: the real `xq-engine` binary, from the command line and over UCI.

use std::io::Write;
use std::process::{Command, Stdio};

use xq_tests::binary;

fn engine() -> Command {
    Command::new(binary("xq-engine"))
}

#[test]
fn perft_from_the_command_line() {
    let out = engine()
        .args(["perft", "3"])
        .output()
        .expect("run xq-engine");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(": ") && l.len() <= 12)
            .count(),
        44,
        "{text}"
    );
    assert!(text.contains("Nodes searched: 79666"), "{text}");
}

#[test]
fn perft_of_a_fen_given_as_words() {
    let fen = "5a3/3k5/3aR4/9/5r3/5n3/9/3A1A3/5K3/2BC2B2 w - - 0 1";
    let mut args = vec!["perft", "3"];
    args.extend(fen.split(' '));
    let out = engine().args(&args).output().expect("run xq-engine");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nodes searched: 9850"));
}

#[test]
fn perft_over_uci() {
    let mut child = engine()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start xq-engine");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"uci\nisready\nposition startpos moves h2e2 h9g7\ngo perft 2\nquit\n")
        .expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("engine output");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("uciok") && text.contains("readyok"), "{text}");
    let total: u64 = text
        .lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(m, _)| m.len() == 4)
        .map(|(_, n)| n.parse::<u64>().expect("count"))
        .sum();
    let reported = text
        .lines()
        .find_map(|l| l.strip_prefix("Nodes searched: "))
        .and_then(|n| n.parse::<u64>().ok());
    assert_eq!(reported, Some(total), "{text}");
}

#[test]
fn bad_fen_is_a_clear_error() {
    let out = engine()
        .args(["perft", "2", "rnbakabnr/9/9"])
        .output()
        .expect("run xq-engine");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("xq-engine: bad fen 'rnbakabnr/9/9'"), "{err}");
    assert!(err.contains("3 ranks"), "{err}");
}

#[test]
fn notation_converts_the_sixteen_first_moves() {
    let chinese = [
        "炮二平五",
        "相三进五",
        "兵七进一",
        "马二进三",
        "炮二平六",
        "炮八平六",
        "仕四进五",
        "炮二平三",
        "炮二平七",
        "马二进一",
        "兵九进一",
        "炮二进二",
        "炮二平一",
        "炮八退一",
        "炮二进四",
        "车一进一",
    ];
    let coords = [
        "h2e2", "g0e2", "c3c4", "h0g2", "h2d2", "b2d2", "f0e1", "h2g2", "h2c2", "h0i2", "a3a4",
        "h2h4", "h2i2", "b2b1", "h2h6", "i0i1",
    ];
    for (zh, iccs) in chinese.iter().zip(coords) {
        let out = engine()
            .args(["notation", "--to", "iccs", zh])
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{zh}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), iccs, "{zh}");
        let back = engine()
            .args(["notation", "--to", "chinese", iccs])
            .output()
            .expect("run");
        assert_eq!(String::from_utf8_lossy(&back.stdout).trim(), *zh, "{iccs}");
    }
}

#[test]
fn notation_reads_a_game_and_rejects_an_illegal_move() {
    let out = engine()
        .args([
            "notation",
            "--to",
            "wxf",
            "炮二平五",
            "马8进7",
            "h0g2",
            "兵七进二",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        ["C2.5", "H8+7", "H2+3"]
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("illegal move '兵七进二'"));
}

#[test]
fn notation_writes_yizisanma_from_any_notation() {
    // Chinese with full-width digits, full-width WXF, the abbreviated record,
    // ICCS: art. 7.5's first moves, then 马325 (seeds 001/003 §9).
    let out = engine()
        .args([
            "notation",
            "--to",
            "yizisanma",
            "炮二平五",
            "马８进７",
            "Ｈ２＋３",
            "车9 8",
            "g3g4",
            "i6i5",
            "马三进二",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        [
            "炮253", "马873", "马233", "车981", "兵335", "卒995", "马325"
        ]
    );
}

#[test]
fn adjudicate_judges_perpetual_check_and_rejects_junk() {
    let fen = "4k4/7R1/9/9/9/9/9/9/9/3K5 w";
    let moves = "h8h9 e9e8 h9h8 e8e9 h8h9 e9e8 h9h8 e8e9";
    let mut args = vec!["adjudicate", "--rules", "standard", "--fen", fen];
    args.extend(moves.split(' '));
    let out = engine().args(&args).output().expect("run");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "result: black reason: perpetual-check ply: 8"
    );
    let mut args = vec!["adjudicate", "--rules", "repetition-4", "--fen", fen];
    args.extend(moves.split(' '));
    let out = engine().args(&args).output().expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "result: none");

    for bad in [
        vec!["adjudicate", "--rules", "standard+fast"],
        vec!["adjudicate", "--fen", "9/9"],
        vec!["adjudicate", "h2e3"],
        vec!["adjudicate", "h2"],
    ] {
        let out = engine().args(&bad).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("xq-engine: "),
            "{bad:?}"
        );
    }
}

#[test]
fn perft_under_the_conversion_rules() {
    let out = engine()
        .args(["perft", "3", "--rules", "conversion"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nodes searched: 79666"));
}
