//! The UCI front end: reads commands line by line and writes answers.
//!
//! Supported so far: `uci`, `isready`, `ucinewgame`, `position startpos|fen <FEN>
//! [moves <m>…]`, `go perft <depth>`, `d` (print the board) and `quit`.

use std::io::{BufRead, Write};

use crate::{Move, Position, perft};

/// Why a command could not be carried out; printed as `info string error: …`.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    #[error("bad position command '{0}': expected 'startpos' or 'fen <FEN>'")]
    BadPosition(String),
    #[error(transparent)]
    Fen(#[from] crate::FenError),
    #[error("illegal or malformed move '{0}' in position command")]
    BadMove(String),
    #[error("bad go command '{0}'")]
    BadGo(String),
}

/// The engine's state between commands.
#[derive(Debug)]
pub struct Uci {
    pos: Position,
}

impl Default for Uci {
    fn default() -> Self {
        Uci {
            pos: Position::startpos(),
        }
    }
}

/// Whether to keep reading commands.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

impl Uci {
    /// Runs the command loop until `quit` or end of input.
    pub fn run(&mut self, input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
        for line in input.lines() {
            if self.handle(&line?, &mut out)? == Flow::Quit {
                break;
            }
            out.flush()?;
        }
        Ok(())
    }

    /// Carries out one command line.
    pub fn handle(&mut self, line: &str, out: &mut impl Write) -> std::io::Result<Flow> {
        let mut words = line.split_whitespace();
        let Some(cmd) = words.next() else {
            return Ok(Flow::Continue);
        };
        let rest: Vec<&str> = words.collect();
        let result = match cmd {
            "uci" => {
                writeln!(out, "id name xq-engine {}", env!("CARGO_PKG_VERSION"))?;
                writeln!(out, "id author the xq developers")?;
                writeln!(out, "uciok")?;
                Ok(())
            }
            "isready" => {
                writeln!(out, "readyok")?;
                Ok(())
            }
            "ucinewgame" => Ok(()),
            "position" => self.position(&rest),
            "go" => self.go(&rest, out)?,
            "d" => {
                writeln!(out, "{}", self.pos)?;
                Ok(())
            }
            "quit" => return Ok(Flow::Quit),
            _ => {
                writeln!(out, "info string unknown command '{cmd}'")?;
                Ok(())
            }
        };
        if let Err(e) = result {
            writeln!(out, "info string error: {e}")?;
        }
        Ok(Flow::Continue)
    }

    fn position(&mut self, args: &[&str]) -> Result<(), UciError> {
        let moves_at = args
            .iter()
            .position(|&w| w == "moves")
            .unwrap_or(args.len());
        let mut pos = match args.first() {
            Some(&"startpos") if moves_at == 1 => Position::startpos(),
            Some(&"fen") if moves_at > 1 => Position::from_fen(&args[1..moves_at].join(" "))?,
            _ => return Err(UciError::BadPosition(args.join(" "))),
        };
        for &m in args.iter().skip(moves_at + 1) {
            let mv = Move::parse_coords(m)
                .filter(|&mv| pos.is_legal(mv))
                .ok_or_else(|| UciError::BadMove(m.to_string()))?;
            pos.make(mv);
        }
        self.pos = pos;
        Ok(())
    }

    fn go(&mut self, args: &[&str], out: &mut impl Write) -> std::io::Result<Result<(), UciError>> {
        match args {
            ["perft", depth] => match depth.parse::<u32>() {
                Ok(d) => {
                    print_divide(&mut self.pos, d, out)?;
                    Ok(Ok(()))
                }
                Err(_) => Ok(Err(UciError::BadGo(args.join(" ")))),
            },
            _ => Ok(Err(UciError::BadGo(args.join(" ")))),
        }
    }
}

/// Prints `<move>: <count>` per root move, then `Nodes searched: <total>`.
pub fn print_divide(pos: &mut Position, depth: u32, out: &mut impl Write) -> std::io::Result<u64> {
    let parts = perft::divide(pos, depth);
    let total = if depth == 0 {
        1
    } else {
        parts.iter().map(|p| p.1).sum()
    };
    for (mv, n) in parts {
        writeln!(out, "{mv}: {n}")?;
    }
    writeln!(out)?;
    writeln!(out, "Nodes searched: {total}")?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(lines: &str) -> String {
        let mut out = Vec::new();
        Uci::default().run(lines.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn perft_over_uci() {
        let out = session("position startpos moves h2e2\ngo perft 1\nquit\n");
        assert!(out.contains("Nodes searched: 45"), "{out}");
        let out = session("position startpos\ngo perft 2\n");
        assert!(out.contains("h2e2: 45"), "{out}");
        assert!(out.contains("Nodes searched: 1920"), "{out}");
    }

    #[test]
    fn bad_input_is_reported() {
        let out = session("position startpos moves h2h8\nposition fen 9/9\ngo perft x\nfoo\n");
        assert!(out.contains("illegal or malformed move 'h2h8'"), "{out}");
        assert!(out.contains("10 separated by '/'"), "{out}");
        assert!(out.contains("bad go command 'perft x'"), "{out}");
        assert!(out.contains("unknown command 'foo'"), "{out}");
    }
}
