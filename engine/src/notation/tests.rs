use proptest::prelude::*;

use super::*;

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|e| panic!("bad test fen '{fen}': {e}"))
}

fn mv(s: &str) -> Move {
    Move::parse_coords(s).unwrap()
}

/// Checks that `text` reads as `coords` and that `coords` prints as `text`.
fn both_ways(p: &Position, text: &str, coords: &str, notation: Notation) {
    assert_eq!(
        parse_as(p, text, notation),
        Ok(mv(coords)),
        "reading {text}"
    );
    assert_eq!(parse_move(p, text), Ok(mv(coords)), "auto-reading {text}");
    assert_eq!(
        format_move(p, mv(coords), notation).as_deref(),
        Ok(text),
        "writing {coords}"
    );
}

/// engine/RULES.md §11, with the WXF form of each move.
const FIRST_MOVES: [(&str, &str, &str); 16] = [
    ("炮二平五", "h2e2", "C2.5"),
    ("相三进五", "g0e2", "E3+5"),
    ("兵七进一", "c3c4", "P7+1"),
    ("马二进三", "h0g2", "H2+3"),
    ("炮二平六", "h2d2", "C2.6"),
    ("炮八平六", "b2d2", "C8.6"),
    ("仕四进五", "f0e1", "A4+5"),
    ("炮二平三", "h2g2", "C2.3"),
    ("炮二平七", "h2c2", "C2.7"),
    ("马二进一", "h0i2", "H2+1"),
    ("兵九进一", "a3a4", "P9+1"),
    ("炮二进二", "h2h4", "C2+2"),
    ("炮二平一", "h2i2", "C2.1"),
    ("炮八退一", "b2b1", "C8-1"),
    ("炮二进四", "h2h6", "C2+4"),
    ("车一进一", "i0i1", "R1+1"),
];

#[test]
fn sixteen_first_moves_round_trip() {
    let p = Position::startpos();
    for (chinese, coords, wxf) in FIRST_MOVES {
        both_ways(&p, chinese, coords, Notation::Chinese);
        both_ways(&p, wxf, coords, Notation::Wxf);
        both_ways(&p, coords, coords, Notation::Coords);
    }
}

#[test]
fn black_moves_use_digits() {
    let mut p = Position::startpos();
    p.make(mv("h2e2"));
    both_ways(&p, "马8进7", "h9g7", Notation::Chinese);
    both_ways(&p, "H8+7", "h9g7", Notation::Wxf);
    both_ways(&p, "炮8平5", "h7e7", Notation::Chinese);
    both_ways(&p, "卒3进1", "c6c5", Notation::Chinese);
    both_ways(&p, "象3进5", "c9e7", Notation::Chinese);
    both_ways(&p, "士4进5", "d9e8", Notation::Chinese);
    both_ways(&p, "将5进1", "e9e8", Notation::Chinese);
    both_ways(&p, "K5+1", "e9e8", Notation::Wxf);
    // Lenient input: other characters, numerals and digit widths.
    for text in ["马８进７", "馬8進7", "马八进七", " 马8进7 ", "傌8进7"] {
        assert_eq!(parse_move(&p, text), Ok(mv("h9g7")), "{text}");
    }
    for text in ["h8+7", "N8+7", " H8+7 "] {
        assert_eq!(parse_as(&p, text, Notation::Wxf), Ok(mv("h9g7")), "{text}");
    }
}

#[test]
fn coordinates_accept_iccs_forms() {
    let p = Position::startpos();
    for text in ["h2e2", "H2E2", "H2-E2", "h2-e2", " h2e2\n"] {
        assert_eq!(parse_move(&p, text), Ok(mv("h2e2")), "{text}");
    }
    assert!(matches!(
        parse_move(&p, "h3h4"),
        Err(NotationError::NoSuchPiece { .. })
    ));
    assert!(matches!(
        parse_move(&p, "h9g7"),
        Err(NotationError::NoSuchPiece { .. })
    ));
    assert!(matches!(
        parse_move(&p, "h2h3x"),
        Err(NotationError::Malformed { .. })
    ));
    assert_eq!(
        parse_move(&p, "h0h1"),
        Err(NotationError::Illegal {
            text: "h0h1".to_string()
        })
    );
}

