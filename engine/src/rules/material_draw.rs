//! Pikafish's draws for insufficient material, for the `pikafish` code
//! (engine/PIKAFISH_RULES.md §6 states them from Pikafish's `rule_judge`).
//!
//! Only when no soldier is left on the board, and counting the chariots, horses
//! and cannons of both sides (the attacking force):
//! - none left: a draw at once;
//! - one cannon and nothing else, its side without advisors: a draw at once when
//!   the other side has no advisor, or one and the cannon's side no elephant; a
//!   draw unless a mate in one when the other side has one advisor and the
//!   cannon's side elephants, or two advisors and the cannon's side no elephant;
//! - one cannon each and nothing else, no advisor on the board: a draw at once
//!   without elephants, else unless a mate in one.
//!
//! The mate in one is Pikafish's: a move after which the other side has no legal
//! move, stalemate included. Neither the 1999 rules nor the AXF's declare such
//! draws (art. 4.2.1 leaves a game without winning chances to the players or the
//! arbiter), so the other codes leave them to the natural limit or the runner's
//! adjudication.

use crate::{Bitboard, Color, Kind, Position};

/// What the material on the board says (Pikafish's `DrawLevel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaterialDraw {
    /// Enough material to go on.
    No,
    /// A draw at once, whatever the position.
    Direct,
    /// A draw unless the side to move has a move after which the other side has
    /// no legal move.
    UnlessMateInOne,
}

/// The draw level of `pos`'s material. Converted elephants (bishops of the
/// capture-conversion variant) are an attacking force, so there is no draw
/// while one is on the board; other converted pieces count as their kind for
/// their new side.
pub fn material_draw(pos: &Position) -> MaterialDraw {
    let count = |b: Bitboard| b.count();
    if pos.kind_bb(Kind::Soldier).any() || (pos.converted_bb() & pos.kind_bb(Kind::Elephant)).any()
    {
        return MaterialDraw::No;
    }
    let force = |c: Color| {
        pos.color_bb(c)
            & (pos.kind_bb(Kind::Chariot) | pos.kind_bb(Kind::Horse) | pos.kind_bb(Kind::Cannon))
    };
    let lone_cannon = |c: Color| {
        let f = force(c);
        f.count() == 1 && (f & pos.kind_bb(Kind::Cannon)).any()
    };
    let advisors = |c: Color| count(pos.pieces(c, Kind::Advisor));
    let elephants = |c: Color| count(pos.pieces(c, Kind::Elephant));
    let (red, black) = (force(Color::Red), force(Color::Black));
    if (red | black).is_empty() {
        return MaterialDraw::Direct;
    }
    for (side, other) in [(Color::Red, black), (Color::Black, red)] {
        if lone_cannon(side) && other.is_empty() && advisors(side) == 0 {
            return match (advisors(!side), elephants(side)) {
                (0, _) | (1, 0) => MaterialDraw::Direct,
                (1, _) | (2, 0) => MaterialDraw::UnlessMateInOne,
                _ => MaterialDraw::No,
            };
        }
    }
    if lone_cannon(Color::Red) && lone_cannon(Color::Black) && pos.kind_bb(Kind::Advisor).is_empty()
    {
        return if pos.kind_bb(Kind::Elephant).is_empty() {
            MaterialDraw::Direct
        } else {
            MaterialDraw::UnlessMateInOne
        };
    }
    MaterialDraw::No
}

/// Whether the side to move has a move after which the other side has no legal
/// move (Pikafish's mate-in-one test for [`MaterialDraw::UnlessMateInOne`]).
/// `pos` is left as it was.
pub fn leaves_no_reply(pos: &mut Position) -> bool {
    pos.legal_moves().iter().any(|&m| {
        let undo = pos.make(m);
        let none = !pos.has_legal_move();
        pos.unmake(undo);
        none
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(fen: &str) -> MaterialDraw {
        material_draw(&Position::from_fen(fen).expect("fen"))
    }

    #[test]
    fn draw_levels_follow_pikafish() {
        use MaterialDraw::*;
        // Generals, advisors and elephants only.
        assert_eq!(level("3akab2/9/4b4/9/9/9/9/4B4/4A4/3AK4 w"), Direct);
        // A soldier anywhere, or a chariot or a horse: no draw.
        assert_eq!(level("3akab2/9/4b4/9/9/9/4P4/4B4/4A4/3AK4 w"), No);
        assert_eq!(level("3akab2/9/4b4/9/9/9/9/4B4/4A4/3AKN3 w"), No);
        // A lone red cannon, Red without advisors, Black with none: at once.
        assert_eq!(level("4k4/9/4b4/9/9/9/9/4B4/4C4/4K4 w"), Direct);
        // Black with one advisor: at once without red elephants, else mate test.
        assert_eq!(level("4ka3/9/9/9/9/9/9/9/4C4/4K4 w"), Direct);
        assert_eq!(level("4ka3/9/9/9/9/9/9/4B4/3C5/4K4 w"), UnlessMateInOne);
        // Two black advisors: the mate test without red elephants, else no draw.
        assert_eq!(level("3aka3/9/9/9/9/9/9/9/4C4/4K4 w"), UnlessMateInOne);
        assert_eq!(level("3aka3/9/9/9/9/9/9/4B4/3C5/4K4 w"), No);
        // The cannon's side with an advisor: no draw.
        assert_eq!(level("4k4/9/9/9/9/9/9/9/4C4/3AK4 w"), No);
        // One cannon each, no advisors: at once without elephants.
        assert_eq!(level("4k4/9/4c4/9/9/9/9/9/3C5/4K4 w"), Direct);
        assert_eq!(level("4k4/9/b3c4/9/9/9/9/9/3C5/4K4 w"), UnlessMateInOne);
        assert_eq!(level("4k4/9/b3c4/9/9/9/9/9/3C5/3AK4 w"), No);
    }
}
