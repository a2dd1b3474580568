//! Threats and chases (捉, arts. 27–29; engine/RULES.md §5 gives each reading).
//!
//! A *threat* is a pair (attacking piece, enemy target). A side threatens a target
//! when all of these hold:
//! - the target has material value (art. 25.3): not the general, not a soldier on
//!   its own side of the river;
//! - the capture is legal (art. 29.4, "the capture must not be illegal"). Checks
//!   already on the board are set aside ([`standing_checks`]): a side in check
//!   keeps its standing threats, so a move that answers a check does not create
//!   them (art. 29.2);
//! - the target is not an equal piece that may capture the attacker back: that is
//!   an offer to exchange (兑, art. 28.5), an idle move;
//! - the exchange on the target's point wins material ([`see`] > 0): the target is
//!   unprotected, falsely protected (a pinned defender, a defender that may not
//!   recapture), under-protected (art. 28.16), or worth more than the attacker
//!   (art. 25.3: a horse or a cannon attacking a chariot chases it even when it is
//!   protected);
//! - the capture does not let the other side mate at once (art. 29.4, "不致被将死",
//!   read as mate in one).
//!
//! Under the Chinese code a side also threatens a target it wins by a check and
//! then a capture (art. 29.1, "通过连续照将吃子"; one check, see [`CHECKS_BEFORE_CAPTURE`]):
//! a quiet checking move after every reply to which some piece wins the target as
//! above, the mate test included, but for the offer to exchange: the checking
//! side moves first and takes first, so an equal target that could take back
//! offers no exchange after the reply. The target is followed through the reply: a
//! target that blocks the check (or takes the checking piece) is won where it
//! went. No check is set aside after the reply: a reply
//! that checks back must be answered, so only a capture that answers it counts.
//! Such a threat is keyed by the checking piece, over all its checking moves; it is
//! *minor* when after some reply only the general or a soldier wins the target.
//!
//! A move *chases* a target when it creates a threat on it (art. 29.2):
//! - a direct threat: a pair that holds after the move and did not hold before
//!   it, the moved piece being the same attacker before and after (decided per
//!   attacker and target). Discovered attacks and undermined protections count,
//!   since both sides of the comparison are computed on whole positions. Under
//!   the `chase_per_target` reading a target is chased only when no piece
//!   threatened it before the move;
//! - a threat through a check (Chinese code, the mover not in check before its
//!   move): one that its checking piece (at its old point, if it moved) did not
//!   have before the move, on a target that no piece threatened directly before
//!   the move. A piece that already hangs is not chased anew by winning it
//!   through a check.
//!
//! A move that answers a check keeps the mover's standing threats (the check is
//! set aside before the move), so it creates none by answering; under the
//! `check_reply_chases` reading nothing is set aside before such a move, so the
//! captures the check forbade and the answer allows are new, and under the
//! Chinese code its threats through a check count as for any other move.
//!
//! Threats by the general or a soldier alone, direct or through a check, are
//! [`Chase::minor`] (idle, arts. 27.1, 27.2, unless the cycle is a mutual perpetual
//! attack under the Chinese code); the general may still take part in the exchange
//! that follows ("借帅之力"). Under the Chinese code, threats on advisors and
//! elephants made by a piece that takes up a post on its own side of the river
//! are idle when the position is a plain draw on material (art. 27.3, "占据防守要点，
//! 立即构成简明和棋 … 附带产生的捉士相"; [`is_plain_draw`]).

use arrayvec::ArrayVec;

use crate::rules::mate::{checking_moves, mates_in_one};
use crate::rules::plain_draw::is_plain_draw;
use crate::rules::ruleset::{Code, RuleSet};
use crate::rules::see::{capture_is_safe, judge_value, see};
use crate::{Bitboard, Color, Kind, Move, Piece, Position, Square};

/// How many checks may precede the capture in a threat through checks (art.
/// 29.1). Longer series are not looked for.
pub const CHECKS_BEFORE_CAPTURE: u32 = 1;

