//! Repetition judgement (arts. 23–26, engine/RULES.md §5), shared by the arbiter and
//! the search.
//!
//! # Stack
//!
//! The caller keeps one [`PlyEntry`] per ply, from the game's start position (or
//! the last capture) to the current position:
//!
//! ```text
//! stack[0]      = PlyEntry::root(root_hash)          // no move led here
//! stack[i]      = PlyEntry { hash: pos.hash() after ply i,
//!                            check: ply i gave check,
//!                            mv: Some(ply i's move) }
//! stack.last()  = the current position
//! ```
//!
//! [`judge_cycle`]`(&stack, occurrences, &rules, &pos, &mut memo)` answers: has the current
//! position `pos` occurred `occurrences` times (counting this one) among the
//! positions with the same side to move, and if so, what is the verdict, as a
//! [`Verdict`] relative to the side to move. The arbiter passes
//! `rules.repetition_count` (3, or 4); the search passes 2, so that it scores the
//! first repetition inside its tree as the cycle's verdict.
//!
//! Moves are classified only once a repetition is found: the current position is
//! the first occurrence's, so the cycle's moves are replayed from it and each is
//! classified exactly ([`classify`], a few microseconds a move, most of it the
//! mate-threat search). Only as many as the verdict needs ([`Natures`]): once
//! each side has a move that is idle by every rule, the cycle is a draw and
//! the rest stay unclassified. Ordinary plies cost nothing but their entry. No
//! position before a capture can occur again, so the stack may start at the
//! last capture. Positions are compared by their
//! 64-bit Zobrist hash alone: two different positions with the same side to move
//! share a hash with probability about 2^-64 per pair compared, and that risk is
//! accepted (a move that does not replay then counts as idle).
//!
//! # Judgement
//!
//! Each move of the span between the first of the `occurrences` positions and
//! the current one gets a [`Nature`]; the heaviest of its natures counts (art.
//! 27.4): check, then chase (捉), then mate threat (杀), then idle. Then, under the
//! Chinese code, a side is *forbidden* when none of its moves is idle (art. 25.2):
//! perpetual check, chase, mate threat, or any mixture (一将一捉, 一将一杀,
//! 一杀一捉). A threat by the general or a soldier alone is idle (arts. 27.1,
//! 27.2) unless every move of both sides is an attack (长打对长打, art. 28.14),
//! when it is a chase (art. 27.2, second sentence). The chased pieces may differ
//! from move to move (art. 28.12, "一子或数子"). Under the Asian code mate threats
//! and the general's and soldiers' threats are idle, and a side is forbidden only
//! by checking with every move, or by chasing one same piece (followed as it
//! moves) with every move, checks included (AXF rules 9, 12, 28, 32). Under the
//! Pikafish code ([`crate::rules::pikafish`], engine/PIKAFISH_RULES.md) a move's
//! chases are the pieces its side chases after it and did not chase before it;
//! a side checking with every move loses, any other check in the span draws the
//! repetition, and otherwise a side that chases one same piece with every move
//! (followed as it moves, as under the Asian code) is forbidden.
//!
//! 1. one side checks with every move and the other does not: the checking side
//!    loses (arts. 24.1, 26.1), whatever the other side did;
//! 2. both sides forbidden (mutual perpetual check included) or both allowed:
//!    draw (arts. 24.2, 26.2, 26.3);
//! 3. one forbidden, the other allowed: the forbidden side loses (arts. 24.3,
//!    26.4; the rules make it vary its moves first and lose only if it repeats
//!    again; an engine game scores it as a loss at once, engine/RULES.md §5).
//!
//! With `perpetual_check_loses` off a check counts as idle; with `chase_rule` off
//! chases and mate threats count as idle.

use crate::rules::chase::{Chase, chased_by, follow};
use crate::rules::mate::{MateMemo, mate_threat_stands, threatens_mate};
use crate::rules::pikafish;
use crate::rules::ruleset::Code;
use crate::rules::{Reason, RuleSet};
use crate::{Move, Position};

/// One ply of history, as repetition judgement needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct PlyEntry {
    /// [`crate::Position::hash`] of the position after the ply.
    pub hash: u64,
    /// Whether the ply's move gave check.
    pub check: bool,
    /// The ply's move; `None` for the first entry.
    pub mv: Option<Move>,
}

impl PlyEntry {
    /// The entry of a position that no move led to (the start of the stack).
    pub const fn root(hash: u64) -> PlyEntry {
        PlyEntry {
            hash,
            check: false,
            mv: None,
        }
    }
}

