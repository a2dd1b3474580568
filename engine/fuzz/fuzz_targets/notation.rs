//! Any text against a few positions: reading a move in any notation never
//! panics, and an accepted move writes in every notation to text that reads
//! back to the same move.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xq_engine::Position;
use xq_engine::notation::{Notation, format_move, parse_as, parse_move};

const POSITIONS: [&str; 3] = [
    xq_engine::START_FEN,
    // Tandem chariots and cannons, soldiers across the river.
    "3akab2/9/4c4/p1R1p1p1p/9/2P6/P3P1P1P/1CR1C4/9/2BAKAB2 w - - 0 1",
    // Three red soldiers on one file.
    "4k4/9/9/4P4/4P4/4P4/9/9/9/4K4 w - - 0 1",
];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let pos = Position::from_fen(POSITIONS[usize::from(first) % POSITIONS.len()])
        .expect("the fixed positions are valid");
    let Ok(mv) = parse_move(&pos, text) else {
        return;
    };
    for notation in Notation::ALL {
        let written = format_move(&pos, mv, notation).expect("a legal move writes");
        let read = parse_as(&pos, &written, notation).expect("written text reads back");
        assert_eq!(read, mv, "{written:?} in {notation:?}");
    }
});