/// Whether `piece` on `sq` has material value as a chase target (art. 25.3).
pub fn is_chase_target(piece: Piece, sq: Square) -> bool {
    match piece.kind() {
        Kind::General => false,
        Kind::Soldier => !sq.rank().is_home_for(piece.color()),
        _ => true,
    }
}

/// Whether threats by `kind` alone are minor (arts. 27.1, 27.2).
fn is_minor_attacker(kind: Kind) -> bool {
    matches!(kind, Kind::General | Kind::Soldier)
}

/// The pieces giving check to either general in `pos` (the flying general
/// included): the checks that threat judgement sets aside.
pub fn standing_checks(pos: &Position) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    for side in [Color::Red, Color::Black] {
        if !pos.is_check(side) {
            continue;
        }
        let k = pos.general(side);
        out |= pos.attackers_to(k, !side, pos.occupied());
        let g = pos.general(!side);
        let file = pos.attacks_from(k, Piece::new(side, Kind::Chariot), pos.occupied());
        if file.contains(g) && g.file() == k.file() {
            out.insert(g);
        }
    }
    out
}

/// The most pieces on the board, so the most attackers or checking pieces of
/// one side (a capture never adds a piece, conversion included).
const MAX_PIECES: usize = 32;

/// One side's direct threats in a position, per attacking piece.
#[derive(Clone, Debug, Default)]
pub struct Threats {
    /// (attacker, targets) for direct captures and exchanges, one entry per
    /// attacker.
    direct: ArrayVec<(Square, Bitboard), MAX_PIECES>,
}

impl Threats {
    /// The targets `sq` threatens directly or through an exchange.
    pub fn direct_of(&self, sq: Square) -> Bitboard {
        self.direct
            .iter()
            .find(|(a, _)| *a == sq)
            .map_or(Bitboard::EMPTY, |(_, t)| *t)
    }

    /// Every threatened target, by any piece.
    pub fn targets(&self) -> Bitboard {
        self.direct
            .iter()
            .fold(Bitboard::EMPTY, |acc, (_, t)| acc | *t)
    }
}

/// What one piece wins through its quiet checking moves (art. 29.1), over all
/// of them. Invariant: `major` is a subset of `targets`.
#[derive(Clone, Copy, Debug)]
struct WonByCheck {
    /// The checking piece's point before its check.
    checker: Square,
    /// The targets some piece wins after every reply to one of its checks.
    targets: Bitboard,
    /// The targets a piece other than the general or a soldier wins after
    /// every reply to one of its checks.
    major: Bitboard,
}

/// One side's threats through one check in a position, per checking piece.
/// Invariant: one entry per checking piece, none with empty `targets`.
#[derive(Clone, Debug, Default)]
struct ThroughChecks {
    won: ArrayVec<WonByCheck, MAX_PIECES>,
}

impl ThroughChecks {
    /// The targets the piece on `sq` wins through one of its checks.
    fn of(&self, sq: Square) -> Bitboard {
        self.won
            .iter()
            .find(|w| w.checker == sq)
            .map_or(Bitboard::EMPTY, |w| w.targets)
    }

    /// Records that one checking move of the piece on `checker` wins
    /// `targets`, those in `major` by a piece other than the general or a
    /// soldier.
    fn add(&mut self, checker: Square, targets: Bitboard, major: Bitboard) {
        if let Some(w) = self.won.iter_mut().find(|w| w.checker == checker) {
            w.targets |= targets;
            w.major |= major;
        } else {
            self.won.push(WonByCheck {
                checker,
                targets,
                major,
            });
        }
    }
}

/// Whether the piece on `a` threatens the enemy piece on `t` by capture or
/// exchange, all conditions of the module docs but the mate test checked.
fn threatens(pos: &Position, a: Square, t: Square, standing: Bitboard) -> bool {
    let (Some(attacker), Some(target)) = (pos.piece_at(a), pos.piece_at(t)) else {
        return false;
    };
    wins(pos, a, t, standing) && !offers_exchange(pos, a, attacker, t, target, standing)
}

