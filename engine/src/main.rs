//! `xq-engine`: the UCI engine, plus command-line tools (perft, …).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use xq_engine::notation::{self, Notation};
use xq_engine::uci::{self, Uci};
use xq_engine::{Position, perft};

#[derive(Parser)]
#[command(
    name = "xq-engine",
    version,
    about = "Xiangqi engine: UCI front end and tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Counts leaf nodes of the legal move tree: one line per root move, then the total.
    Perft {
        /// Depth in plies.
        depth: u32,
        /// Position in FEN (may be given as several words); the start position if absent.
        fen: Vec<String>,
        /// Print only the total and the speed, not the per-move counts.
        #[arg(long)]
        bench: bool,
    },
    /// Reads a move sequence in any notation (coordinates, WXF or Chinese), plays it
    /// and prints each move in the chosen notation, one per line.
    Notation {
        /// Starting position in FEN, or `startpos` (the default).
        #[arg(long, default_value = "startpos")]
        fen: String,
        /// Notation to print: chinese, wxf or iccs.
        #[arg(long)]
        to: Notation,
        /// The moves, each in any accepted notation (h2e2, C2.5, 炮二平五).
        moves: Vec<String>,
    },
    /// Runs the UCI command loop (the default without a subcommand).
    Uci,
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None | Some(Command::Uci) => {
            Uci::default().run(io::stdin().lock(), io::stdout().lock())?;
        }
        Some(Command::Perft { depth, fen, bench }) => {
            let mut pos = if fen.is_empty() {
                Position::startpos()
            } else {
                let text = fen.join(" ");
                Position::from_fen(&text).with_context(|| format!("bad fen '{text}'"))?
            };
            let mut out = BufWriter::new(io::stdout().lock());
            let start = Instant::now();
            let nodes = if bench {
                let n = perft::perft(&mut pos, depth);
                writeln!(out, "Nodes searched: {n}")?;
                n
            } else {
                uci::print_divide(&mut pos, depth, &mut out)?
            };
            let secs = start.elapsed().as_secs_f64();
            writeln!(out, "Time: {:.3} s", secs)?;
            writeln!(out, "Nodes/second: {:.0}", nodes as f64 / secs.max(1e-9))?;
        }
        Some(Command::Notation { fen, to, moves }) => {
            let mut pos = if fen.trim() == "startpos" {
                Position::startpos()
            } else {
                Position::from_fen(&fen).with_context(|| format!("bad fen '{fen}'"))?
            };
            let mut out = BufWriter::new(io::stdout().lock());
            for (i, text) in moves.iter().enumerate() {
                let context = || format!("move {}", i + 1);
                let mv = notation::parse_move(&pos, text).with_context(context)?;
                let written = notation::format_move(&pos, mv, to).with_context(context)?;
                writeln!(out, "{written}")?;
                pos.make(mv);
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xq-engine: {e:#}");
            ExitCode::from(2)
        }
    }
}
