//! `xq-engine`: the UCI/UCCI engine, plus command-line tools (perft, bench, params,
//! adjudicate, notation).

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use xq_engine::notation::{self, Notation};
use xq_engine::uci::{self, Uci};
use xq_engine::{Bitboard, Game, Move, Params, Position, RuleSet, START_FEN, bench, perft};

#[derive(Parser)]
#[command(
    name = "xq-engine",
    version,
    about = "Xiangqi engine: UCI front end and tools"
)]
struct Cli {
    /// TOML file of `name = value` lines setting any subset of the tunable
    /// parameters (for UCI mode and bench).
    #[arg(long, global = true, value_name = "FILE")]
    params: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ParamsFormat {
    /// name, value, min, max, c_end, r_end columns.
    Table,
    /// `name, int, value, min, max, c_end, r_end` lines for SPSA (fishtest, OpenBench).
    Spsa,
    /// A JSON array of objects.
    Json,
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
        /// Rule presets joined with '+' (only `conversion` changes the count).
        #[arg(long, default_value = "standard")]
        rules: String,
    },
    /// Plays moves under a rule set and prints how the game ended:
    /// `result: red|black|draw reason: <reason> ply: <n>`, or `result: none`.
    ///
    /// Reasons: checkmate, stalemate, perpetual-check, perpetual-chase,
    /// perpetual-check-and-chase, mutual-perpetual, repetition, move-limit,
    /// insufficient-material (`pikafish` rules only).
    /// Malformed input, an illegal move, or a move after the end exits with code 2.
    ///
    /// With `--batch`, reads games from standard input instead, one a line as
    /// `FEN | move move ...`, and prints one line for each: the outcome, or
    /// `error: <what was wrong>` for a bad line (the batch goes on).
    Adjudicate {
        /// Rule presets joined with '+', e.g. `standard+conversion`, `asian`.
        #[arg(long, default_value = "standard")]
        rules: String,
        /// The start position in FEN (one argument, quoted).
        #[arg(long, default_value = START_FEN)]
        fen: String,
        /// Read `FEN | moves` lines from standard input.
        #[arg(long, conflicts_with = "moves")]
        batch: bool,
        /// Append ` natures: ` and the nature of every move of the judged
        /// repetition (check, chase, mate-threat, minor-chase, idle; `unjudged`
        /// outside it), comma-separated.
        #[arg(long)]
        natures: bool,
        /// Moves in coordinate notation (`h2e2`, ranks 0-9 from Red's side).
        moves: Vec<String>,
    },
    /// Reads a move sequence in any notation (coordinates, WXF, Chinese or 一字三码), plays
    /// it and prints each move in the chosen notation, one per line.
    Notation {
        /// Starting position in FEN, or `startpos` (the default).
        #[arg(long, default_value = "startpos")]
        fen: String,
        /// Notation to print: chinese, wxf, iccs or yizisanma.
        #[arg(long)]
        to: Notation,
        /// The moves, each in any accepted notation (h2e2, C2.5, Ｃ２＝５, 炮二平五, 炮2 5, 马325).
        moves: Vec<String>,
    },
    /// Runs the UCI command loop (the default without a subcommand).
    Uci,
    /// Searches the fixed bench positions to a fixed depth and prints the node
    /// count (the search's fingerprint) and the speed.
    Bench {
        /// Depth in plies.
        #[arg(default_value_t = bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Search threads: above 1 the time is the time to depth of a
        /// multi-threaded search, and the node count is no signature.
        #[arg(long, default_value_t = 1,
              value_parser = clap::value_parser!(u32).range(1..=xq_engine::search::MAX_THREADS as i64))]
        threads: u32,
    },
    /// Lists every tunable parameter with its current value and range.
    Params {
        #[arg(long, value_enum, default_value_t = ParamsFormat::Table)]
        format: ParamsFormat,
    },
}

