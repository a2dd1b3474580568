use super::*;

fn search_fen(fen: &str, limits: &Limits) -> SearchResult {
    let mut pos = Position::from_fen(fen).unwrap();
    let mut s = Searcher::new(4);
    s.search(
        &mut pos,
        &[],
        limits,
        &Params::default(),
        &SearchRules::default(),
        |_| {},
    )
}

#[test]
fn finds_mate_in_one() {
    let r = search_fen("3k5/1R7/9/9/9/9/9/9/R8/4K4 w - - 0 1", &Limits::depth(3));
    assert_eq!(r.score, MATE - 1);
    let mut pos = Position::from_fen("3k5/1R7/9/9/9/9/9/9/R8/4K4 w - - 0 1").unwrap();
    pos.make(r.best_move.unwrap());
    assert!(pos.in_check() && !pos.has_legal_move());
}

#[test]
fn fixed_node_count_is_deterministic() {
    let a = search_fen(crate::START_FEN, &Limits::nodes(20_000));
    let b = search_fen(crate::START_FEN, &Limits::nodes(20_000));
    assert_eq!(a, b);
    assert_eq!(a.nodes, 20_000);
}

#[test]
#[ignore = "prints FENs"]
fn print_line_fens() {
    for line in [
        "h2e2 h9g7",
        "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7",
        "c3c4 g6g5",
        "g0e2 h7e7",
        "h2e2 h7e7 h0g2 h9g7",
        "h2e2 b7e7",
        "b2d2 h9g7",
        "h0g2 c6c5",
        "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 c6c5 b0c2 b7a7 a0b0 a9b9",
        "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 h0h6 c6c5 h6g6 a9b9 b0c2 b7b3 g3g4 h7h3",
        "h2e2 b9c7 h0g2 a9b9 i0h0 h9g7 h0h4 b7b3 b0c2 c6c5 b2a2 b9b5 a0b0 g6g5",
        "c3c4 h7e7 h0g2 h9g7 i0h0 i9h9 b0c2 b9c7 b2b6 h9h5 g3g4 c6c5 h2h1 g7f5",
        "h2e2 h7e7 h0g2 h9g7 i0h0 i9i8 h0h6 b9c7 h6g6 i8f8 b0c2 f8f3 a0a1 b7b3",
        "g0e2 c6c5 h0g2 b9c7 i0h0 h9g7 b2b6 a9b9 c3c4 c5c4 e2c4 b7b3",
    ] {
        let mut pos = Position::startpos();
        for m in line.split(' ') {
            let mv = Move::parse_coords(m).unwrap();
            if !pos.is_legal(mv) {
                println!("ILLEGAL {line}: {m}");
                break;
            }
            pos.make(mv);
        }
        println!("\"{}\",", pos.to_fen());
    }
}