/// Whether the piece on `a`, its side to move, wins the enemy piece on `t`: a
/// target of material value, a legal capture, an exchange that gains; the
/// conditions of [`threatens`] but the offer to exchange, which needs the
/// target's side to move first.
fn wins(pos: &Position, a: Square, t: Square, standing: Bitboard) -> bool {
    let (Some(attacker), Some(target)) = (pos.piece_at(a), pos.piece_at(t)) else {
        return false;
    };
    is_chase_target(target, t)
        && capture_is_safe(pos, attacker.color(), a, t, pos.occupied(), standing)
        && see(pos, a, t, standing) > 0
}

/// Whether `attacker` on `a` and `target` on `t` are equal pieces (art. 25.3
/// values) that may capture each other (兑, art. 28.5).
fn offers_exchange(
    pos: &Position,
    a: Square,
    attacker: Piece,
    t: Square,
    target: Piece,
    standing: Bitboard,
) -> bool {
    let occ = pos.occupied();
    judge_value(attacker, a) == judge_value(target, t)
        && pos.attacks_from(t, target, occ).contains(a)
        && capture_is_safe(pos, target.color(), t, a, occ, standing)
}

/// Whether the piece on `a` capturing on `t` lets the other side mate at once.
fn capture_gets_mated(pos: &Position, a: Square, t: Square) -> bool {
    let Some(attacker) = pos.piece_at(a) else {
        return false;
    };
    let mut after = pos.clone();
    after.set_side(attacker.color());
    after.make(Move::new(a, t));
    mates_in_one(&mut after)
}

/// `by`'s direct threats in `pos`, whichever side is to move, without the mate
/// test (applied by [`chased_by`] to new threats only).
pub fn threats(pos: &Position, by: Color, standing: Bitboard) -> Threats {
    let occ = pos.occupied();
    let enemy = pos.color_bb(!by);
    let mut out = Threats::default();
    for a in pos.color_bb(by) {
        let Some(piece) = pos.piece_at(a) else {
            continue;
        };
        let mut targets = Bitboard::EMPTY;
        for t in pos.attacks_from(a, piece, occ) & enemy {
            if threatens(pos, a, t, standing) {
                targets.insert(t);
            }
        }
        if targets.any() {
            out.direct.push((a, targets));
        }
    }
    out
}

/// The side to move's threats through one check (art. 29.1) in `pos`; none when
/// it is in check (its checks would have to answer that first). `pos` is left as
/// it was.
fn threats_through_checks(pos: &mut Position) -> ThroughChecks {
    let by = pos.side_to_move();
    let mut threats = ThroughChecks::default();
    if pos.in_check() {
        return threats;
    }
    for check in checking_moves(pos) {
        if pos.is_capture(check) {
            continue;
        }
        let undo = pos.make(check);
        let replies = pos.legal_moves();
        let mut won = (Bitboard::EMPTY, Bitboard::EMPTY);
        if !replies.is_empty() {
            let (candidates, _) =
                won_after_every_reply(pos, by, &replies, pos.color_bb(!by), false);
            if candidates.any() {
                won = won_after_every_reply(pos, by, &replies, candidates, true);
            }
        }
        pos.unmake(undo);
        let (targets, major) = won;
        if targets.any() {
            threats.add(check.from(), targets, major);
        }
    }
    threats
}

/// The targets among `candidates` that `by` wins after every one of `replies`
/// (legal in `pos`, the other side to move), and those of them that a piece
/// other than the general or a soldier wins after every reply, as [`winners`]
/// finds them; a target that a reply moves (to block the check, say) is
/// followed to its new point. Both sets name the targets by their points in
/// `pos`. `pos` is left as it was.
fn won_after_every_reply(
    pos: &mut Position,
    by: Color,
    replies: &[Move],
    candidates: Bitboard,
    exact: bool,
) -> (Bitboard, Bitboard) {
    let (mut targets, mut major) = (candidates, candidates);
    for &reply in replies {
        // A target that answers the check itself (blocks it, steps onto the
        // line or takes the checking piece) is looked for where it went.
        let moved = targets.contains(reply.from());
        let undo = pos.make(reply);
        let (here, here_major) = winners(pos, by, follow(targets, reply), exact);
        pos.unmake(undo);
        let back = |won: Bitboard| if moved { follow_back(won, reply) } else { won };
        targets &= back(here);
        major &= back(here_major);
        if targets.is_empty() {
            break;
        }
    }
    (targets, major & targets)
}

