//! Any text: parsing a FEN never panics, and an accepted FEN prints to a
//! FEN that parses back to the same position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xq_engine::Position;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(pos) = Position::from_fen(text) {
        let fen = pos.to_fen();
        let again = Position::from_fen(&fen).expect("a printed FEN parses");
        assert_eq!(again.to_fen(), fen);
    }
});
