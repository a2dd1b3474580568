//! Adjudication: ending hopeless or dead-drawn games early, as game runners do,
//! by the rules of an [`Adjudication`] (whose default is stated there).
//!
//! Scores are what the engines report, converted to Red's view in centipawns.
//! Resignation: both engines (one score per move, from consecutive moves by each
//! side) report at least `resign_cp` against the same side for `resign_moves`
//! consecutive moves each. Draw: after move `draw_after_move`, both report
//! |score| ≤ `draw_cp` for `draw_moves` consecutive moves each. Mate scores count as
//! decisive. The rules arbiter decides everything else.

use xq_engine::Color;
use xq_proto::Adjudication;

/// An adjudicated end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The given side wins by the opponent's resignation.
    Resign { winner: Color },
    /// Both engines see a dead draw.
    Draw,
    /// The game reached the ply cap.
    MaxPlies,
}

/// Running adjudication state for one game.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    config: Adjudication,
    /// Consecutive plies (both sides' moves) with a decisive score against Red (<0)
    /// or Black (>0), signed by the losing side: negative counts Red losing.
    resign_run: i32,
    draw_run: u32,
}

impl Adjudicator {
    /// A fresh state for one game.
    pub fn new(config: Adjudication) -> Adjudicator {
        Adjudicator {
            config,
            resign_run: 0,
            draw_run: 0,
        }
    }

    /// Records the score reported with the move that made `ply` plies in the game
    /// (`ply` ≥ 1), in centipawns from Red's view, and says whether to stop.
    pub fn record(&mut self, ply: u32, red_cp: Option<i32>) -> Option<Verdict> {
        let c = self.config;
        let cp = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        let (resign_cp, draw_cp) = (cp(c.resign_cp), cp(c.draw_cp));
        if c.max_plies > 0 && ply >= c.max_plies {
            return Some(Verdict::MaxPlies);
        }
        let Some(score) = red_cp else {
            self.resign_run = 0;
            self.draw_run = 0;
            return None;
        };
        if c.resign_moves > 0 {
            let losing = if score <= -resign_cp {
                -1
            } else if score >= resign_cp {
                1
            } else {
                0
            };
            self.resign_run = match losing {
                0 => 0,
                s if self.resign_run.signum() == s => self.resign_run + s,
                s => s,
            };
            if self.resign_run.unsigned_abs() >= 2 * c.resign_moves {
                let winner = if self.resign_run > 0 {
                    Color::Red
                } else {
                    Color::Black
                };
                return Some(Verdict::Resign { winner });
            }
        }
        if c.draw_moves > 0 {
            let full_moves = ply.div_ceil(2);
            if full_moves > c.draw_after_move && score.abs() <= draw_cp {
                self.draw_run += 1;
            } else {
                self.draw_run = 0;
            }
            if self.draw_run >= 2 * c.draw_moves {
                return Some(Verdict::Draw);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resigns_after_both_sides_agree_long_enough() {
        let mut a = Adjudicator::new(Adjudication {
            resign_moves: 2,
            ..Adjudication::OFF.with_resign(500)
        });
        assert_eq!(a.record(1, Some(600)), None);
        assert_eq!(a.record(2, Some(700)), None);
        assert_eq!(a.record(3, Some(650)), None);
        assert_eq!(
            a.record(4, Some(800)),
            Some(Verdict::Resign { winner: Color::Red })
        );
    }

    #[test]
    fn a_dissenting_score_resets_the_run() {
        let mut a = Adjudicator::new(Adjudication {
            resign_moves: 1,
            ..Adjudication::OFF.with_resign(500)
        });
        assert_eq!(a.record(1, Some(-600)), None);
        assert_eq!(a.record(2, Some(100)), None);
        assert_eq!(a.record(3, Some(-600)), None);
        assert_eq!(
            a.record(4, Some(-900)),
            Some(Verdict::Resign {
                winner: Color::Black
            })
        );
    }

    #[test]
    fn draw_only_after_the_given_move() {
        let config = Adjudication {
            draw_cp: 10,
            draw_moves: 1,
            draw_after_move: 2,
            ..Adjudication::OFF
        };
        let mut a = Adjudicator::new(config);
        for ply in 1..=4 {
            assert_eq!(a.record(ply, Some(0)), None, "ply {ply}");
        }
        assert_eq!(a.record(5, Some(5)), None);
        assert_eq!(a.record(6, Some(-3)), Some(Verdict::Draw));
    }

    #[test]
    fn ply_cap_and_off() {
        let mut a = Adjudicator::new(Adjudication {
            max_plies: 3,
            ..Adjudication::OFF
        });
        assert_eq!(a.record(2, None), None);
        assert_eq!(a.record(3, None), Some(Verdict::MaxPlies));
        let mut off = Adjudicator::new(Adjudication::OFF);
        for ply in 1..1000 {
            assert_eq!(off.record(ply, Some(30_000)), None);
        }
    }

    trait WithResign {
        fn with_resign(self, cp: u32) -> Self;
    }

    impl WithResign for Adjudication {
        fn with_resign(self, cp: u32) -> Self {
            Adjudication {
                resign_cp: cp,
                ..self
            }
        }
    }
}
