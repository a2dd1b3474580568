//! Repetition judgement (art. 23–26, RULES.md §5), in a form the search can call.
//!
//! # API for the search
//!
//! The search keeps one [`PlyEntry`] per ply on a stack, from the game's start
//! position (or the last capture) down to the current node:
//!
//! ```text
//! stack[0]      = PlyEntry::root(root_hash)             // no move led here
//! stack[i]      = PlyEntry { hash: pos.hash() after ply i,
//!                            check: ply i gave check,     // pos.in_check() after it
//!                            chase: ply i chased }        // see below
//! stack.last()  = the current node
//! ```
//!
//! At a node, [`judge_cycle`]`(&stack, occurrences, &rules)` answers: has the
//! current position occurred `occurrences` times (counting this one) among the
//! positions with the same side to move, and if so, what is the verdict, as a
//! [`Verdict`] relative to the side to move at the current node. The arbiter
//! passes `rules.repetition_count` (3, or 4); a search will usually pass 2, so that
//! it scores the first repetition inside its tree as the cycle's verdict.
//!
//! `chase` may be computed exactly with [`crate::rules::chase::chased_by`] (two
//! threat scans and a static exchange per attacked piece: costly at every node), or
//! left `false`, in which case only perpetual check is judged and chases count as
//! idle moves. `check` must be exact: a search usually knows it already.
//!
//! No position before a capture can occur again, so the stack may start at the
//! last capture (`halfmove_clock` entries back); older entries only cost time.
//! Positions are compared by their 64-bit Zobrist hash alone: two different
//! positions with the same side to move share a hash with probability about 2^-64
//! per pair compared (under 10^-15 for a 200-ply game), and that risk is accepted.
//!
//! # Judgement
//!
//! The moves between the first of the `occurrences` positions and the current one
//! are classified: a move that checks is a check, else a move that chases is a
//! chase, else it is idle (art. 27.4: the heaviest nature counts). Mate threats
//! (杀) are not detected and count as idle. A side is *forbidden* when none of its
//! moves in the span is idle (art. 25.2), and then:
//!
//! 1. one side checks with every move and the other does not: the checking side
//!    loses (art. 24.1, 26.1), whatever the other side did;
//! 2. both sides forbidden (mutual perpetual check included) or both allowed: draw
//!    (art. 24.2, 26.2, 26.3);
//! 3. one forbidden, the other allowed: the forbidden side loses (art. 24.3, 26.4;
//!    the rules make it vary its moves first and lose only if it repeats again;
//!    an engine game scores it as a loss at once, RULES.md §5).
//!
//! With `perpetual_check_loses` off a check counts as idle; with `chase_rule` off a
//! chase counts as idle.

use crate::rules::{Reason, RuleSet};

/// One ply of history, as repetition judgement needs it. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct PlyEntry {
    /// [`crate::Position::hash`] of the position after the ply.
    pub hash: u64,
    /// Whether the ply's move gave check.
    pub check: bool,
    /// Whether the ply's move chased an enemy piece.
    pub chase: bool,
}

impl PlyEntry {
    /// The entry of a position that no move led to (the start of the stack).
    pub const fn root(hash: u64) -> PlyEntry {
        PlyEntry {
            hash,
            check: false,
            chase: false,
        }
    }
}

/// The verdict on a repetition, relative to the side to move at the node judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Draw(Reason),
    SideToMoveWins(Reason),
    SideToMoveLoses(Reason),
}

impl Verdict {
    /// Why.
    pub fn reason(self) -> Reason {
        match self {
            Verdict::Draw(r) | Verdict::SideToMoveWins(r) | Verdict::SideToMoveLoses(r) => r,
        }
    }
}

/// What one side did in a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conduct {
    /// At least one idle move.
    Allowed,
    /// Every move a check.
    PerpetualCheck,
    /// Every move a chase (no check).
    PerpetualChase,
    /// Every move a check or a chase, both kinds present.
    CheckAndChase,
}