fn load_params(path: Option<&PathBuf>) -> anyhow::Result<Params> {
    let Some(path) = path else {
        return Ok(Params::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read parameter file '{}'", path.display()))?;
    Params::from_toml(&text).with_context(|| format!("in parameter file '{}'", path.display()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let params = load_params(cli.params.as_ref())?;
    match cli.command {
        None | Some(Command::Uci) => {
            Uci::with_params(params).run(io::stdin().lock(), io::stdout())?;
        }
        Some(Command::Bench { depth, threads }) => {
            let mut out = io::stdout().lock();
            let r = bench::run_threads(depth, threads as usize, &params, &mut out)?;
            writeln!(out, "Total time (ms): {}", r.elapsed.as_millis())?;
            writeln!(out, "Nodes searched: {}", r.nodes)?;
            writeln!(out, "Nodes/second: {}", r.nps())?;
        }
        Some(Command::Params { format }) => {
            let text = match format {
                ParamsFormat::Table => params.to_table(),
                ParamsFormat::Spsa => params.to_spsa(),
                ParamsFormat::Json => params.to_json() + "\n",
            };
            io::stdout().lock().write_all(text.as_bytes())?;
        }
        Some(Command::Perft {
            depth,
            fen,
            bench,
            rules,
        }) => {
            let rules = parse_rules(&rules)?;
            let mut pos = if fen.is_empty() {
                Position::startpos()
            } else {
                let text = fen.join(" ");
                Position::from_fen(&text).with_context(|| format!("bad fen '{text}'"))?
            };
            pos.set_conversion(rules.conversion);
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
        Some(Command::Adjudicate {
            rules,
            fen,
            batch,
            natures,
            moves,
        }) => {
            let rules = parse_rules(&rules)?;
            let mut out = BufWriter::new(io::stdout().lock());
            if !batch {
                let game = adjudicate(&rules, &fen, &moves)?;
                writeln!(out, "{}", outcome_line(&game, natures))?;
                return Ok(());
            }
            for (n, line) in io::stdin().lock().lines().enumerate() {
                let line = line.context("cannot read standard input")?;
                let answer = batch_line(&rules, &line)
                    .map(|game| outcome_line(&game, natures))
                    .unwrap_or_else(|e| format!("error: line {}: {e:#}", n + 1));
                writeln!(out, "{answer}")?;
            }
        }
    }
    Ok(())
}

fn parse_rules(text: &str) -> anyhow::Result<RuleSet> {
    text.parse()
        .with_context(|| format!("bad --rules '{text}'"))
}

/// A batch line `FEN | moves` adjudicated under `rules`.
fn batch_line(rules: &RuleSet, line: &str) -> anyhow::Result<Game> {
    let (fen, moves) = line
        .split_once('|')
        .with_context(|| format!("expected 'FEN | moves', got '{line}'"))?;
    let moves: Vec<String> = moves.split_whitespace().map(str::to_string).collect();
    adjudicate(rules, fen.trim(), &moves)
}

/// The line `adjudicate` prints for a game.
fn outcome_line(game: &Game, natures: bool) -> String {
    let mut line = match game.outcome() {
        Some(outcome) => outcome.to_string(),
        None => "result: none".to_string(),
    };
    if natures {
        let words: Vec<String> = game
            .records()
            .iter()
            .map(|r| {
                let chased = r.judged.map_or(Bitboard::EMPTY, |n| n.chase.major);
                let squares: Vec<String> = chased.map(|s| s.to_string()).collect();
                match squares.is_empty() {
                    true => r.nature().to_string(),
                    false => format!("{}:{}", r.nature(), squares.join("+")),
                }
            })
            .collect();
        line.push_str(" natures: ");
        line.push_str(&words.join(","));
    }
    line
}

/// Plays `moves` from `fen` under `rules`.
fn adjudicate(rules: &RuleSet, fen: &str, moves: &[String]) -> anyhow::Result<Game> {
    let start = Position::from_fen(fen).with_context(|| format!("bad fen '{fen}'"))?;
    let mut game = Game::explained(start, *rules);
    for (i, text) in moves.iter().enumerate() {
        let mv = Move::parse_coords(text).with_context(|| {
            format!(
                "bad move text '{text}' (move {}): expected coordinates such as h2e2",
                i + 1
            )
        })?;
        game.play(mv)
            .with_context(|| format!("cannot play move {} '{text}'", i + 1))?;
    }
    Ok(game)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn line(rules: &str, fen: &str, moves: &str, natures: bool) -> anyhow::Result<String> {
        let rules = parse_rules(rules)?;
        Ok(outcome_line(
            &adjudicate(&rules, fen, &words(moves))?,
            natures,
        ))
    }

    #[test]
    fn adjudicate_prints_the_first_ending() {
        let fen = "4k4/7R1/9/9/9/9/9/9/9/3K5 w";
        let moves = "h8h9 e9e8 h9h8 e8e9 h8h9 e9e8 h9h8 e8e9";
        assert_eq!(
            line("standard", fen, moves, false).unwrap(),
            "result: black reason: perpetual-check ply: 8"
        );
        assert_eq!(
            line("asian", fen, moves, true).unwrap(),
            "result: black reason: perpetual-check ply: 8 \
             natures: check,idle,check,idle,check,idle,check,idle"
        );
        assert_eq!(
            line("standard", START_FEN, "h2e2 h9g7", true).unwrap(),
            "result: none natures: unjudged,unjudged"
        );
    }

    #[test]
    fn batch_lines_are_fen_bar_moves() {
        let rules = RuleSet::STANDARD;
        let game = batch_line(&rules, "4k4/7R1/9/9/9/9/9/9/9/3K5 w | h8h9 e9e8").unwrap();
        assert_eq!(game.records().len(), 2);
        let e = format!("{:#}", batch_line(&rules, "4k4/9 w h8h9").unwrap_err());
        assert!(e.contains("expected 'FEN | moves'"), "{e}");
        let e = format!("{:#}", batch_line(&rules, "9/9 | h8h9").unwrap_err());
        assert!(e.contains("bad fen '9/9'"), "{e}");
    }

    #[test]
    fn adjudicate_errors_name_the_bad_part() {
        let err = |rules: &str, fen: &str, moves: &str| {
            format!("{:#}", line(rules, fen, moves, false).unwrap_err())
        };
        assert!(err("standard+fast", START_FEN, "").contains("'fast'"));
        assert!(err("standard", "9/9", "").contains("bad fen '9/9'"));
        assert!(err("standard", START_FEN, "h2e2 h9").contains("'h9'"));
        assert!(err("standard", START_FEN, "h2e3").contains("illegal move 'h2e3'"));
        let fen = "3k5/R8/9/9/9/9/9/9/9/4K1R2 w";
        assert!(err("standard", fen, "g0g9 d9e9").contains("after the end"));
    }
}
