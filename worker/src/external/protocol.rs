//! The text of the UCI and UCCI engine protocols: the commands sent and the
//! replies parsed.
//!
//! UCI and UCCI differ for this runner in the handshake (`uci`/`uciok` or
//! `ucci`/`ucciok`), in `option` declarations and `setoption` (`setoption name
//! N value V`, or `setoption N V`) and in `go`: UCI's clock fields are `wtime
//! btime winc binc` in milliseconds; UCCI's are `time increment opptime
//! oppincrement` from the mover's view, in seconds unless the engine was told
//! `setoption usemillisec true` (UCCI 3.0), and UCCI has no `movetime` (a fixed
//! time per move is `time T movestogo 1`). Moves are coordinates in the engine's
//! [dialect](super::dialect).

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

/// The unit of UCCI's clock fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeUnit {
    /// Milliseconds: UCI always; UCCI after `setoption usemillisec true`.
    #[default]
    Millis,
    /// Whole seconds, rounded down: UCCI without `usemillisec`.
    Seconds,
}

impl TimeUnit {
    fn of(self, ms: u64) -> u64 {
        match self {
            TimeUnit::Millis => ms,
            TimeUnit::Seconds => ms / 1000,
        }
    }
}

/// Appends the `go` command for `limit` to `s`; UCCI clock fields in `unit`.
pub fn write_go(s: &mut String, protocol: Protocol, limit: Go, unit: TimeUnit) {
    s.push_str("go");
    match limit {
        Go::Nodes(n) => {
            let _ = write!(s, " nodes {n}");
        }
        Go::Depth(d) => {
            let _ = write!(s, " depth {d}");
        }
        Go::MoveTimeMs(ms) => match protocol {
            Protocol::Uci => {
                let _ = write!(s, " movetime {ms}");
            }
            Protocol::Ucci => {
                let _ = write!(s, " time {} movestogo 1", unit.of(ms));
            }
        },
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
                    let t = |ms| unit.of(ms);
                    let _ = write!(
                        s,
                        " time {} increment {} opptime {} oppincrement {}",
                        t(time_ms[us]),
                        t(inc_ms[us]),
                        t(time_ms[them]),
                        t(inc_ms[them])
                    );
                }
            }
            if let Some(m) = moves_to_go {
                let _ = write!(s, " movestogo {m}");
            }
        }
    }
}

/// The `go` command for `limit`.
pub fn go_command(protocol: Protocol, limit: Go, unit: TimeUnit) -> String {
    let mut s = String::new();
    write_go(&mut s, protocol, limit, unit);
    s
}

/// An option an engine declared in its handshake.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OptionDecl {
    pub name: String,
    /// The `var` values of a combo option, in order.
    pub vars: Vec<String>,
}

/// Reads an `option` line: UCI `option name <N> type <T> … [var <V>]…`, UCCI
/// `option <N> type <T> …`. `None` for any other line.
pub fn parse_option(protocol: Protocol, line: &str) -> Option<OptionDecl> {
    let mut words = line.split_whitespace().peekable();
    if words.next()? != "option" {
        return None;
    }
    if protocol == Protocol::Uci && words.next_if_eq(&"name").is_none() {
        return None;
    }
    let mut name = Vec::new();
    while let Some(w) = words.next_if(|&w| w != "type") {
        name.push(w);
    }
    if name.is_empty() {
        return None;
    }
    let mut vars = Vec::new();
    let keywords = ["type", "default", "min", "max", "var"];
    while let Some(w) = words.next() {
        if w == "var" {
            let mut value = Vec::new();
            while let Some(v) = words.next_if(|v| !keywords.contains(v)) {
                value.push(v);
            }
            vars.push(value.join(" "));
        }
    }
    Some(OptionDecl {
        name: name.join(" "),
        vars,
    })
}

/// What an `info` line said that the runner uses.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Info {
    pub depth: Option<u32>,
    /// Centipawns from the mover's view; a mate in `n` plies maps to
    /// ±([`MATE_CP`] − n).
    pub score_cp: Option<i32>,
    pub nodes: Option<u64>,
    /// The principal variation as the engine wrote it, in its dialect.
    pub pv: Option<String>,
    /// The text of the last `info string` line.
    pub string: Option<String>,
}

impl Info {
    /// `later` merged over `self`: the fields `later` has, else those of `self`.
    pub fn merge(&mut self, later: Info) {
        self.depth = later.depth.or(self.depth);
        self.score_cp = later.score_cp.or(self.score_cp);
        self.nodes = later.nodes.or(self.nodes);
        if later.pv.is_some() {
            self.pv = later.pv;
        }
        if later.string.is_some() {
            self.string = later.string;
        }
    }
}

/// Mate scores are reported as this minus the distance in plies.
pub const MATE_CP: i32 = 30_000;

/// A reported centipawn score is clamped to ± this: far beyond any mate
/// score, and small enough that negating or adding scores never overflows.
const SCORE_LIMIT: i32 = 1 << 24;

/// A reported centipawn score, clamped to `±SCORE_LIMIT`.
fn cp_score(cp: i32) -> i32 {
    cp.clamp(-SCORE_LIMIT, SCORE_LIMIT)
}

