//! Plain draws on material (简明和棋), for art. 27.3 (engine/RULES.md §5.3).
//!
//! Art. 27.3 excuses the threats on advisors and elephants that a piece makes
//! incidentally when it "占据防守要点，立即构成简明和棋": takes up a defensive post
//! and so at once makes the game a plain draw. Whether a position is a draw
//! needs a referee's judgement; this module gives the project's reading as a
//! test on material alone, which a quiet move does not change:
//!
//! - a side's *attacking force* is its chariots, horses, cannons and soldiers
//!   (wherever they stand) and, under capture conversion, its converted
//!   elephants; the general, advisors and unconverted elephants defend;
//! - a side *cannot win* when its attacking force is empty, or is a single
//!   chariot while the other side has a chariot too (车对车: the defending
//!   chariot holds, whatever advisors and elephants stand behind either);
//! - the position is a *plain draw* when neither side can win.
//!
//! Every other balance (a chariot against horse and cannon, a horse against a
//! full set of advisors and elephants, a chariot and a soldier against a
//! chariot) is a matter of technique, not a plain draw, so threats from a
//! defensive post count there like any other.

use crate::{Bitboard, Color, Kind, Position};

/// `side`'s attacking force (see the module docs).
fn attackers(pos: &Position, side: Color) -> Bitboard {
    let bishops = pos.pieces(side, Kind::Elephant) & pos.converted_bb();
    [Kind::Chariot, Kind::Horse, Kind::Cannon, Kind::Soldier]
        .into_iter()
        .fold(bishops, |acc, k| acc | pos.pieces(side, k))
}

/// Whether `side` cannot win with its material (see the module docs).
fn cannot_win(pos: &Position, side: Color) -> bool {
    let force = attackers(pos, side);
    let chariots = pos.pieces(side, Kind::Chariot);
    force.is_empty()
        || (force == chariots && chariots.count() == 1 && pos.pieces(!side, Kind::Chariot).any())
}

/// Whether `pos` is a plain draw on material: neither side can win (art. 27.3,
/// "简明和棋"; see the module docs).
pub fn is_plain_draw(pos: &Position) -> bool {
    cannot_win(pos, Color::Red) && cannot_win(pos, Color::Black)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(fen: &str) -> bool {
        is_plain_draw(&Position::from_fen(fen).expect("fen"))
    }

    #[test]
    fn chariot_against_chariot_is_a_plain_draw() {
        assert!(plain("5k3/9/9/9/9/9/9/9/4A4/3AK1R1r w"));
        assert!(plain("3k5/9/3r5/9/9/9/9/9/9/R2AKA3 w"));
        assert!(plain("3k5/9/9/9/9/9/9/9/9/3AK4 w"));
    }

    #[test]
    fn anything_more_is_not() {
        assert!(!plain("3k5/9/3r5/9/9/9/9/9/9/RN1AKA3 w"));
        assert!(!plain("3k5/9/3r5/9/9/9/4P4/9/9/R2AKA3 w"));
        assert!(!plain("3k5/9/9/9/9/9/9/9/9/R2AKA3 w"));
        assert!(!plain("3kc4/9/9/9/9/9/9/9/9/3AKA3 w"));
        assert!(!plain(
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"
        ));
    }
}
