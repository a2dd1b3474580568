//! Hand-made positions for the arbiter, each with the moves that decide it. Every
//! move is checked for legality by [`Game::play`]; every test also checks that the
//! game did not end before its last move.

use crate::movegen::tests::brute_legal;
use crate::perft::perft;
use crate::rules::{Game, GameError, GameResult, Outcome, Reason, RuleSet};
use crate::{Bitboard, Color, Kind, Move, Piece, Position, Square};

fn sq(s: &str) -> Square {
    Square::parse(s).unwrap()
}

fn mv(s: &str) -> Move {
    Move::parse_coords(s).unwrap()
}

fn new_game(fen: &str, rules: &str) -> Game {
    Game::explained(Position::from_fen(fen).unwrap(), rules.parse().unwrap())
}

/// Plays `moves` (space-separated) and returns the outcome after the last one,
/// asserting that every move is legal and that no earlier move ended the game.
fn play_out(game: &mut Game, moves: &str) -> Option<Outcome> {
    let moves: Vec<&str> = moves.split_whitespace().collect();
    let mut last = None;
    for (i, m) in moves.iter().enumerate() {
        assert_eq!(last, None, "the game ended before move {} ({m})", i + 1);
        last = game.play(mv(m)).unwrap_or_else(|e| panic!("move {m}: {e}"));
    }
    last
}

fn ends(fen: &str, rules: &str, moves: &str) -> Outcome {
    let mut game = new_game(fen, rules);
    let outcome = play_out(&mut game, moves).expect("the game should have ended");
    assert_eq!(outcome.ply, moves.split_whitespace().count());
    outcome
}

fn assert_ends(fen: &str, rules: &str, moves: &str, result: GameResult, reason: Reason) {
    let o = ends(fen, rules, moves);
    assert_eq!((o.result, o.reason), (result, reason), "{fen} {moves}");
}

/// Red's chariot checks on rank 9 and rank 8 in turn while Black's general steps
/// between e9 and e8.
const RED_CHECKS: &str = "4k4/7R1/9/9/9/9/9/9/9/3K5 w";
const RED_CHECKS_MOVES: &str = "h8h9 e9e8 h9h8 e8e9 h8h9 e9e8 h9h8 e8e9";

#[test]
fn perpetual_check_by_one_side_loses() {
    // Art. 24.1, 26.1: the third occurrence of the start position, after ply 8.
    assert_ends(
        RED_CHECKS,
        "standard",
        RED_CHECKS_MOVES,
        GameResult::Black,
        Reason::PerpetualCheck,
    );
    let mut g = new_game(RED_CHECKS, "standard");
    play_out(&mut g, "h8h9 e9e8");
    assert!(g.records().iter().all(|r| r.nature() == "unjudged"));
    play_out(&mut g, "h9h8 e8e9 h8h9 e9e8 h9h8 e8e9");
    let natures: Vec<_> = g.records().iter().map(|r| r.nature()).collect();
    assert_eq!(natures[..2], ["check", "idle"]);
}

#[test]
fn mutual_perpetual_check_draws() {
    // Red's cannon blocks the chariot's check on the e-file and uncovers its own
    // chariot's check on the d-file; Black's chariot blocks that and turns Red's
    // cannon into a screen for Black's cannon on e6. Every move checks.
    let fen = "3k5/9/9/4c4/4r4/3C5/3R5/4K4/9/9 w";
    let moves = "d4e4 e5d5 e4d4 d5e5 d4e4 e5d5 e4d4 d5e5";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, moves).unwrap();
    assert!(g.records().iter().all(|r| r.check));
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Draw, Reason::MutualPerpetual, 8)
    );
}