/// `set` with the piece on `mv`'s origin, if in it, moved to its target: a
/// chased piece followed as it moves.
pub(crate) fn follow(mut set: Bitboard, mv: Move) -> Bitboard {
    if set.contains(mv.from()) {
        set.remove(mv.from());
        set.insert(mv.to());
    }
    set
}

/// `set` with the piece on `mv`'s target, if in it, back on its origin.
fn follow_back(mut set: Bitboard, mv: Move) -> Bitboard {
    if set.contains(mv.to()) {
        set.remove(mv.to());
        set.insert(mv.from());
    }
    set
}

/// The enemy pieces among `targets` that `by` (to move in `pos`) may win at once:
/// some piece of `by` wins the target ([`wins`], no offer to exchange: `by`
/// moves first) with no check set aside, and, when
/// `exact`, its capture does not let the other side mate at once; then also
/// the targets some piece other than the general or a soldier wins so. Without
/// `exact` the first set is a superset of the exact one, found without the mate
/// test, and the second set is the first.
fn winners(pos: &Position, by: Color, targets: Bitboard, exact: bool) -> (Bitboard, Bitboard) {
    let occ = pos.occupied();
    let minor = pos.kind_bb(Kind::General) | pos.kind_bb(Kind::Soldier);
    let (mut any, mut major) = (Bitboard::EMPTY, Bitboard::EMPTY);
    for t in targets {
        if pos.piece_at(t).is_none_or(|p| p.color() == by) {
            continue;
        }
        // `by` is to move: it takes first, so an equal target that could take
        // back offers no exchange here (兑 needs the target's side to move).
        let wins = |mut attackers: Bitboard| {
            Iterator::any(&mut attackers, |a| {
                wins(pos, a, t, Bitboard::EMPTY) && !(exact && capture_gets_mated(pos, a, t))
            })
        };
        let attackers = pos.attackers_to(t, by, occ);
        if !exact {
            if wins(attackers) {
                any.insert(t);
                major.insert(t);
            }
        } else if wins(attackers & !minor) {
            any.insert(t);
            major.insert(t);
        } else if wins(attackers & minor) {
            any.insert(t);
        }
    }
    (any, major)
}

/// What one move chases (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Chase {
    /// Enemy pieces (their points after the move) on which the move creates a
    /// threat by a piece other than the general or a soldier, or through checks
    /// won by such a piece.
    pub major: Bitboard,
    /// Enemy pieces on which it creates a threat by the general or a soldier
    /// alone, and no major one: idle unless in a mutual perpetual attack (art.
    /// 27.2; Chinese code only).
    pub minor: Bitboard,
}