impl Conduct {
    fn forbidden(self) -> bool {
        self != Conduct::Allowed
    }

    fn reason(self) -> Reason {
        match self {
            Conduct::Allowed => Reason::Repetition,
            Conduct::PerpetualCheck => Reason::PerpetualCheck,
            Conduct::PerpetualChase => Reason::PerpetualChase,
            Conduct::CheckAndChase => Reason::PerpetualCheckAndChase,
        }
    }
}

/// Accumulates one side's moves.
#[derive(Clone, Copy, Default)]
struct Tally {
    idle: bool,
    check: bool,
    chase: bool,
}

impl Tally {
    fn conduct(self) -> Conduct {
        match (self.idle, self.check, self.chase) {
            (true, _, _) | (false, false, false) => Conduct::Allowed,
            (false, true, false) => Conduct::PerpetualCheck,
            (false, false, true) => Conduct::PerpetualChase,
            (false, true, true) => Conduct::CheckAndChase,
        }
    }
}

/// Judges the current position (`stack.last()`) if it is the `occurrences`-th
/// occurrence of its position; `None` otherwise (also for an empty stack or
/// `occurrences < 2`). See the module docs for the stack's layout and the verdict.
/// Cost: one pass over every second entry back to the first occurrence found.
pub fn judge_cycle(stack: &[PlyEntry], occurrences: u32, rules: &RuleSet) -> Option<Verdict> {
    let n = stack.len();
    let current = stack.last()?.hash;
    if occurrences < 2 {
        return None;
    }
    let mut seen = 1;
    let mut i = n - 1;
    let first = loop {
        if i < 2 {
            return None;
        }
        i -= 2;
        if stack[i].hash == current {
            seen += 1;
            if seen == occurrences {
                break i;
            }
        }
    };
    let mut tallies = [Tally::default(); 2];
    for (back, e) in stack[first + 1..].iter().rev().enumerate() {
        let t = &mut tallies[back & 1];
        let check = e.check && rules.perpetual_check_loses;
        let chase = e.chase && rules.chase_rule && !check;
        t.check |= check;
        t.chase |= chase;
        t.idle |= !check && !chase;
    }
    let mover = tallies[0].conduct();
    let to_move = tallies[1].conduct();
    Some(verdict(to_move, mover))
}