#[test]
fn perpetual_chase_of_an_unprotected_cannon_loses() {
    // Red's chariot follows Black's cannon between c7 and c8. The third occurrence
    // is of the position after ply 1 (Black to move), at ply 9.
    let fen = "4k4/9/2c6/9/9/9/9/9/9/R2K5 w";
    let moves = "a0a7 c7c8 a7a8 c8c7 a8a7 c7c8 a7a8 c8c7 a8a7";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, moves).unwrap();
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Black, Reason::PerpetualChase, 9)
    );
    let chased = |i: usize| g.records()[i].judged.unwrap().chase.major;
    assert_eq!(g.records()[0].judged, None);
    assert_eq!(chased(2), Bitboard::from_square(sq("c8")));
    assert_eq!(chased(4), Bitboard::from_square(sq("c7")));
    // Without the chase rule only checks are judged: a draw.
    assert_ends(
        fen,
        "no-chase-rule",
        moves,
        GameResult::Draw,
        Reason::Repetition,
    );
}

/// Red's chariot follows Black's horse between c7 and e8.
const HORSE_CHASE_MOVES: &str = "i0i7 c7e8 i7i8 e8c7 i8i7 c7e8 i7i8 e8c7 i8i7";

#[test]
fn chariot_attacking_a_protected_horse_is_idle() {
    // The chariot on c9 guards c7, the advisor on d9 guards e8: each attack would
    // give a chariot for a horse, so it is no chase (art. 28.3, 28.16).
    let fen = "2ra1k3/9/2n6/9/9/9/9/9/9/3K4R w";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, HORSE_CHASE_MOVES).unwrap();
    let judged: Vec<_> = g.records().iter().filter_map(|r| r.judged).collect();
    assert_eq!(judged.len(), 8);
    assert!(judged.iter().all(|n| n.chase.major.is_empty()));
    assert_eq!((o.result, o.reason), (GameResult::Draw, Reason::Repetition));
    // Judging for the verdict alone stops at each side's first idle move.
    let mut quick = Game::new(Position::from_fen(fen).unwrap(), RuleSet::STANDARD);
    assert_eq!(play_out(&mut quick, HORSE_CHASE_MOVES), Some(o));
    let natures: Vec<_> = quick.records().iter().map(|r| r.nature()).collect();
    assert_eq!(natures[1..3], ["idle", "idle"]);
    assert!(natures[3..].iter().all(|&n| n == "unjudged"), "{natures:?}");
    // The same dance with the horse unprotected is a perpetual chase.
    let unprotected = "5k3/9/2n6/9/9/9/9/9/9/3K4R w";
    assert_ends(
        unprotected,
        "standard",
        HORSE_CHASE_MOVES,
        GameResult::Black,
        Reason::PerpetualChase,
    );
}

#[test]
fn horse_attacking_a_protected_chariot_chases() {
    // Black's chariot steps between b8 and b9, guarded each time by the chariot on
    // b5; Red's horse attacks it from c6 and d8. A horse attacking a chariot chases
    // it even when it is protected (art. 25.3). Black's chariot on b8 attacks the
    // horse on d8, which Red's chariot on d1 guards: idle. (Red's elephant on c0
    // keeps Black's b5 chariot from mating on b0, which would make every Black move
    // a mate threat.)
    let fen = "4k4/1r1N5/9/9/1r7/9/9/9/3R5/2BK5 w";
    let moves = "d8c6 b8b9 c6d8 b9b8 d8c6 b8b9 c6d8 b9b8";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, moves).unwrap();
    let natures: Vec<_> = g.records().iter().map(|r| r.nature()).collect();
    assert_eq!(natures[..2], ["chase", "idle"]);
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Black, Reason::PerpetualChase, 8)
    );
}

#[test]
fn attacks_by_a_soldier_alone_are_idle() {
    // Red's soldier attacks Black's unprotected cannon on c7 and on d7 in turn.
    let fen = "5k3/9/2c6/3P5/9/9/9/9/9/4K4 w";
    let moves = "d6c6 c7d7 c6d6 d7c7 d6c6 c7d7 c6d6 d7c7";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, moves).unwrap();
    let natures: Vec<_> = g.records().iter().map(|r| r.nature()).collect();
    assert_eq!(natures[..2], ["minor-chase", "idle"]);
    assert_eq!((o.result, o.reason), (GameResult::Draw, Reason::Repetition));
}

