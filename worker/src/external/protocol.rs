//! The text of the UCI and UCCI engine protocols: the commands sent and the
//! replies parsed.
//!
//! UCI and UCCI differ for this runner only in the handshake (`uci`/`uciok` or
//! `ucci`/`ucciok`), in `setoption` (`setoption name N value V`, or
//! `setoption N V`) and in the clock fields of `go` (`wtime btime winc binc`, or
//! UCCI's `time increment opptime opptime-increment` from the mover's view, in
//! milliseconds as the runner sends them). Moves are coordinates (`h2e2`,
//! ranks 0–9) in both.

use std::fmt::Write as _;

use xq_engine::Color;

pub use xq_proto::Protocol;

/// The text of a [`Protocol`] (the enum itself is part of the cluster's
/// contract, in `xq_proto`).
pub trait ProtocolText {
    /// The handshake command and the reply that ends it.
    fn handshake(self) -> (&'static str, &'static str);
    /// The command setting option `name` to `value`.
    fn setoption(self, name: &str, value: &str) -> String;
}

impl ProtocolText for Protocol {
    fn handshake(self) -> (&'static str, &'static str) {
        match self {
            Protocol::Uci => ("uci", "uciok"),
            Protocol::Ucci => ("ucci", "ucciok"),
        }
    }

    fn setoption(self, name: &str, value: &str) -> String {
        match self {
            Protocol::Uci => format!("setoption name {name} value {value}"),
            Protocol::Ucci => format!("setoption {name} {value}"),
        }
    }
}

/// How long one `go` may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Go {
    Nodes(u64),
    Depth(u32),
    MoveTimeMs(u64),
    /// Both clocks in ms, the mover's colour, and moves to the next control.
    Clock {
        time_ms: [u64; 2],
        inc_ms: [u64; 2],
        mover: Color,
        moves_to_go: Option<u32>,
    },
}

/// The `go` command for `limit`.
pub fn go_command(protocol: Protocol, limit: Go) -> String {
    let mut s = String::from("go");
    match limit {
        Go::Nodes(n) => {
            let _ = write!(s, " nodes {n}");
        }
        Go::Depth(d) => {
            let _ = write!(s, " depth {d}");
        }
        Go::MoveTimeMs(ms) => {
            let _ = write!(s, " movetime {ms}");
        }
        Go::Clock {
            time_ms,
            inc_ms,
            mover,
            moves_to_go,
        } => {
            let (us, them) = (mover.index(), mover.other().index());
            match protocol {
                Protocol::Uci => {
                    let _ = write!(
                        s,
                        " wtime {} btime {} winc {} binc {}",
                        time_ms[0], time_ms[1], inc_ms[0], inc_ms[1]
                    );
                }
                Protocol::Ucci => {
                    let _ = write!(
                        s,
                        " time {} increment {} opptime {} oppincrement {}",
                        time_ms[us], inc_ms[us], time_ms[them], inc_ms[them]
                    );
                }
            }
            if let Some(m) = moves_to_go {
                let _ = write!(s, " movestogo {m}");
            }
        }
    }
    s
}

/// What an `info` line said that the runner uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Info {
    pub depth: Option<u32>,
    /// Centipawns from the mover's view; a mate in `n` plies maps to
    /// ±([`MATE_CP`] − n).
    pub score_cp: Option<i32>,
    pub nodes: Option<u64>,
}

/// Mate scores are reported as this minus the distance in plies.
pub const MATE_CP: i32 = 30_000;

/// Reads the fields of an `info` line (unknown fields are skipped).
pub fn parse_info(line: &str) -> Info {
    let mut info = Info::default();
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 1;
    while i < words.len() {
        let next = words.get(i + 1).copied();
        match words[i] {
            "depth" => info.depth = next.and_then(|w| w.parse().ok()),
            "nodes" => info.nodes = next.and_then(|w| w.parse().ok()),
            "score" => {
                // UCI: `score cp N` or `score mate N` (moves); UCCI: `score N`.
                if let Some(v) = next.and_then(|w| w.parse::<i32>().ok()) {
                    info.score_cp = Some(v);
                } else {
                    let value = words.get(i + 2).and_then(|w| w.parse::<i32>().ok());
                    info.score_cp = match (next, value) {
                        (Some("cp"), Some(v)) => Some(v),
                        (Some("mate"), Some(m)) if m > 0 => Some(MATE_CP - (2 * m - 1)),
                        (Some("mate"), Some(m)) => Some(-MATE_CP - 2 * m),
                        _ => info.score_cp,
                    };
                    i += 1;
                }
            }
            "pv" | "string" => break,
            _ => {}
        }
        i += 1;
    }
    info
}

/// The move of a `bestmove` (UCI) line, or `None` for `bestmove (none)` and
/// UCCI's `nobestmove`. The text is not checked here: the arbiter judges it.
pub fn parse_bestmove(line: &str) -> Option<Option<String>> {
    let mut words = line.split_whitespace();
    match words.next()? {
        "bestmove" => match words.next() {
            Some("(none)") | None => Some(None),
            Some(m) => Some(Some(m.to_string())),
        },
        "nobestmove" => Some(None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_commands() {
        assert_eq!(go_command(Protocol::Uci, Go::Nodes(500)), "go nodes 500");
        let clock = Go::Clock {
            time_ms: [60_000, 30_000],
            inc_ms: [500, 250],
            mover: Color::Black,
            moves_to_go: Some(12),
        };
        assert_eq!(
            go_command(Protocol::Uci, clock),
            "go wtime 60000 btime 30000 winc 500 binc 250 movestogo 12"
        );
        assert_eq!(
            go_command(Protocol::Ucci, clock),
            "go time 30000 increment 250 opptime 60000 oppincrement 500 movestogo 12"
        );
        assert_eq!(
            Protocol::Ucci.setoption("hashsize", "16"),
            "setoption hashsize 16"
        );
    }

    #[test]
    fn info_and_bestmove() {
        let i = parse_info("info depth 7 seldepth 12 score cp -35 nodes 12345 nps 9 pv h2e2 h9g7");
        assert_eq!(
            i,
            Info {
                depth: Some(7),
                score_cp: Some(-35),
                nodes: Some(12345)
            }
        );
        assert_eq!(parse_info("info score mate 2").score_cp, Some(MATE_CP - 3));
        assert_eq!(
            parse_info("info score mate -1").score_cp,
            Some(-(MATE_CP - 2))
        );
        assert_eq!(
            parse_info("info depth 5 score -17 pv h2e2").score_cp,
            Some(-17)
        );
        assert_eq!(parse_info("info string score cp 5"), Info::default());
        assert_eq!(parse_info("info depth x score cp"), Info::default());
        assert_eq!(
            parse_bestmove("bestmove h2e2 ponder h9g7"),
            Some(Some("h2e2".into()))
        );
        assert_eq!(parse_bestmove("bestmove (none)"), Some(None));
        assert_eq!(parse_bestmove("nobestmove"), Some(None));
        assert_eq!(parse_bestmove("info depth 1"), None);
    }
}
