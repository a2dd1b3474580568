//! `xq-engine`: the UCI/UCCI engine, plus command-line tools (perft, bench, params).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use xq_engine::uci::{self, Uci};
use xq_engine::{Params, Position, bench, perft};

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
    },
    /// Runs the UCI command loop (the default without a subcommand).
    Uci,
    /// Searches the fixed bench positions to a fixed depth and prints the node
    /// count (the search's fingerprint) and the speed.
    Bench {
        /// Depth in plies.
        #[arg(default_value_t = bench::DEFAULT_DEPTH)]
        depth: u32,
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
        Some(Command::Bench { depth }) => {
            let mut out = io::stdout().lock();
            let r = bench::run(depth, &params, &mut out)?;
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