#[test]
fn attacks_by_the_general_alone_are_idle() {
    // Red's general attacks Black's unprotected cannon on d2 and on e2 in turn
    // (art. 27.1).
    let fen = "5k3/9/9/9/9/9/9/3c5/4K4/9 w";
    let moves = "e1d1 d2e2 d1e1 e2d2 e1d1 d2e2 d1e1 e2d2";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, moves).unwrap();
    let natures: Vec<_> = g.records().iter().map(|r| r.nature()).collect();
    assert_eq!(natures[..2], ["minor-chase", "idle"]);
    assert_eq!((o.result, o.reason), (GameResult::Draw, Reason::Repetition));
}

#[test]
fn uncovered_exchange_offers_are_idle() {
    // Red's chariot checks on ranks 9 and 8; each step of Black's general uncovers
    // an attack by one of Black's chariots on the red chariot, which attacks it
    // back: an offer to exchange (兑, art. 28.5), no chase. The two chariots do
    // threaten a mate by three or four checks against the lone red general (art.
    // 28.2), so the steps are mate threats. Red checks perpetually and loses
    // (arts. 24.1, 26.1: perpetual check is settled first).
    let fen = "3rk4/3r3R1/9/9/9/9/9/9/9/5K3 w";
    let mut g = new_game(fen, "standard");
    let o = play_out(&mut g, RED_CHECKS_MOVES).unwrap();
    let natures: Vec<_> = g.records().iter().map(|r| r.nature()).collect();
    assert_eq!(
        natures[..4],
        ["check", "mate-threat", "check", "mate-threat"]
    );
    assert!(
        g.records()
            .iter()
            .all(|r| r.judged.is_none_or(|n| n.chase.major.is_empty()))
    );
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Black, Reason::PerpetualCheck, 8)
    );
}

#[test]
fn checkmate() {
    // The chariot on a8 holds rank 8, Red's general holds the e-file.
    assert_ends(
        "3k5/R8/9/9/9/9/9/9/9/4K1R2 w",
        "standard",
        "g0g9",
        GameResult::Red,
        Reason::Checkmate,
    );
}

#[test]
fn stalemate_loses_or_draws() {
    // After a7a8 Black's general on d9 is not in check and has no move: d8 is
    // attacked, e9 would face Red's general.
    let fen = "3k5/9/R8/9/9/9/9/9/9/4K4 w";
    assert_ends(fen, "standard", "a7a8", GameResult::Red, Reason::Stalemate);
    assert_ends(
        fen,
        "stalemate-draw",
        "a7a8",
        GameResult::Draw,
        Reason::Stalemate,
    );
    let mut g = new_game(fen, "standard");
    play_out(&mut g, "a7a8");
    assert!(!g.position().in_check());
    assert!(g.position().legal_moves().is_empty());
}

/// Plays `plies` moves without capture or repetition: each time a quiet move
/// leading to a position not seen before in which the opponent still has a move
/// and is not in check, picked by a fixed pseudo-random sequence from the moves in
/// coordinate order (so the walk does not depend on the generator's order).
fn wander(game: &mut Game, plies: usize) -> Option<Outcome> {
    let mut seen = std::collections::HashSet::new();
    seen.insert(game.position().hash());
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ game.position().hash();
    let mut last = None;
    for _ in 0..plies {
        assert_eq!(last, None, "ended early at ply {}", game.records().len());
        let mut pos = game.position().clone();
        let fresh: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                if pos.is_capture(m) {
                    return false;
                }
                let undo = pos.make(m);
                let fresh = !seen.contains(&pos.hash()) && !pos.in_check() && pos.has_legal_move();
                pos.unmake(undo);
                fresh
            })
            .collect();
        let mut fresh = fresh;
        fresh.sort_by_key(|m| m.to_string());
        assert!(!fresh.is_empty(), "no fresh quiet move in {pos:?}");
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let m = fresh[(state % fresh.len() as u64) as usize];
        last = game.play(m).unwrap();
        seen.insert(game.position().hash());
    }
    last
}

