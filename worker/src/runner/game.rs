//! One game between two built-in engines, judged by the rules arbiter.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use xq_engine::rules::{Game, GameError, GameResult, Outcome, Reason, RuleSet};
use xq_engine::search::SearchRules;
use xq_engine::{ByColor, Color, Position};

use xq_proto::game_record::MAX_STDERR_TAIL_BYTES;
use xq_proto::variant_stats::{GameSummary, KindCaptures, game_captures};
use xq_proto::{Adjudication, GameRecord, Limit, MoveStats, Opening};

use super::player::PlayerConfig;
use super::player_stats::{Fault, GameStats};
use super::seat::{Seat, SeatError};
use crate::adjudication::{Adjudicator, Verdict};
use crate::timecontrol::Clock;

/// Everything one game needs besides the searchers.
#[derive(Debug)]
pub struct GameSetup<'a> {
    pub players: &'a [PlayerConfig; 2],
    /// Index into `players` of the player with Red.
    pub red: usize,
    pub rules: &'a RuleSet,
    pub adjudication: Adjudication,
    pub opening: &'a Opening,
    /// Abandons the game when set.
    pub stop: &'a Arc<AtomicBool>,
}

impl GameSetup<'_> {
    /// Index into `players` of the player with `color`.
    pub fn player_of(&self, color: Color) -> usize {
        match color {
            Color::Red => self.red,
            Color::Black => 1 - self.red,
        }
    }

    /// The limit `color` plays with: its player's limit scaled by the rule set's
    /// odds (under reform-2007 Red gets twice Black's nodes or time).
    pub fn limit_of(&self, color: Color) -> Limit {
        let odds = match color {
            Color::Red => self.rules.odds.red,
            Color::Black => self.rules.odds.black,
        };
        self.players[self.player_of(color)].limit.scaled(odds)
    }
}

/// A game just played: its record, as the archive keeps it and the wire
/// carries it ([`GameRecord`]: the one record of a finished game), and what
/// the runner measured while playing it, which the match's summary counts
/// and no record keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedGame {
    /// The game (its `opening_index` is 0 until the runner sets it).
    pub record: GameRecord,
    /// The opening's name.
    pub opening: String,
    /// Nodes searched by both players.
    pub nodes: u64,
    /// Time spent inside the searches.
    pub search_time: Duration,
    /// Time from setting up to the result.
    pub total_time: Duration,
    /// Captures per convertible kind, every ply included.
    pub captures: [KindCaptures; 4],
    /// Each player's latencies and fault, by player index.
    pub stats: [GameStats; 2],
}

/// The last `max` bytes of `lines` joined by newlines, cut at a character
/// boundary.
fn tail(lines: &[String], max: usize) -> String {
    let text = lines.join("\n");
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_owned()
}

/// Why a game could not be played.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The opening's moves do not fit its position.
    #[error(transparent)]
    Opening(#[from] GameError),
    /// A player's setting fails every game (a [`SeatError::Setting`]).
    #[error(transparent)]
    Setting(SeatError),
}

impl PlayedGame {
    /// What the variant statistics need of the game.
    pub fn summary(&self) -> GameSummary {
        GameSummary {
            result: self.record.result,
            plies: self.record.moves.len(),
            captures: self.captures,
        }
    }
}

/// For a time forfeit of `outcome`: how far the loser overran its time, ms
/// (`red` is the index of the player with Red, `stats` by player index).
fn overrun_ms(outcome: &Outcome, red: usize, stats: &[GameStats; 2]) -> Option<u64> {
    let loser = match outcome.result {
        GameResult::Draw => return None,
        GameResult::Red => 1 - red,
        GameResult::Black => red,
    };
    match stats[loser].fault {
        Some(Fault::TimeLoss { overrun_ms, .. }) if outcome.reason == Reason::TimeForfeit => {
            Some(overrun_ms)
        }
        _ => None,
    }
}