/// What a move is for repetition judgement (art. 28): all its natures; the
/// judgement weighs them (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Nature {
    /// It gives check (将, art. 28.1).
    pub check: bool,
    /// It threatens mate by checks (杀, art. 28.2; Chinese code; looked for only
    /// when the move neither checks nor chases; under `new_mate_threats` only a
    /// threat the mover did not already have).
    pub mate_threat: bool,
    /// What it chases (捉, art. 28.3; not looked for on a check under the Chinese
    /// code, where the check outweighs it). Under the Pikafish code every piece
    /// it newly chases is in `major`.
    pub chase: Chase,
}

impl Nature {
    /// The heaviest nature as a word: `check`, `chase`, `mate-threat`,
    /// `minor-chase` (a threat by the general or a soldier alone) or `idle`.
    pub fn token(&self) -> &'static str {
        if self.check {
            "check"
        } else if self.chase.major.any() {
            "chase"
        } else if self.mate_threat {
            "mate-threat"
        } else if self.chase.minor.any() {
            "minor-chase"
        } else {
            "idle"
        }
    }
}

/// Classifies `mv` (legal in `pos`) under `rules`, the mate-threat tests
/// answered from `memo` where they were made before. `pos` is left as it was.
pub fn classify(pos: &mut Position, mv: Move, rules: &RuleSet, memo: &mut MateMemo) -> Nature {
    let check = pos.gives_check(mv);
    let mut nature = Nature {
        check,
        ..Nature::default()
    };
    if !rules.chase_rule {
        return nature;
    }
    let chinese = rules.code == Code::Chinese;
    if rules.code == Code::Pikafish {
        nature.chase.major = pikafish::chased_by(pos, mv);
        return nature;
    }
    if !(check && chinese && rules.perpetual_check_loses) {
        nature.chase = chased_by(pos, mv, rules);
    }
    nature.mate_threat = chinese
        && !check
        && nature.chase.major.is_empty()
        && threatens_mate(pos, mv, memo)
        && !(rules.new_mate_threats && mate_threat_stands(pos, memo));
    nature
}

/// One classified ply of a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Ply {
    /// The move, when known (the Asian code follows chased pieces through it).
    pub mv: Option<Move>,
    pub nature: Nature,
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
    /// Every move a chase or a mate threat (no check).
    PerpetualChase,
    /// Every move a check, a chase or a mate threat, checks and others present.
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

/// The index in `stack` of the first of `occurrences` occurrences of the current
/// position (the last entry), looking back every second entry; `None` when it has
/// occurred fewer times (also for an empty stack or `occurrences < 2`).
pub fn find_cycle(stack: &[PlyEntry], occurrences: u32) -> Option<usize> {
    let current = stack.last()?.hash;
    if occurrences < 2 {
        return None;
    }
    let mut seen = 1;
    let mut i = stack.len() - 1;
    loop {
        if i < 2 {
            return None;
        }
        i -= 2;
        if stack[i].hash == current {
            seen += 1;
            if seen == occurrences {
                return Some(i);
            }
        }
    }
}

/// How many of a cycle's moves [`judge_span`] classifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Natures {
    /// Only those the verdict needs: each side's moves until one is idle under
    /// every code and reading (no check, no chase of any kind, no mate
    /// threat); when both sides have such a move the cycle is drawn (arts.
    /// 24.2, 26.2; a side with an idle move is allowed under every code) and
    /// the other moves stay unclassified. Otherwise every move is classified.
    #[default]
    AsNeeded,
    /// Every move, for a verdict explained move by move.
    Every,
}

/// The verdict on the cycle whose moves are `span` (the entries after its
/// first position), replayed from `pos`, the position it starts from and ends
/// in, and each move's nature where [`Natures`] had it classified (`None`
/// elsewhere), with `memo` for the mate-threat tests. A move that is missing
/// or does not replay, and every move after it, has only its check flag. A
/// move the span plays again from the same position (a cycle repeated) is
/// classified once: its nature depends on nothing else. The verdict is the
/// same whatever `natures` asks.
pub fn judge_span(
    pos: &Position,
    span: &[PlyEntry],
    rules: &RuleSet,
    memo: &mut MateMemo,
    natures: Natures,
) -> (Verdict, Vec<Option<Nature>>) {
    let mut classifier = Classifier {
        rules,
        memo,
        seen: Vec::with_capacity(span.len()),
    };
    let mut found: Vec<Option<Nature>> = vec![None; span.len()];
    if natures == Natures::AsNeeded {
        let mut idle = [false; 2];
        replay_span(pos, span, |i, replay, entry| {
            let side = (span.len() - 1 - i) % 2;
            if idle[side] || entry.check {
                return;
            }
            let nature = classifier.nature(replay, entry);
            idle[side] = nature == Nature::default();
            found[i] = Some(nature);
        });
        if idle == [true, true] {
            return (Verdict::Draw(Reason::Repetition), found);
        }
    }
    replay_span(pos, span, |i, replay, entry| {
        if found[i].is_none() {
            found[i] = Some(classifier.nature(replay, entry));
        }
    });
    let plies: Vec<Ply> = span
        .iter()
        .zip(&found)
        .map(|(e, n)| Ply {
            mv: e.mv,
            nature: n.unwrap_or_default(),
        })
        .collect();
    (verdict(&plies, rules), found)
}