/// The verdict given the conduct of the side to move and of the other side.
fn verdict(to_move: Conduct, mover: Conduct) -> Verdict {
    use Conduct::PerpetualCheck as Pc;
    match (to_move, mover) {
        (Pc, Pc) => Verdict::Draw(Reason::MutualPerpetual),
        (Pc, _) => Verdict::SideToMoveLoses(Reason::PerpetualCheck),
        (_, Pc) => Verdict::SideToMoveWins(Reason::PerpetualCheck),
        (a, b) if a.forbidden() && b.forbidden() => Verdict::Draw(Reason::MutualPerpetual),
        (a, b) if !a.forbidden() && !b.forbidden() => Verdict::Draw(Reason::Repetition),
        (a, _) if a.forbidden() => Verdict::SideToMoveLoses(a.reason()),
        (_, b) => Verdict::SideToMoveWins(b.reason()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stack cycling through four positions `reps` times, with the given natures
    /// for the first mover's and the second mover's moves (`'+'` check, `'x'`
    /// chase, `'.'` idle), two moves each per cycle.
    fn cycle(first: [char; 2], second: [char; 2], plies: usize) -> Vec<PlyEntry> {
        let entry = |i: usize, c: char| PlyEntry {
            hash: 100 + (i % 4) as u64,
            check: c == '+',
            chase: c == 'x',
        };
        let mut stack = vec![PlyEntry::root(100)];
        for i in 1..=plies {
            let c = if i % 2 == 1 {
                first[(i / 2) % 2]
            } else {
                second[(i / 2 + 1) % 2]
            };
            stack.push(entry(i, c));
        }
        stack
    }

    fn judge(first: [char; 2], second: [char; 2]) -> Option<Verdict> {
        judge_cycle(&cycle(first, second, 8), 3, &RuleSet::STANDARD)
    }

    #[test]
    fn no_verdict_before_the_count() {
        let s = cycle(['+', '+'], ['.', '.'], 7);
        assert_eq!(judge_cycle(&s, 3, &RuleSet::STANDARD), None);
        let s = cycle(['+', '+'], ['.', '.'], 8);
        assert_eq!(judge_cycle(&s, 4, &RuleSet::STANDARD), None);
        assert!(judge_cycle(&s, 2, &RuleSet::STANDARD).is_some());
        assert_eq!(judge_cycle(&[], 3, &RuleSet::STANDARD), None);
    }

    #[test]
    fn verdicts() {
        use Reason::*;
        // Ply 8 was the second mover's, so the first mover is to move.
        assert_eq!(
            judge(['+', '+'], ['.', '.']),
            Some(Verdict::SideToMoveLoses(PerpetualCheck))
        );
        assert_eq!(
            judge(['.', '.'], ['+', '+']),
            Some(Verdict::SideToMoveWins(PerpetualCheck))
        );
        assert_eq!(
            judge(['+', '+'], ['+', '+']),
            Some(Verdict::Draw(MutualPerpetual))
        );
        assert_eq!(
            judge(['+', '+'], ['x', 'x']),
            Some(Verdict::SideToMoveLoses(PerpetualCheck))
        );
        assert_eq!(
            judge(['x', 'x'], ['.', 'x']),
            Some(Verdict::SideToMoveLoses(PerpetualChase))
        );
        assert_eq!(
            judge(['+', 'x'], ['.', '.']),
            Some(Verdict::SideToMoveLoses(PerpetualCheckAndChase))
        );
        assert_eq!(
            judge(['+', 'x'], ['x', 'x']),
            Some(Verdict::Draw(MutualPerpetual))
        );
        assert_eq!(
            judge(['+', '.'], ['x', '.']),
            Some(Verdict::Draw(Repetition))
        );
    }

    #[test]
    fn switches_turn_checks_and_chases_into_idle_moves() {
        let s = cycle(['+', 'x'], ['.', '.'], 8);
        let no_chase: RuleSet = "no-chase-rule".parse().unwrap();
        assert_eq!(
            judge_cycle(&s, 3, &no_chase),
            Some(Verdict::Draw(Reason::Repetition))
        );
        let s = cycle(['+', '+'], ['.', '.'], 8);
        let lenient = RuleSet {
            perpetual_check_loses: false,
            ..RuleSet::STANDARD
        };
        assert_eq!(
            judge_cycle(&s, 3, &lenient),
            Some(Verdict::Draw(Reason::Repetition))
        );
    }

    /// Run with `cargo test --release -p xq-engine judge_cycle_cost -- --ignored
    /// --nocapture` to print the cost per call.
    #[test]
    #[ignore = "timing; prints ns per call"]
    fn judge_cycle_cost() {
        let rules = RuleSet::STANDARD;
        let mut hit = cycle(['+', '+'], ['.', '.'], 8);
        let mut miss: Vec<PlyEntry> = (0..100)
            .map(|i| PlyEntry {
                hash: i * 7919,
                check: i % 3 == 0,
                chase: false,
            })
            .collect();
        for (name, stack) in [
            ("repetition found, 8 plies", &mut hit),
            ("no repetition, 100 plies", &mut miss),
        ] {
            let calls = 10_000_000u32;
            let start = std::time::Instant::now();
            let mut found = 0u32;
            for i in 0..calls {
                stack[0].chase = i & 1 == 0;
                found += u32::from(judge_cycle(std::hint::black_box(stack), 3, &rules).is_some());
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(calls);
            println!("judge_cycle, {name}: {ns:.1} ns/call ({found} verdicts)");
        }
    }
}