/// What `mv` (legal in `pos`) chases under `rules` (its code and its readings
/// `chase_per_target` and `check_reply_chases`). `pos` is left as it was.
pub fn chased_by(pos: &mut Position, mv: Move, rules: &RuleSet) -> Chase {
    let code = rules.code;
    let mover = pos.side_to_move();
    let in_check = pos.in_check();
    let standing = if in_check && rules.check_reply_chases {
        Bitboard::EMPTY
    } else {
        standing_checks(pos)
    };
    let prior =
        (code == Code::Chinese && (!in_check || rules.check_reply_chases)).then(|| pos.clone());
    let before = threats(pos, mover, standing);
    let hanging = before.targets();
    let undo = pos.make(mv);
    let after = threats(pos, mover, standing_checks(pos));
    let was = |a: Square| if a == mv.to() { mv.from() } else { a };
    let mut chase = Chase::default();
    let mut plain_draw = None;
    for &(a, targets) in &after.direct {
        let Some(kind) = pos.piece_at(a).map(Piece::kind) else {
            continue;
        };
        let old = if rules.chase_per_target {
            hanging
        } else {
            before.direct_of(was(a))
        };
        for t in targets & !old {
            if capture_gets_mated(pos, a, t) {
                continue;
            }
            if code == Code::Chinese
                && a == mv.to()
                && is_incidental(pos, a, t)
                && *plain_draw.get_or_insert_with(|| is_plain_draw(pos))
            {
                continue;
            }
            if is_minor_attacker(kind) {
                chase.minor.insert(t);
            } else {
                chase.major.insert(t);
            }
        }
    }
    if let Some(mut prior) = prior.filter(|_| !pos.in_check()) {
        let mut as_mover = pos.clone();
        as_mover.set_side(mover);
        let through = threats_through_checks(&mut as_mover);
        if through.won.iter().any(|w| (w.targets & !hanging).any()) {
            let earlier = threats_through_checks(&mut prior);
            for w in &through.won {
                let new = !(hanging | earlier.of(was(w.checker)));
                chase.major |= w.major & new;
                chase.minor |= w.targets & !w.major & new;
            }
        }
    }
    pos.unmake(undo);
    chase.minor &= !chase.major;
    chase
}

/// Art. 27.3: the piece on `a`, just moved to a post on its own side of the
/// river, threatens an advisor or an elephant on `t` (idle when the position is
/// also a plain draw on material).
fn is_incidental(pos: &Position, a: Square, t: Square) -> bool {
    let (Some(piece), Some(target)) = (pos.piece_at(a), pos.piece_at(t)) else {
        return false;
    };
    a.rank().is_home_for(piece.color()) && matches!(target.kind(), Kind::Advisor | Kind::Elephant)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::parse(s).expect("square")
    }

    /// Red to move with 18 quiet checks (ICCS squares, ranks 0–9: eight
    /// discovered by the cannon on e3, six by the horse on c8, two each by the
    /// horse on h5 and the soldier on d7), 17 of which keep the unprotected
    /// black horse on i0 under the chariot on e0 whatever Black answers.
    const MANY_CHECKS: &str = "9/R1N1k4/3P5/9/7N1/9/4C4/9/9/3KR3n w - - 0 1";

    #[test]
    fn threats_through_checks_are_kept_per_checking_piece() {
        let mut pos = Position::from_fen(MANY_CHECKS).expect("fen");
        let quiet_checks = checking_moves(&mut pos)
            .iter()
            .filter(|&&m| !pos.is_capture(m))
            .count();
        assert!(quiet_checks > 16, "{quiet_checks} quiet checks");
        let threats = threats_through_checks(&mut pos);
        assert_eq!(threats.won.len(), 4);
        let i0 = Bitboard::from_square(sq("i0"));
        for a in ["e3", "c8", "h5", "d7"] {
            assert_eq!(threats.of(sq(a)), i0, "checks by {a}");
        }
    }

    /// Red's only check, c2f2, is answered by e8f8 or by e6f6; e6f6 uncovers
    /// Black's cannon on e8 against Red's general, screened by the soldier on
    /// e3, and then the chariot on a0 may not take the unprotected horse on a7.
    const CHECK_BACK: &str = "4nk3/4c4/n8/4r4/9/9/4P4/2R6/9/R3K4 w - - 0 1";

    #[test]
    fn a_capture_after_a_check_must_answer_a_check_given_back() {
        let mut pos = Position::from_fen(CHECK_BACK).expect("fen");
        assert_eq!(
            threats_through_checks(&mut pos).of(sq("c2")),
            Bitboard::EMPTY
        );
        // With a second screen on e4 no reply checks back: the horse is won.
        let mut pos = Position::from_fen("4nk3/4c4/n8/4r4/9/4P4/4P4/2R6/9/R3K4 w").expect("fen");
        let a7 = Bitboard::from_square(sq("a7"));
        assert_eq!(threats_through_checks(&mut pos).of(sq("c2")), a7);
    }
}