/// Replays `span` from `pos`, calling `visit(i, position before ply i, entry
/// i)` for each ply, the position `None` from the first move that is missing
/// or does not replay on.
fn replay_span(
    pos: &Position,
    span: &[PlyEntry],
    mut visit: impl FnMut(usize, Option<&mut Position>, &PlyEntry),
) {
    let mut replay = Some(pos.clone());
    for (i, entry) in span.iter().enumerate() {
        match (&mut replay, entry.mv) {
            (Some(p), Some(mv)) if p.is_legal(mv) => {
                visit(i, Some(&mut *p), entry);
                p.make(mv);
            }
            _ => {
                replay = None;
                visit(i, None, entry);
            }
        }
    }
}

/// Classifies a span's moves, each (position, move) once.
struct Classifier<'a> {
    rules: &'a RuleSet,
    memo: &'a mut MateMemo,
    /// (position's hash, move, nature) of the moves classified so far.
    seen: Vec<(u64, Move, Nature)>,
}

impl Classifier<'_> {
    /// The nature of `entry`'s move played from `replay` (where it is legal),
    /// or only its check flag when there is no such position.
    fn nature(&mut self, replay: Option<&mut Position>, entry: &PlyEntry) -> Nature {
        let (Some(p), Some(mv)) = (replay, entry.mv) else {
            return Nature {
                check: entry.check,
                ..Nature::default()
            };
        };
        let key = p.hash();
        if let Some(&(_, _, nature)) = self.seen.iter().find(|&&(h, m, _)| h == key && m == mv) {
            return nature;
        }
        let nature = classify(p, mv, self.rules, self.memo);
        self.seen.push((key, mv, nature));
        nature
    }
}

/// Judges the current position `pos` (`stack.last()`) if it is the
/// `occurrences`-th occurrence of its position; `None` otherwise. See the module
/// docs for the stack's layout and the verdict; `memo` keeps the answers of the
/// mate-threat tests for the next call.
pub fn judge_cycle(
    stack: &[PlyEntry],
    occurrences: u32,
    rules: &RuleSet,
    pos: &Position,
    memo: &mut MateMemo,
) -> Option<Verdict> {
    let first = find_cycle(stack, occurrences)?;
    let span = &stack[first + 1..];
    Some(judge_span(pos, span, rules, memo, Natures::AsNeeded).0)
}

/// The verdict on a cycle whose classified plies are `plies`, the last one
/// played by the side not to move now.
pub fn verdict(plies: &[Ply], rules: &RuleSet) -> Verdict {
    let sides = [side_plies(plies, 0), side_plies(plies, 1)];
    let conduct = match rules.code {
        Code::Chinese => chinese_conduct(&sides, rules),
        Code::Asian | Code::Pikafish => asian_conduct(plies, rules),
    };
    if rules.code == Code::Pikafish
        && !conduct.contains(&Conduct::PerpetualCheck)
        && rules.perpetual_check_loses
        && plies.iter().any(|p| p.nature.check)
    {
        return Verdict::Draw(Reason::Repetition);
    }
    decide(conduct[1], conduct[0])
}

/// The plies of one side: `back` 0 for the side that played the last ply.
fn side_plies(plies: &[Ply], back: usize) -> impl Iterator<Item = &Ply> + Clone {
    plies.iter().rev().skip(back).step_by(2)
}