#[test]
fn natural_move_limit_at_120_plies() {
    let fen = "3k5/9/2n6/r8/9/9/8R/6N2/9/4K4 w";
    let mut g = new_game(fen, "standard");
    let o = wander(&mut g, 120).unwrap();
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Draw, Reason::MoveLimit, 120)
    );
    assert!(g.records().iter().all(|r| r.captured.is_none()));
    // The FEN's clock counts: 118 plies already played.
    let late = "3k5/9/2n6/r8/9/9/8R/6N2/9/4K4 w - - 118 60";
    let mut g = new_game(late, "standard");
    assert_eq!(wander(&mut g, 1), None);
    assert_eq!(wander(&mut g, 1).map(|o| o.reason), Some(Reason::MoveLimit));
    // A limit of 0 turns it off.
    let rules = RuleSet {
        move_limit: 0,
        ..RuleSet::STANDARD
    };
    let mut g = Game::new(Position::from_fen(fen).unwrap(), rules);
    assert_eq!(wander(&mut g, 130), None);
}

#[test]
fn fourfold_variant_judges_at_the_fourth_occurrence() {
    let mut g = new_game(RED_CHECKS, "repetition-4");
    assert_eq!(play_out(&mut g, RED_CHECKS_MOVES), None);
    let o = play_out(&mut g, "h8h9 e9e8 h9h8 e8e9").unwrap();
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Black, Reason::PerpetualCheck, 12)
    );
}

#[test]
fn errors_name_the_move() {
    let mut g = new_game(RED_CHECKS, "standard");
    let e = g.play(mv("h8g7")).unwrap_err();
    assert!(matches!(e, GameError::IllegalMove { ply: 0, .. }));
    assert!(e.to_string().contains("h8g7"), "{e}");
    play_out(&mut g, RED_CHECKS_MOVES);
    let e = g.play(mv("h8h9")).unwrap_err();
    assert!(matches!(e, GameError::GameOver { .. }));
    assert!(e.to_string().contains("h8h9") && e.to_string().contains("perpetual-check"));
    assert_eq!(g.records().len(), 8);
}

#[test]
fn a_start_position_without_moves_is_decided_at_ply_zero() {
    let g = new_game("3k5/R8/9/9/9/9/9/9/9/4K4 b", "standard");
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.result, o.reason, o.ply),
        (GameResult::Red, Reason::Stalemate, 0)
    );
}

#[test]
fn reason_tokens_round_trip() {
    for r in Reason::ALL {
        assert_eq!(Reason::from_token(r.token()), Some(r));
    }
    let o = Outcome {
        result: GameResult::Black,
        reason: Reason::PerpetualCheckAndChase,
        ply: 12,
    };
    assert_eq!(
        o.to_string(),
        "result: black reason: perpetual-check-and-chase ply: 12"
    );
}

// Capture conversion (engine/RULES.md §8).

fn converted(color: Color, kind: Kind) -> Piece {
    Piece::new_converted(color, kind).unwrap()
}

#[test]
fn horse_takes_elephant_converts_when_the_bishop_checks() {
    // From c8 the turned elephant moves like a bishop and checks d9 at once.
    let fen = "3k5/2N6/4b4/9/9/9/9/9/9/4K4 w";
    let mut g = new_game(fen, "conversion");
    play_out(&mut g, "c8e7");
    let r = g.records()[0];
    assert!(r.converted && r.check);
    let pos = g.position();
    assert_eq!(
        pos.piece_at(sq("c8")),
        Some(converted(Color::Red, Kind::Elephant))
    );
    assert!(
        pos.to_fen().starts_with("3k5/2B~6/4N4/"),
        "{}",
        pos.to_fen()
    );
    assert!(pos.is_consistent());
    // Without the variant the elephant just leaves the board.
    let mut g = new_game(fen, "standard");
    play_out(&mut g, "c8e7");
    assert_eq!(g.position().piece_at(sq("c8")), None);
    assert!(!g.records()[0].converted);
}

#[test]
fn horse_takes_elephant_removes_it_when_the_bishop_would_not_check() {
    // The general on f8 is on none of c8's diagonals.
    let mut g = new_game("9/2N2k3/4b4/9/9/9/9/9/9/4K4 w", "conversion");
    play_out(&mut g, "c8e7");
    assert!(!g.records()[0].converted);
    assert_eq!(g.position().piece_at(sq("c8")), None);
    assert!(g.position().converted_bb().is_empty());
}