/// Red chariots on h2 (front) and h0, both on Red's file 二.
const RED_TANDEM: &str = "4k4/9/9/9/9/9/9/7R1/9/3K3R1 w";

#[test]
fn tandem_chariots() {
    let p = pos(RED_TANDEM);
    both_ways(&p, "前车进三", "h2h5", Notation::Chinese);
    both_ways(&p, "后车进一", "h0h1", Notation::Chinese);
    both_ways(&p, "前车平六", "h2d2", Notation::Chinese);
    both_ways(&p, "后车平五", "h0e0", Notation::Chinese);
    both_ways(&p, "R++3", "h2h5", Notation::Wxf);
    both_ways(&p, "R-+1", "h0h1", Notation::Wxf);
    both_ways(&p, "R+.6", "h2d2", Notation::Wxf);
    for text in ["+R.6", "+r=6", "车前平六", "俥前平六", "前車平6"] {
        assert_eq!(parse_move(&p, text), Ok(mv("h2d2")), "{text}");
    }
    // Naming the shared file without front/rear is ambiguous when both of them
    // could make the move; when only one can, input takes it (Fairy-Stockfish
    // writes WXF so), output still names it by its place.
    for text in ["车二进一", "R2+1"] {
        match parse_move(&p, text) {
            Err(NotationError::AmbiguousPiece { text: t, pieces }) => {
                assert_eq!(t, text);
                assert_eq!(pieces.len(), 2, "{text}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let e = parse_move(&p, "车二进一").unwrap_err().to_string();
    assert_eq!(
        e,
        "ambiguous move '车二进一': it fits the pieces on h2 and h0; \
         name one by its place (前/中/后, +/-)"
    );
    for (text, coords) in [("车二进三", "h2h5"), ("车二平六", "h2d2"), ("R2+3", "h2h5")] {
        assert_eq!(parse_move(&p, text), Ok(mv(coords)), "{text}");
    }
    assert!(matches!(
        parse_move(&p, "后车进二"),
        Err(NotationError::Illegal { .. })
    ));
}

#[test]
fn tandem_cannons_for_black() {
    // Black cannons on b5 (front, nearer Red) and b7, on Black's file 2.
    let p = pos("4k4/9/1c7/9/1c7/9/9/9/9/3K5 b");
    both_ways(&p, "前炮平5", "b5e5", Notation::Chinese);
    both_ways(&p, "后炮平5", "b7e7", Notation::Chinese);
    both_ways(&p, "后炮退2", "b7b9", Notation::Chinese);
    both_ways(&p, "C+.5", "b5e5", Notation::Wxf);
    both_ways(&p, "C--2", "b7b9", Notation::Wxf);
    assert_eq!(parse_move(&p, "-C-2"), Ok(mv("b7b9")));
    assert_eq!(parse_move(&p, "前炮平五"), Ok(mv("b5e5")));
}

/// Red soldiers on e5, e6, e7 (file 五) and c5, c6 (file 七).
const SOLDIERS_TWO_FILES: &str = "3k5/9/4P4/2P1P4/2P1P4/9/9/9/9/5K3 w";

#[test]
fn three_soldiers_on_a_file() {
    let p = pos("3k5/9/4P4/4P4/4P4/9/9/9/9/5K3 w");
    both_ways(&p, "前兵进一", "e7e8", Notation::Chinese);
    both_ways(&p, "前兵平六", "e7d7", Notation::Chinese);
    both_ways(&p, "中兵平六", "e6d6", Notation::Chinese);
    both_ways(&p, "后兵平四", "e5f5", Notation::Chinese);
    both_ways(&p, "P++1", "e7e8", Notation::Wxf);
    both_ways(&p, "P5.6", "e6d6", Notation::Wxf);
    both_ways(&p, "P-.4", "e5f5", Notation::Wxf);
    assert!(matches!(
        parse_move(&p, "兵五平六"),
        Err(NotationError::AmbiguousPiece { .. })
    ));
    assert_eq!(parse_move(&p, "二兵平六"), Ok(mv("e6d6")));
    assert_eq!(parse_move(&p, "三兵平六"), Ok(mv("e5d5")));
}

#[test]
fn four_soldiers_on_a_file() {
    let p = pos("3k5/4P4/4P4/4P4/4P4/9/9/9/9/5K3 w");
    both_ways(&p, "一兵平六", "e8d8", Notation::Chinese);
    both_ways(&p, "二兵平六", "e7d7", Notation::Chinese);
    both_ways(&p, "三兵平六", "e6d6", Notation::Chinese);
    both_ways(&p, "四兵平六", "e5d5", Notation::Chinese);
    both_ways(&p, "++.6", "e8d8", Notation::Wxf);
    both_ways(&p, "P+.6", "e7d7", Notation::Wxf);
    both_ways(&p, "P-.6", "e6d6", Notation::Wxf);
    both_ways(&p, "--.6", "e5d5", Notation::Wxf);
    assert_eq!(parse_move(&p, "前兵平六"), Ok(mv("e8d8")));
    assert_eq!(parse_move(&p, "后兵平六"), Ok(mv("e5d5")));
    assert!(parse_move(&p, "中兵平六").is_err());
}

#[test]
fn tandem_soldiers_on_two_files() {
    let p = pos(SOLDIERS_TWO_FILES);
    both_ways(&p, "前兵五平六", "e7d7", Notation::Chinese);
    both_ways(&p, "中兵五平六", "e6d6", Notation::Chinese);
    both_ways(&p, "后兵五平四", "e5f5", Notation::Chinese);
    both_ways(&p, "前兵七平八", "c6b6", Notation::Chinese);
    assert!(matches!(
        parse_move(&p, "后兵七进一"),
        Err(NotationError::Illegal { .. })
    ));
    both_ways(&p, "5+.6", "e7d7", Notation::Wxf);
    both_ways(&p, "55.6", "e6d6", Notation::Wxf);
    both_ways(&p, "5-.4", "e5f5", Notation::Wxf);
    both_ways(&p, "7+.8", "c6b6", Notation::Wxf);
    both_ways(&p, "7-.8", "c5b5", Notation::Wxf);
    assert!(matches!(
        parse_move(&p, "前兵平六"),
        Err(NotationError::AmbiguousPiece { .. })
    ));
    assert_eq!(parse_move(&p, "P5.6"), Ok(mv("e6d6")));
    assert_eq!(parse_move(&p, "P7+.8"), Ok(mv("c6b6")));
}

#[test]
fn diagonal_movers_give_the_target_file() {
    // Red advisors on d0 and d2 share file 六, elephants on c0 and c4 share file 七,
    // horses on c2 (rear) and c5 (front).
    let p = pos("3k5/9/9/9/2N6/2B6/9/2NA5/9/2BAK4 w");
    both_ways(&p, "仕六进五", "d0e1", Notation::Chinese);
    both_ways(&p, "仕六退五", "d2e1", Notation::Chinese);
    both_ways(&p, "A6+5", "d0e1", Notation::Wxf);
    both_ways(&p, "A6-5", "d2e1", Notation::Wxf);
    both_ways(&p, "相七进五", "c0e2", Notation::Chinese);
    both_ways(&p, "相七退五", "c4e2", Notation::Chinese);
    both_ways(&p, "相七退九", "c4a2", Notation::Chinese);
    both_ways(&p, "E7-9", "c4a2", Notation::Wxf);
    both_ways(&p, "前马进六", "c5d7", Notation::Chinese);
    both_ways(&p, "前马退九", "c5a4", Notation::Chinese);
    both_ways(&p, "后马进八", "c2b4", Notation::Chinese);
    both_ways(&p, "H++6", "c5d7", Notation::Wxf);
    both_ways(&p, "H-+8", "c2b4", Notation::Wxf);
    // Lenient input forms for advisors and elephants.
    assert_eq!(parse_move(&p, "士六进五"), Ok(mv("d0e1")));
    assert_eq!(parse_move(&p, "象七进五"), Ok(mv("c0e2")));
    assert_eq!(parse_move(&p, "B7+5"), Ok(mv("c0e2")));
    assert_eq!(parse_move(&p, "后仕进五"), Ok(mv("d0e1")));
    // A horse on the named file cannot go sideways, nor to a file it cannot reach.
    assert!(matches!(
        parse_move(&p, "前马平六"),
        Err(NotationError::Illegal { .. })
    ));
    assert!(matches!(
        parse_move(&p, "前马进三"),
        Err(NotationError::Illegal { .. })
    ));
    assert!(matches!(
        parse_move(&p, "马七进六"),
        Err(NotationError::AmbiguousPiece { .. })
    ));
}

#[test]
fn converted_elephant_moves_like_a_bishop() {
    // A converted Red elephant (bishop) on c0 can go any distance diagonally.
    let p = pos("3k5/9/9/9/9/9/9/9/9/2B~1K4 w");
    both_ways(&p, "相七进四", "c0f3", Notation::Chinese);
    both_ways(&p, "相七进一", "c0i6", Notation::Chinese);
    both_ways(&p, "E7+9", "c0a2", Notation::Wxf);
    both_ways(&p, "E7+1", "c0i6", Notation::Wxf);
}

#[test]
fn elephants_sharing_a_move_fall_back_to_front_and_rear() {
    // A plain elephant on c0 and a converted one (bishop) on c4: both can go
    // forward to file 五, so the file form is ambiguous there and only there.
    let p = pos("3k5/9/9/9/9/2B~6/9/9/9/2B1K4 w");
    assert_eq!(
        parse_move(&p, "相七进五"),
        Err(NotationError::Ambiguous {
            text: "相七进五".to_string(),
            candidates: vec![mv("c4e6"), mv("c0e2")],
        })
    );
    both_ways(&p, "前相进五", "c4e6", Notation::Chinese);
    both_ways(&p, "后相进五", "c0e2", Notation::Chinese);
    both_ways(&p, "E++5", "c4e6", Notation::Wxf);
    both_ways(&p, "E-+5", "c0e2", Notation::Wxf);
    both_ways(&p, "相七退九", "c4a2", Notation::Chinese);
    both_ways(&p, "E-+9", "c0a2", Notation::Wxf);
}

#[test]
fn illegal_moves_and_missing_pieces() {
    let p = Position::startpos();
    for text in [
        "炮二进九",
        "马二进四",
        "车一平二",
        "兵七进二",
        "兵七退一",
        "马二平三",
        "帅五平四",
    ] {
        assert_eq!(
            parse_move(&p, text),
            Err(NotationError::Illegal {
                text: text.to_string()
            }),
            "{text}"
        );
    }
    for text in [
        "车五进一",
        "前车进一",
        "中兵进一",
        "R5+1",
        "R+.5",
        "++.5",
        "33.4",
    ] {
        assert!(
            matches!(parse_move(&p, text), Err(NotationError::NoSuchPiece { .. })),
            "{text}: {:?}",
            parse_move(&p, text)
        );
    }
    assert_eq!(
        format_move(&p, mv("h2i3"), Notation::Wxf),
        Err(NotationError::NotLegal(mv("h2i3")))
    );
    assert_eq!(
        format_move(&p, mv("a0a9"), Notation::Chinese),
        Err(NotationError::NotLegal(mv("a0a9")))
    );
    let msg = parse_move(&p, "车五进一").unwrap_err().to_string();
    assert_eq!(
        msg,
        "no such piece for '车五进一': red has no chariot on file 5"
    );
}

#[test]
fn garbage_is_malformed() {
    let p = Position::startpos();
    for text in [
        "",
        "   ",
        "炮",
        "炮二平",
        "炮二平五五",
        "炮十平五",
        "二平五炮",
        "🀄",
        "C2.0",
        "C2.55",
        "C0.5",
        "C2*5",
        "X2.5",
        "xyz",
        "h2h2",
        "h2e2e",
        "\u{0}",
        "Ｃ２．０",
        "炮二平五\u{301}",
        "炮二平五\u{332}",
        "马3250",
        "马025",
        "马305",
        "马3 25",
        "进25",
        "马进进25",
        "炮 5",
        "前前炮平五",
        "六兵进一",
    ] {
        assert!(
            matches!(parse_move(&p, text), Err(NotationError::Malformed { .. })),
            "{text:?}: {:?}",
            parse_move(&p, text)
        );
    }
    let msg = parse_move(&p, "炮二平").unwrap_err().to_string();
    assert!(msg.starts_with("malformed move '炮二平': "), "{msg}");
}

#[test]
fn notation_names() {
    for (s, n) in [
        ("chinese", Notation::Chinese),
        ("WXF", Notation::Wxf),
        ("iccs", Notation::Coords),
        ("uci", Notation::Coords),
        ("yizisanma", Notation::Yizisanma),
        ("一字三码", Notation::Yizisanma),
        ("Three-Digit", Notation::Yizisanma),
    ] {
        assert_eq!(s.parse::<Notation>(), Ok(n));
    }
    for n in Notation::ALL {
        assert_eq!(n.name().parse::<Notation>(), Ok(n));
    }
    assert!("pgn".parse::<Notation>().is_err());
}

#[test]
fn full_width_wxf_and_coordinates_read_as_ascii() {
    let mut p = Position::startpos();
    for text in [
        "Ｃ２＝５",
        "Ｃ２．５",
        "ｃ２＝５",
        "\u{3000}Ｃ２＝５\u{3000}",
        "ｈ２ｅ２",
        "Ｈ２－Ｅ２",
    ] {
        assert_eq!(parse_move(&p, text), Ok(mv("h2e2")), "{text}");
    }
    assert_eq!(parse_as(&p, "Ｃ２＝５", Notation::Wxf), Ok(mv("h2e2")));
    p.make(mv("h2e2"));
    assert_eq!(parse_move(&p, "Ｈ８＋７"), Ok(mv("h9g7")));
    // Chinese keeps its own full-width digits.
    assert_eq!(parse_move(&p, "马８进７"), Ok(mv("h9g7")));
    // Errors quote the text as written.
    assert_eq!(
        parse_move(&p, "Ｈ８＋６"),
        Err(NotationError::Illegal {
            text: "Ｈ８＋６".to_string()
        })
    );
    assert_eq!(fold_width("Ｃ２＝５ 炮"), "C2=5 炮");
    assert!(matches!(fold_width("炮二平五"), Cow::Borrowed(_)));
}

#[test]
fn yizisanma_examples_of_the_seeds() {
    // Seeds 001/003 §9: 马325 将451 车220.
    let mut p = Position::startpos();
    for m in ["h0g2", "h9g7", "g3g4", "i9h9"] {
        p.make(mv(m));
    }
    both_ways(&p, "马325", "g2h4", Notation::Yizisanma);
    let p = pos("3k5/9/9/9/9/9/9/9/9/5K3 b");
    both_ways(&p, "将451", "d9e9", Notation::Yizisanma);
    // Rank 10, the enemy's back rank, is written 0.
    let p = pos("4k4/9/9/9/9/9/9/9/9/3K3R1 w");
    both_ways(&p, "车220", "h0h9", Notation::Yizisanma);
    both_ways(&p, "车222", "h0h1", Notation::Yizisanma);
    // Both sides write Arabic digits, each from its own right and back rank.
    let p = Position::startpos();
    both_ways(&p, "炮253", "h2e2", Notation::Yizisanma);
    both_ways(&p, "马233", "h0g2", Notation::Yizisanma);
    both_ways(&p, "兵775", "c3c4", Notation::Yizisanma);
    let mut p = Position::startpos();
    p.make(mv("h2e2"));
    both_ways(&p, "马873", "h9g7", Notation::Yizisanma);
    both_ways(&p, "卒335", "c6c5", Notation::Yizisanma);
    both_ways(&p, "象353", "c9e7", Notation::Yizisanma);
    // Lenient input: traditional characters, full-width digits.
    for text in ["馬873", "马８７３", " 马873 "] {
        assert_eq!(parse_move(&p, text), Ok(mv("h9g7")), "{text}");
    }
}

#[test]
fn yizisanma_drops_the_origin_for_two_on_one_file() {
    // Red horses on c2 and c6 (file 七) both reach d4 (file 六, rank 5).
    let p = pos("3k5/9/9/2N6/9/9/9/2N6/9/4K4 w");
    both_ways(&p, "马进65", "c2d4", Notation::Yizisanma);
    both_ways(&p, "马退65", "c6d4", Notation::Yizisanma);
    assert_eq!(parse_move(&p, "进马65"), Ok(mv("c2d4")));
    assert_eq!(parse_move(&p, "馬進65"), Ok(mv("c2d4")));
    assert_eq!(
        parse_move(&p, "马765"),
        Err(NotationError::Ambiguous {
            text: "马765".to_string(),
            candidates: vec![mv("c2d4"), mv("c6d4")],
        })
    );
    // Only one of them reaches a3: the origin stays.
    both_ways(&p, "马794", "c2a3", Notation::Yizisanma);
    assert!(matches!(
        parse_move(&p, "马365"),
        Err(NotationError::NoSuchPiece { .. })
    ));
    assert!(matches!(
        parse_move(&p, "马799"),
        Err(NotationError::Illegal { .. })
    ));
}

#[test]
fn yizisanma_extension_for_a_third_like_piece() {
    // Horses on c2, c6 and (converted) e2 all reach d4; c2 and e2 go forward.
    let mut p = pos("4k4/9/9/2N6/9/9/9/2N1N~4/9/3K5 w");
    p.set_conversion(true);
    both_ways(&p, "马7进65", "c2d4", Notation::Yizisanma);
    both_ways(&p, "马退65", "c6d4", Notation::Yizisanma);
    both_ways(&p, "马565", "e2d4", Notation::Yizisanma);
    assert!(matches!(
        parse_move(&p, "马进65"),
        Err(NotationError::Ambiguous { .. })
    ));
}

#[test]
fn abbreviated_record_of_art_7_5() {
    // Art. 7.5's abbreviated record, as the seed prints it: 炮2 5 马8 7 / 马2 3 车9 8 /
    // 车1 2 炮8 4.
    let mut p = Position::startpos();
    for (text, coords) in [
        ("炮2 5", "h2e2"),
        ("马8 7", "h9g7"),
        ("马2 3", "h0g2"),
        ("车9 8", "i9h9"),
    ] {
        assert_eq!(parse_move(&p, text), Ok(mv(coords)), "{text}");
        assert_eq!(
            parse_as(&p, text, Notation::Chinese),
            Ok(mv(coords)),
            "{text}"
        );
        p.make(mv(coords));
    }
    // Without its mark the direction is unknown: 车一平二 or 车一进二.
    assert_eq!(
        parse_move(&p, "车1 2"),
        Err(NotationError::Ambiguous {
            text: "车1 2".to_string(),
            candidates: vec![mv("i0i2"), mv("i0h0")],
        })
    );
    p.make(mv("i0h0"));
    // The horse on g7 blocks 炮8平4: only 炮8进4 fits.
    assert_eq!(parse_move(&p, "炮8 4"), Ok(mv("h7h3")));
    // A line under the number (U+0332) says 进, over it (U+0305, U+0304) 退.
    assert_eq!(parse_move(&p, "炮8 4\u{332}"), Ok(mv("h7h3")));
    assert_eq!(parse_move(&p, "炮84\u{332}"), Ok(mv("h7h3")));
    assert_eq!(parse_move(&p, "炮8 1\u{305}"), Ok(mv("h7h8")));
    assert_eq!(parse_move(&p, "炮8 1\u{304}"), Ok(mv("h7h8")));
    assert!(matches!(
        parse_move(&p, "炮8 4\u{305}"),
        Err(NotationError::Illegal { .. })
    ));
    // Tandem markers carry over from the complete record.
    let p = pos(RED_TANDEM);
    assert_eq!(parse_move(&p, "前车 3\u{332}"), Ok(mv("h2h5")));
    assert!(matches!(
        parse_move(&p, "前车 6"),
        Err(NotationError::Ambiguous { .. })
    ));
}

/// The abbreviated record (art. 7.5) of a complete Chinese move: the direction
/// dropped, digits for both sides, a space before the number; with the mark of
/// 进 (U+0332) or 退 (U+0305) after it (`None` for 平, which has no mark), and
/// without.
fn abbreviated(chinese: &str) -> (Option<String>, String) {
    let digit = |c: char| match NUMERALS_FOR_TEST.iter().position(|&n| n == c) {
        Some(i) => char::from_digit(i as u32 + 1, 10).unwrap_or(c),
        None => c,
    };
    let mut chars: Vec<char> = chinese.chars().map(digit).collect();
    let Some(number) = chars.pop() else {
        return (None, String::new());
    };
    let dir = chars.pop();
    let body: String = chars.into_iter().collect();
    let unmarked = format!("{body} {number}");
    let marked = match dir {
        Some('进') => Some(format!("{unmarked}\u{332}")),
        Some('退') => Some(format!("{unmarked}\u{305}")),
        _ => None,
    };
    (marked, unmarked)
}

const NUMERALS_FOR_TEST: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// Characters that make up moves, to drive the parsers into their deeper paths.
const ALPHABET: &[char] = &[
    '炮', '车', '马', '相', '仕', '帅', '兵', '卒', '将', '前', '中', '后', '进', '退', '平', '一',
    '二', '五', '九', '１', '3', '5', '9', '0', '+', '-', '.', '=', 'C', 'R', 'P', 'e', 'h', '2',
    ' ', 'é', '\u{301}', '🀄', '\u{332}', '\u{305}', 'Ｃ', '＝', '\u{3000}', '進',
];

proptest! {
    #[test]
    fn never_panics_on_any_text(text in "\\PC{0,10}") {
        for p in [Position::startpos(), pos(SOLDIERS_TWO_FILES), pos(RED_TANDEM)] {
            let _ = parse_move(&p, &text);
            for n in Notation::ALL {
                let _ = parse_as(&p, &text, n);
            }
        }
    }

    #[test]
    fn never_panics_on_move_like_text(
        chars in prop::collection::vec(prop::sample::select(ALPHABET), 0..7)
    ) {
        let text: String = chars.into_iter().collect();
        for p in [Position::startpos(), pos(SOLDIERS_TWO_FILES), pos(RED_TANDEM)] {
            let _ = parse_move(&p, &text);
        }
    }

    /// Along random games (with and without capture conversion), every legal move
    /// prints in every notation and reads back as itself. Its abbreviated record
    /// (the Chinese text without the direction, digits for both sides) reads back
    /// as itself with the direction's mark, and without it either as itself or as
    /// ambiguous among moves that include it, never as another move.
    #[test]
    fn every_legal_move_round_trips(
        choices in prop::collection::vec(any::<prop::sample::Index>(), 0..60),
        conversion in any::<bool>(),
    ) {
        let mut p = Position::startpos();
        p.set_conversion(conversion);
        for choice in choices {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            for &m in &moves {
                for n in Notation::ALL {
                    let text = format_move(&p, m, n);
                    prop_assert!(text.is_ok(), "{m} in {n}: {text:?}\n{p:?}");
                    let text = text.unwrap_or_default();
                    prop_assert_eq!(parse_as(&p, &text, n), Ok(m), "{} in {}", text, n);
                    prop_assert_eq!(parse_move(&p, &text), Ok(m), "{} auto", text);
                }
                let chinese = format_move(&p, m, Notation::Chinese).unwrap_or_default();
                let (marked, unmarked) = abbreviated(&chinese);
                if let Some(marked) = marked {
                    prop_assert_eq!(parse_as(&p, &marked, Notation::Chinese), Ok(m), "{}", marked);
                    prop_assert_eq!(parse_move(&p, &marked), Ok(m), "{} auto", marked);
                }
                match parse_move(&p, &unmarked) {
                    Ok(read) => prop_assert_eq!(read, m, "{}", unmarked),
                    Err(NotationError::Ambiguous { candidates, .. }) => {
                        prop_assert!(candidates.contains(&m), "{} {:?}", unmarked, candidates);
                    }
                    Err(e) => prop_assert!(false, "{}: {}", unmarked, e),
                }
            }
            p.make(*choice.get(&moves));
        }
    }
}