/// Conduct under the Chinese code of [the last ply's side, the other side].
fn chinese_conduct<'a, I>(sides: &[I; 2], rules: &RuleSet) -> [Conduct; 2]
where
    I: Iterator<Item = &'a Ply> + Clone,
{
    let check = |n: &Nature| n.check && rules.perpetual_check_loses;
    let attack = |n: &Nature| {
        check(n)
            || (rules.chase_rule && (n.mate_threat || n.chase.major.any() || n.chase.minor.any()))
    };
    let mutual = sides.iter().all(|s| s.clone().all(|p| attack(&p.nature)));
    sides.clone().map(|side| {
        let (mut idle, mut checks, mut others) = (false, false, false);
        for p in side {
            let n = &p.nature;
            if check(n) {
                checks = true;
            } else if rules.chase_rule
                && (n.chase.major.any() || n.mate_threat || (mutual && n.chase.minor.any()))
            {
                others = true;
            } else {
                idle = true;
            }
        }
        match (idle, checks, others) {
            (true, _, _) | (false, false, false) => Conduct::Allowed,
            (false, true, false) => Conduct::PerpetualCheck,
            (false, false, true) => Conduct::PerpetualChase,
            (false, true, true) => Conduct::CheckAndChase,
        }
    })
}

/// Conduct under the Asian code of [the last ply's side, the other side]: every
/// move a check, or one same piece chased by every move, followed through the
/// other side's moves.
fn asian_conduct(plies: &[Ply], rules: &RuleSet) -> [Conduct; 2] {
    std::array::from_fn(|back| {
        let n = plies.len();
        if n <= back {
            return Conduct::Allowed;
        }
        let mut own = ((n - 1 - back) % 2..n - back).step_by(2);
        if rules.perpetual_check_loses && own.clone().all(|i| plies[i].nature.check) {
            return Conduct::PerpetualCheck;
        }
        let Some(first) = own.next().filter(|_| rules.chase_rule) else {
            return Conduct::Allowed;
        };
        let mut chased = plies[first].nature.chase.major;
        let mut prev = first;
        for i in own {
            if let Some(reply) = plies[prev + 1].mv {
                chased = follow(chased, reply);
            }
            chased &= plies[i].nature.chase.major;
            prev = i;
        }
        if chased.any() {
            Conduct::PerpetualChase
        } else {
            Conduct::Allowed
        }
    })
}