/// The score of UCI's `score mate MOVES`: mating in `MOVES` (> 0) is a mate
/// in `2 MOVES − 1` plies, being mated in `−MOVES` (≤ 0) one in `−2 MOVES`;
/// a distance beyond `MATE_CP` plies is taken as the longest one.
fn mate_score(moves: i32) -> i32 {
    let moves = moves.clamp(1 - MATE_CP / 2, MATE_CP / 2 - 1);
    if moves > 0 {
        MATE_CP - (2 * moves - 1)
    } else {
        -MATE_CP - 2 * moves
    }
}

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
                    info.score_cp = Some(cp_score(v));
                } else {
                    let value = words.get(i + 2).and_then(|w| w.parse::<i32>().ok());
                    info.score_cp = match (next, value) {
                        (Some("cp"), Some(v)) => Some(cp_score(v)),
                        (Some("mate"), Some(m)) => Some(mate_score(m)),
                        _ => info.score_cp,
                    };
                    i += 1;
                }
            }
            "pv" => {
                info.pv = Some(words[i + 1..].join(" "));
                break;
            }
            "string" => {
                info.string = Some(words[i + 1..].join(" "));
                break;
            }
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
        let ms = TimeUnit::Millis;
        assert_eq!(
            go_command(Protocol::Uci, Go::Nodes(500), ms),
            "go nodes 500"
        );
        let clock = Go::Clock {
            time_ms: [60_000, 30_500],
            inc_ms: [500, 2250],
            mover: Color::Black,
            moves_to_go: Some(12),
        };
        assert_eq!(
            go_command(Protocol::Uci, clock, ms),
            "go wtime 60000 btime 30500 winc 500 binc 2250 movestogo 12"
        );
        assert_eq!(
            go_command(Protocol::Ucci, clock, ms),
            "go time 30500 increment 2250 opptime 60000 oppincrement 500 movestogo 12"
        );
        assert_eq!(
            go_command(Protocol::Ucci, clock, TimeUnit::Seconds),
            "go time 30 increment 2 opptime 60 oppincrement 0 movestogo 12"
        );
        assert_eq!(
            go_command(Protocol::Uci, Go::MoveTimeMs(250), ms),
            "go movetime 250"
        );
        assert_eq!(
            go_command(Protocol::Ucci, Go::MoveTimeMs(2500), ms),
            "go time 2500 movestogo 1"
        );
        assert_eq!(
            go_command(Protocol::Ucci, Go::MoveTimeMs(2500), TimeUnit::Seconds),
            "go time 2 movestogo 1"
        );
        assert_eq!(
            Protocol::Ucci.setoption("hashsize", "16"),
            "setoption hashsize 16"
        );
    }

    #[test]
    fn option_declarations() {
        let fsf =
            "option name UCI_Variant type combo default chess var 3check var chess var xiangqi";
        assert_eq!(
            parse_option(Protocol::Uci, fsf),
            Some(OptionDecl {
                name: "UCI_Variant".into(),
                vars: vec!["3check".into(), "chess".into(), "xiangqi".into()],
            })
        );
        let spaced = parse_option(Protocol::Uci, "option name Clear Hash type button").unwrap();
        assert_eq!(spaced.name, "Clear Hash");
        assert!(spaced.vars.is_empty());
        let eleeye = "option idle type combo var none var small var medium default none";
        assert_eq!(
            parse_option(Protocol::Ucci, eleeye).unwrap().vars,
            ["none", "small", "medium"]
        );
        assert_eq!(
            parse_option(Protocol::Ucci, "option usemillisec type check default true")
                .unwrap()
                .name,
            "usemillisec"
        );
        for other in ["id name x", "option", "option name type spin", "uciok"] {
            assert_eq!(parse_option(Protocol::Uci, other), None, "{other}");
        }
    }

    #[test]
    fn info_and_bestmove() {
        let i = parse_info("info depth 7 seldepth 12 score cp -35 nodes 12345 nps 9 pv h2e2 h9g7");
        assert_eq!(
            i,
            Info {
                depth: Some(7),
                score_cp: Some(-35),
                nodes: Some(12345),
                pv: Some("h2e2 h9g7".into()),
                string: None,
            }
        );
        assert_eq!(parse_info("info score mate 2").score_cp, Some(MATE_CP - 3));
        for (wild, want) in [
            ("info score cp -2147483648", -SCORE_LIMIT),
            ("info score 2147483647", SCORE_LIMIT),
            ("info score mate 2147483647", 3),
            ("info score mate -2147483648", -2),
        ] {
            assert_eq!(parse_info(wild).score_cp, Some(want), "{wild}");
        }
        assert_eq!(
            parse_info("info score mate -1").score_cp,
            Some(-(MATE_CP - 2))
        );
        assert_eq!(
            parse_info("info depth 5 score -17 pv h2e2").score_cp,
            Some(-17)
        );
        let s = parse_info("info string score cp 5");
        assert_eq!(
            (s.score_cp, s.string.as_deref()),
            (None, Some("score cp 5"))
        );
        assert_eq!(parse_info("info depth x score cp"), Info::default());
        let mut merged = parse_info("info depth 3 score cp 10 pv a3a4");
        merged.merge(parse_info("info nodes 99"));
        assert_eq!(
            (merged.depth, merged.nodes, merged.pv.as_deref()),
            (Some(3), Some(99), Some("a3a4"))
        );
        assert_eq!(
            parse_bestmove("bestmove h2e2 ponder h9g7"),
            Some(Some("h2e2".into()))
        );
        assert_eq!(parse_bestmove("bestmove (none)"), Some(None));
        assert_eq!(parse_bestmove("nobestmove"), Some(None));
        assert_eq!(parse_bestmove("info depth 1"), None);
    }
}