#[test]
fn chariot_takes_chariot_never_converts() {
    // A turned chariot on a same-kind capturer's origin would attack just what the
    // capturer attacked from there, which never includes the enemy general in a
    // legal position, so this case holds by geometry as well as by rule.
    let fen = "3k5/9/3a5/9/r2R5/9/9/9/9/4K4 w";
    let mut g = new_game(fen, "conversion");
    play_out(&mut g, "d5a5");
    assert!(!g.records()[0].converted);
    assert_eq!(g.position().piece_at(sq("d5")), None);
    // With a cannon taking the chariot over a screen the turned chariot checks d9
    // from d5 and stays.
    let fen = "3k5/9/9/9/rP1C5/9/9/9/9/4K4 w";
    let mut g = new_game(fen, "conversion");
    play_out(&mut g, "d5a5");
    assert!(g.records()[0].converted && g.records()[0].check);
    assert_eq!(
        g.position().piece_at(sq("d5")),
        Some(converted(Color::Red, Kind::Chariot))
    );
}

#[test]
fn a_converted_piece_that_is_captured_is_removed() {
    // From c8 a red horse would check e9; an original black horse converts, a
    // converted one (n~) is simply removed.
    let original = "4k4/2R6/9/9/9/9/2n6/9/9/3K5 w";
    let mut g = new_game(original, "conversion");
    play_out(&mut g, "c8c3");
    assert!(g.records()[0].converted);
    assert_eq!(
        g.position().piece_at(sq("c8")),
        Some(converted(Color::Red, Kind::Horse))
    );
    let turned = "4k4/2R6/9/9/9/9/2n~6/9/9/3K5 w";
    let mut g = new_game(turned, "conversion");
    play_out(&mut g, "c8c3");
    assert!(!g.records()[0].converted);
    assert_eq!(g.position().piece_at(sq("c8")), None);
    assert!(g.position().converted_bb().is_empty());
}

#[test]
fn a_converted_piece_never_converts_back() {
    // Black's chariot takes Red's bishop (an elephant Red won from Black). Turned
    // back, it would check Red's general on e1 along a5-e1; it is removed instead.
    let fen = "3k5/9/9/9/r3B~4/9/9/9/4K4/9 b";
    let mut g = new_game(fen, "conversion");
    play_out(&mut g, "a5e5");
    assert!(!g.records()[0].converted);
    assert_eq!(g.position().piece_at(sq("a5")), None);
    assert!(g.position().converted_bb().is_empty());
}

#[test]
fn rule_set_switches_conversion_on_the_position() {
    let g = new_game(RED_CHECKS, "standard+conversion");
    assert!(g.position().conversion());
    let g = new_game(RED_CHECKS, "standard");
    assert!(!g.position().conversion());
}

fn brute_perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    brute_legal(pos)
        .into_iter()
        .map(|m| {
            let mut after = pos.clone();
            after.make(m);
            brute_perft(&after, depth - 1)
        })
        .sum()
}

#[test]
fn perft_from_the_start_is_unchanged_by_conversion_to_depth_3() {
    for (depth, nodes) in [(1, 44), (2, 1920), (3, 79666)] {
        let mut pos = Position::startpos();
        pos.set_conversion(true);
        assert_eq!(perft(&mut pos, depth), nodes);
    }
}

#[test]
fn perft_counts_conversions() {
    // After the cannon takes the chariot on a5, the turned chariot on d5 checks
    // the general on d9: Black's replies to d5a5 differ from the standard game's.
    let fen = "3k5/9/9/9/rP1C5/9/9/9/9/4K4 w";
    let mut standard = Position::from_fen(fen).unwrap();
    let mut variant = standard.clone();
    variant.set_conversion(true);
    let (s, v) = (perft(&mut standard, 2), perft(&mut variant, 2));
    assert_ne!(s, v);
    assert_eq!(s, brute_perft(&standard, 2));
    assert_eq!(v, brute_perft(&variant, 2));
    assert_eq!(perft(&mut variant, 3), brute_perft(&variant, 3));
    let mut start = Position::startpos();
    start.set_conversion(true);
    assert_eq!(perft(&mut start, 2), brute_perft(&start, 2));
}