/// The verdict given the conduct of the side to move and of the other side.
fn decide(to_move: Conduct, mover: Conduct) -> Verdict {
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
    use crate::{Bitboard, Square};

    fn nature(c: char) -> Nature {
        let target = Bitboard::from_square(Square::parse("e5").unwrap());
        Nature {
            check: c == '+',
            mate_threat: c == 'k',
            chase: Chase {
                major: if c == 'x' { target } else { Bitboard::EMPTY },
                minor: if c == 'p' { target } else { Bitboard::EMPTY },
            },
        }
    }

    /// Two cycles of four plies: the first mover's natures `first`, the second
    /// mover's `second`; the first mover is to move after them.
    fn plies(first: [char; 2], second: [char; 2]) -> Vec<Ply> {
        (0..8)
            .map(|i| {
                let c = if i % 2 == 0 {
                    first[(i / 2) % 2]
                } else {
                    second[(i / 2) % 2]
                };
                Ply {
                    mv: None,
                    nature: nature(c),
                }
            })
            .collect()
    }

    fn judge(first: [char; 2], second: [char; 2]) -> Verdict {
        verdict(&plies(first, second), &RuleSet::STANDARD)
    }

    fn stack(plies: usize) -> Vec<PlyEntry> {
        (0..=plies)
            .map(|i| PlyEntry {
                hash: 100 + (i % 4) as u64,
                check: false,
                mv: None,
            })
            .collect()
    }

    #[test]
    fn cycles_are_found_at_the_count() {
        assert_eq!(find_cycle(&stack(7), 3), None);
        assert_eq!(find_cycle(&stack(8), 3), Some(0));
        assert_eq!(find_cycle(&stack(8), 4), None);
        assert_eq!(find_cycle(&stack(8), 2), Some(4));
        assert_eq!(find_cycle(&[], 3), None);
        assert_eq!(find_cycle(&stack(8), 1), None);
    }

    #[test]
    fn verdicts() {
        use Reason::*;
        assert_eq!(
            judge(['+', '+'], ['.', '.']),
            Verdict::SideToMoveLoses(PerpetualCheck)
        );
        assert_eq!(
            judge(['.', '.'], ['+', '+']),
            Verdict::SideToMoveWins(PerpetualCheck)
        );
        assert_eq!(
            judge(['+', '+'], ['+', '+']),
            Verdict::Draw(MutualPerpetual)
        );
        assert_eq!(
            judge(['+', '+'], ['x', 'x']),
            Verdict::SideToMoveLoses(PerpetualCheck)
        );
        assert_eq!(
            judge(['x', 'x'], ['.', 'x']),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
        assert_eq!(
            judge(['+', 'x'], ['.', '.']),
            Verdict::SideToMoveLoses(PerpetualCheckAndChase)
        );
        assert_eq!(
            judge(['+', 'x'], ['x', 'x']),
            Verdict::Draw(MutualPerpetual)
        );
        assert_eq!(judge(['+', '.'], ['x', '.']), Verdict::Draw(Repetition));
    }

    #[test]
    fn mate_threats_are_forbidden_under_the_chinese_code_only() {
        use Reason::*;
        assert_eq!(
            judge(['k', 'k'], ['.', '.']),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
        assert_eq!(
            judge(['k', 'x'], ['.', '.']),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
        assert_eq!(
            judge(['+', 'k'], ['.', '.']),
            Verdict::SideToMoveLoses(PerpetualCheckAndChase)
        );
        let asian: RuleSet = "asian".parse().unwrap();
        assert_eq!(
            verdict(&plies(['k', 'k'], ['.', '.']), &asian),
            Verdict::Draw(Repetition)
        );
    }

    #[test]
    fn soldier_threats_count_only_in_mutual_perpetual_attack() {
        use Reason::*;
        assert_eq!(judge(['p', 'p'], ['.', '.']), Verdict::Draw(Repetition));
        assert_eq!(
            judge(['.', 'p'], ['x', 'x']),
            Verdict::SideToMoveWins(PerpetualChase)
        );
        // Every move of both sides attacks: the soldier's threats are chases.
        assert_eq!(
            judge(['p', 'p'], ['x', 'x']),
            Verdict::Draw(MutualPerpetual)
        );
        assert_eq!(
            judge(['p', 'k'], ['x', '+']),
            Verdict::Draw(MutualPerpetual)
        );
        let asian: RuleSet = "asian".parse().unwrap();
        assert_eq!(
            verdict(&plies(['p', 'p'], ['x', 'x']), &asian),
            Verdict::SideToMoveWins(PerpetualChase)
        );
    }

    #[test]
    fn asian_code_allows_one_check_one_chase_and_wants_one_piece() {
        use Reason::*;
        let asian: RuleSet = "asian".parse().unwrap();
        assert_eq!(
            verdict(&plies(['+', 'x'], ['.', '.']), &asian),
            Verdict::Draw(Repetition)
        );
        assert_eq!(
            verdict(&plies(['x', 'x'], ['.', '.']), &asian),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
        assert_eq!(
            verdict(&plies(['+', '+'], ['x', 'x']), &asian),
            Verdict::SideToMoveLoses(PerpetualCheck)
        );
        // Two targets in turn: allowed under the Asian code, a chase under the
        // Chinese one (art. 28.12).
        let sq = |s: &str| Bitboard::from_square(Square::parse(s).unwrap());
        let mut turns = plies(['x', 'x'], ['.', '.']);
        for (i, p) in turns.iter_mut().enumerate() {
            if i % 4 == 2 {
                p.nature.chase.major = sq("a5");
            }
        }
        assert_eq!(verdict(&turns, &asian), Verdict::Draw(Repetition));
        assert_eq!(
            verdict(&turns, &RuleSet::STANDARD),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
        // The chased piece is followed as it moves: e5 to e6 and back.
        let mut moving = plies(['x', 'x'], ['.', '.']);
        let (down, up) = (
            Move::parse_coords("e5e6").unwrap(),
            Move::parse_coords("e6e5").unwrap(),
        );
        for (i, p) in moving.iter_mut().enumerate() {
            match i % 4 {
                0 => p.nature.chase.major = sq("e5"),
                1 => p.mv = Some(down),
                2 => p.nature.chase.major = sq("e6"),
                _ => p.mv = Some(up),
            }
        }
        assert_eq!(
            verdict(&moving, &asian),
            Verdict::SideToMoveLoses(PerpetualChase)
        );
    }

    #[test]
    fn switches_turn_checks_and_chases_into_idle_moves() {
        let no_chase: RuleSet = "no-chase-rule".parse().unwrap();
        for rules in [no_chase, "no-chase-rule+asian".parse().unwrap()] {
            assert_eq!(
                verdict(&plies(['+', 'x'], ['.', '.']), &rules),
                Verdict::Draw(Reason::Repetition)
            );
            assert_eq!(
                verdict(&plies(['k', 'x'], ['.', '.']), &rules),
                Verdict::Draw(Reason::Repetition)
            );
        }
        let lenient = RuleSet {
            perpetual_check_loses: false,
            ..RuleSet::STANDARD
        };
        assert_eq!(
            verdict(&plies(['+', '+'], ['.', '.']), &lenient),
            Verdict::Draw(Reason::Repetition)
        );
    }
}
