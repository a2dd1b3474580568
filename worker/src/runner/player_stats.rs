//! Per-player health of a match: games lost to faults (time losses with their
//! overrun, crashes, illegal moves) and the latency of the player's answers.

use serde_json::json;
use xq_engine::rules::Reason;

/// Why a player lost a game by its own failure rather than on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The move overran the clock (or movetime) by more than the forfeit margin.
    /// `killed`: the runner stopped waiting at the deadline, so the overrun was
    /// at least `overrun_ms`.
    TimeLoss { overrun_ms: u64, killed: bool },
    /// The engine exited, could not be started or could not be written to, or
    /// the built-in engine's search panicked.
    Crash,
    /// An illegal or malformed move, or a line that breaks the protocol.
    IllegalMove,
    /// A draw claim (UCCI `nobestmove` in a position with legal moves) that
    /// the rules in force do not give: a loss by the rules, not a failure
    /// of the engine or its host.
    FalseDrawClaim,
}

impl Fault {
    /// The reason the game ends with.
    pub fn reason(self) -> Reason {
        match self {
            Fault::TimeLoss { .. } => Reason::TimeForfeit,
            Fault::Crash => Reason::Resignation,
            Fault::IllegalMove => Reason::IllegalMove,
            Fault::FalseDrawClaim => Reason::FalseDrawClaim,
        }
    }
}

/// One player's side of one game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameStats {
    /// Per move: from the request to the answer, in microseconds (an external
    /// engine: from the write of `go` to the read of `bestmove`).
    pub latencies_us: Vec<u32>,
    /// The fault the player lost the game by, if any.
    pub fault: Option<Fault>,
}

impl GameStats {
    /// Records one answer's latency.
    pub fn answered(&mut self, latency: std::time::Duration) {
        self.latencies_us
            .push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
    }
}

/// One player's totals over a match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlayerStats {
    pub games: u64,
    pub time_losses: u64,
    pub crashes: u64,
    pub illegal_moves: u64,
    pub false_draw_claims: u64,
    /// The overrun of each time loss, ms, in game order (`killed` ones are lower
    /// bounds).
    pub overruns_ms: Vec<u64>,
    /// Every answer's latency, µs.
    latencies_us: Vec<u32>,
}

impl PlayerStats {
    /// Counts one game.
    pub fn add(&mut self, g: &GameStats) {
        self.games += 1;
        self.latencies_us.extend_from_slice(&g.latencies_us);
        match g.fault {
            Some(Fault::TimeLoss { overrun_ms, .. }) => {
                self.time_losses += 1;
                self.overruns_ms.push(overrun_ms);
            }
            Some(Fault::Crash) => self.crashes += 1,
            Some(Fault::IllegalMove) => self.illegal_moves += 1,
            Some(Fault::FalseDrawClaim) => self.false_draw_claims += 1,
            None => {}
        }
    }

    /// Answers counted.
    pub fn moves(&self) -> usize {
        self.latencies_us.len()
    }

    /// The median answer latency in µs (the lower middle of an even count).
    pub fn median_latency_us(&self) -> Option<u32> {
        let mut v = self.latencies_us.clone();
        if v.is_empty() {
            return None;
        }
        let mid = (v.len() - 1) / 2;
        Some(*v.select_nth_unstable(mid).1)
    }

    /// The longest answer latency in µs.
    pub fn max_latency_us(&self) -> Option<u32> {
        self.latencies_us.iter().copied().max()
    }

    /// The totals as JSON (latencies in ms).
    pub fn to_json(&self) -> serde_json::Value {
        let ms = |us: Option<u32>| us.map(|us| f64::from(us) / 1000.0);
        json!({
            "games": self.games,
            "moves": self.moves(),
            "time_losses": self.time_losses,
            "time_loss_overruns_ms": self.overruns_ms,
            "crashes": self.crashes,
            "illegal_moves": self.illegal_moves,
            "false_draw_claims": self.false_draw_claims,
            "median_latency_ms": ms(self.median_latency_us()),
            "max_latency_ms": ms(self.max_latency_us()),
        })
    }

    /// One line for the text summary.
    pub fn summary(&self) -> String {
        let ms = |us: Option<u32>| {
            us.map_or("-".to_string(), |us| {
                format!("{:.2}", f64::from(us) / 1000.0)
            })
        };
        let overruns: Vec<String> = self.overruns_ms.iter().map(u64::to_string).collect();
        format!(
            "time losses {}{}, crashes {}, illegal moves {}, false draw claims {}; latency median {} ms, max {} ms over {} moves",
            self.time_losses,
            if overruns.is_empty() {
                String::new()
            } else {
                format!(" (overrun ms: {})", overruns.join(", "))
            },
            self.crashes,
            self.illegal_moves,
            self.false_draw_claims,
            ms(self.median_latency_us()),
            ms(self.max_latency_us()),
            self.moves()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counts_faults_and_latencies() {
        let mut s = PlayerStats::default();
        assert_eq!(s.median_latency_us(), None);
        let mut g = GameStats::default();
        for us in [300, 100, 200, 5000] {
            g.answered(Duration::from_micros(us));
        }
        g.fault = Some(Fault::TimeLoss {
            overrun_ms: 42,
            killed: false,
        });
        s.add(&g);
        s.add(&GameStats {
            latencies_us: vec![150],
            fault: Some(Fault::Crash),
        });
        s.add(&GameStats {
            latencies_us: vec![],
            fault: Some(Fault::IllegalMove),
        });
        s.add(&GameStats {
            latencies_us: vec![],
            fault: Some(Fault::FalseDrawClaim),
        });
        assert_eq!(
            (
                s.games,
                s.time_losses,
                s.crashes,
                s.illegal_moves,
                s.false_draw_claims
            ),
            (4, 1, 1, 1, 1)
        );
        assert_eq!(Fault::FalseDrawClaim.reason(), Reason::FalseDrawClaim);
        assert_eq!(s.overruns_ms, [42]);
        assert_eq!(s.moves(), 5);
        assert_eq!(s.median_latency_us(), Some(200));
        assert_eq!(s.max_latency_us(), Some(5000));
        assert!(s.summary().contains("overrun ms: 42"), "{}", s.summary());
        assert_eq!(s.to_json()["max_latency_ms"], 5.0);
        assert_eq!(Fault::Crash.reason(), Reason::Resignation);
    }
}