/// The search's view of the rule set: with `draw_contempt`, draws valued by its
/// scoring (−120 cp for Red under reform-2007); without, draws worth 0.
pub fn search_rules(rules: &RuleSet, draw_contempt: bool) -> SearchRules {
    SearchRules::scoring_aware(rules, draw_contempt)
}

/// Plays one game; `seats[i]` belongs to `setup.players[i]`. Returns `None`
/// when the stop flag ended the game early, or an error when the opening's moves
/// do not fit its position or a player's setting cannot work.
pub fn play_game(
    setup: &GameSetup<'_>,
    seats: &mut [Seat; 2],
) -> Result<Option<PlayedGame>, PlayError> {
    let started = Instant::now();
    let start = Position::from_fen(&setup.opening.fen).unwrap_or_else(|_| Position::startpos());
    let mut game = Game::new(start, *setup.rules);
    for &mv in &setup.opening.moves {
        if game.outcome().is_some() {
            break;
        }
        game.play(mv)?;
    }
    let opening_plies = game.records().len();
    let rules = setup
        .players
        .each_ref()
        .map(|p| search_rules(setup.rules, p.draw_contempt));
    let player_of = |color: Color| setup.player_of(color);
    let color_of = |player: usize| {
        if player == setup.red {
            Color::Red
        } else {
            Color::Black
        }
    };
    let limit_of = |color: Color| setup.limit_of(color);
    let mut clocks: ByColor<Option<Clock>> = ByColor::new_with(|c| match limit_of(c) {
        Limit::Clock(tc) => Some(Clock::new(tc, 1)),
        _ => None,
    });
    let mut adjudicator = Adjudicator::new(setup.adjudication);
    let (mut nodes, mut search_time) = (0, Duration::ZERO);
    let mut per_move = Vec::new();
    let mut outcome = game.outcome();
    let mut stats: [GameStats; 2] = Default::default();
    for (i, seat) in seats.iter_mut().enumerate() {
        match seat.new_game(&setup.players[i], setup.rules) {
            Ok(()) => {}
            Err(SeatError::Forfeit(fault)) => {
                if outcome.is_none() {
                    stats[i].fault = Some(fault);
                    outcome = Some(Outcome {
                        result: GameResult::win_for(!color_of(i)),
                        reason: fault.reason(),
                        ply: opening_plies,
                    });
                }
            }
            Err(e) => return Err(PlayError::Setting(e)),
        }
    }
    while outcome.is_none() {
        let side = game.position().side_to_move();
        let idx = player_of(side);
        let choice = seats[idx]
            .choose(
                &setup.players[idx],
                &game,
                limit_of(side),
                &clocks,
                &rules[idx],
                setup.stop,
            )
            .map_err(PlayError::Setting)?;
        let elapsed = choice.elapsed;
        search_time += elapsed;
        nodes += choice.nodes;
        if setup.stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let ply = game.records().len();
        let lose = |fault: Fault| {
            Some(Outcome {
                result: GameResult::win_for(!side),
                reason: fault.reason(),
                ply,
            })
        };
        let margin_ms = setup.players[idx]
            .engine
            .as_ref()
            .map_or(0, |e| e.timeouts.margin_ms);
        if choice.mv.is_ok()
            && let Some(clock) = &mut clocks[side]
            && let Err(over) = clock.charge(
                u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                margin_ms,
            )
        {
            let fault = Fault::TimeLoss {
                overrun_ms: over.ms,
                killed: false,
            };
            stats[idx].fault = Some(fault);
            outcome = lose(fault);
            break;
        }
        let mv = match choice.mv {
            Ok(mv) => mv,
            Err(fault) => {
                stats[idx].fault = Some(fault);
                outcome = lose(fault);
                break;
            }
        };
        stats[idx].answered(elapsed);
        outcome = match game.play(mv) {
            Ok(o) => o,
            Err(_) => {
                stats[idx].fault = Some(Fault::IllegalMove);
                lose(Fault::IllegalMove)
            }
        };
        if game.records().len() > ply {
            per_move.push(MoveStats {
                score_cp: choice.score_cp.unwrap_or(0),
                depth: choice.score_cp.map_or(0, |_| choice.depth),
                nodes: choice.nodes,
                time_ms: u32::try_from(elapsed.as_millis()).unwrap_or(u32::MAX),
            });
        }
        if outcome.is_none() {
            let red_cp = choice
                .score_cp
                .map(|s| if side == Color::Red { s } else { -s });
            let ply = u32::try_from(game.records().len()).unwrap_or(u32::MAX);
            outcome = adjudicator.record(ply, red_cp).map(|v| {
                let result = match v {
                    Verdict::Resign { winner } => GameResult::win_for(winner),
                    Verdict::Draw | Verdict::MaxPlies => GameResult::Draw,
                };
                Outcome {
                    result,
                    reason: Reason::Adjudication,
                    ply: game.records().len(),
                }
            });
        }
    }
    let Some(outcome) = outcome else {
        return Ok(None);
    };
    Ok(Some(PlayedGame {
        record: GameRecord {
            opening_index: 0,
            start_fen: game.start().to_fen(),
            moves: game.moves().collect(),
            opening_plies: u32::try_from(opening_plies).unwrap_or(u32::MAX),
            result: outcome.result,
            reason: outcome.reason,
            red_player: u8::from(setup.red == 1),
            per_move,
            stderr_tail: seats
                .iter()
                .find(|s| !s.failure_stderr().is_empty())
                .map_or_else(String::new, |s| {
                    tail(s.failure_stderr(), MAX_STDERR_TAIL_BYTES)
                }),
            overrun_ms: overrun_ms(&outcome, setup.red, &stats),
        },
        opening: setup.opening.name.clone(),
        nodes,
        search_time,
        total_time: started.elapsed(),
        captures: game_captures(game.records()),
        stats,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::params::Params;

    fn players(draw_contempt: bool) -> [PlayerConfig; 2] {
        [0, 1].map(|i| PlayerConfig {
            name: format!("p{i}"),
            params: Params::default(),
            limit: Limit::Nodes(1000),
            hash_mb: 1,
            threads: 1,
            engine: None,
            draw_contempt,
        })
    }

    #[test]
    fn a_stderr_tail_keeps_the_last_bytes_at_a_character_boundary() {
        let lines = vec!["first".to_owned(), "炮二平五".to_owned()];
        assert_eq!(tail(&lines, 100), "first\n炮二平五");
        assert_eq!(tail(&lines, 7), "平五");
        assert_eq!(tail(&[], 10), "");
    }

    #[test]
    fn draw_contempt_sets_the_value_of_a_draw_under_the_reform() {
        let reform: RuleSet = "reform-2007".parse().unwrap();
        assert_eq!(search_rules(&reform, true).draw_value_red_cp, -120);
        assert_eq!(search_rules(&reform, false).draw_value_red_cp, 0);
        assert_eq!(search_rules(&RuleSet::STANDARD, true).draw_value_red_cp, 0);
    }

    #[test]
    fn red_gets_twice_the_nodes_under_the_reform_with_either_player() {
        let reform: RuleSet = "reform-2007".parse().unwrap();
        let players = players(true);
        let opening = Opening {
            fen: xq_engine::START_FEN.to_owned(),
            moves: Vec::new(),
            name: "start".to_owned(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        for red in [0, 1] {
            let setup = GameSetup {
                players: &players,
                red,
                rules: &reform,
                adjudication: Adjudication::default(),
                opening: &opening,
                stop: &stop,
            };
            assert_eq!(setup.player_of(Color::Red), red);
            assert_eq!(setup.limit_of(Color::Red), Limit::Nodes(2000));
            assert_eq!(setup.limit_of(Color::Black), Limit::Nodes(1000));
            let standard = GameSetup {
                rules: &RuleSet::STANDARD,
                ..setup
            };
            assert_eq!(standard.limit_of(Color::Red), Limit::Nodes(1000));
        }
    }
}
