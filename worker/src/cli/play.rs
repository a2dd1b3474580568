//! `xq-worker play`: a local match between two parameter sets of the built-in engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use xq_engine::Position;
use xq_engine::notation::Notation;
use xq_engine::params::Params;
use xq_engine::rules::RuleSet;
use xq_games::openings::{OpeningBook, Order};
use xq_games::pgn::{self, PgnGame, PgnHeader};

use xq_proto::capacity::{Capacity, GameNeeds};
use xq_proto::cli::{AdjudicationArgs, LimitArgs, OpeningArgs};
use xq_proto::{Limit, Score};

use crate::external::{Coords, EngineConfig, Protocol, Timeouts};
use crate::runner::{MatchReport, MatchSpec, PlayedGame, PlayerConfig, Runner};
use xq_proto::cli::stdout::StdoutError;
use xq_proto::outln;

/// Arguments of `xq-worker play`.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// Parameter file of the first player ("dev"): `name = value` lines; empty = defaults.
    #[arg(long)]
    dev: Option<PathBuf>,
    /// Parameter file of the second player ("base").
    #[arg(long)]
    base: Option<PathBuf>,
    /// Game pairs to play (each opening twice, colours swapped).
    #[arg(long, default_value_t = 100)]
    pairs: u64,
    #[command(flatten)]
    limit: LimitArgs,
    /// The first player's own limit (`nodes=N`, `depth=N`, `movetime=MS`, `tc=…`).
    #[arg(long)]
    dev_limit: Option<String>,
    /// The second player's own limit.
    #[arg(long)]
    base_limit: Option<String>,
    /// Play the first player with this UCI/UCCI engine executable instead of the
    /// built-in engine.
    #[arg(long)]
    dev_engine: Option<PathBuf>,
    /// The second player's engine executable.
    #[arg(long)]
    base_engine: Option<PathBuf>,
    /// An option of the first player's engine, `NAME=VALUE` (repeatable).
    #[arg(long = "dev-option")]
    dev_options: Vec<String>,
    /// An option of the second player's engine, `NAME=VALUE` (repeatable).
    #[arg(long = "base-option")]
    base_options: Vec<String>,
    /// Protocol of external engines: uci or ucci.
    #[arg(long, default_value = "uci")]
    protocol: String,
    /// How the first player's engine numbers ranks: 0-9 (UCCI, ElephantEye,
    /// Pikafish) or 1-10 (Fairy-Stockfish, Sjaak II); detected when absent.
    #[arg(long)]
    dev_coords: Option<Coords>,
    /// How the second player's engine numbers ranks.
    #[arg(long)]
    base_coords: Option<Coords>,
    /// Forfeit margin of external engines, ms: how far a timed move may overrun
    /// the clock or movetime before the engine loses on time.
    #[arg(long, default_value_t = Timeouts::default().margin_ms)]
    time_margin: u64,
    /// Transposition table per player and thread, in MB.
    #[arg(long, default_value_t = 16)]
    hash: usize,
    /// Game threads: a game whose built-in player searches on N threads
    /// takes N of them.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Search threads of the first player's built-in engine (lazy SMP); an
    /// external engine takes `--dev-option Threads=N`.
    #[arg(long, default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=xq_engine::search::MAX_THREADS as i64))]
    dev_search_threads: u32,
    /// Search threads of the second player's built-in engine.
    #[arg(long, default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=xq_engine::search::MAX_THREADS as i64))]
    base_search_threads: u32,
    /// Rule set: presets joined with `+`, e.g. `standard+asian` (engine/RULES.md
    /// lists them; an unknown name is answered with the list).
    #[arg(long, default_value = "standard")]
    rules: String,
    #[command(flatten)]
    openings: OpeningArgs,
    /// Opening order: sequential or random.
    #[arg(long, default_value = "sequential")]
    order: String,
    /// Index of the first opening.
    #[arg(long, default_value_t = 0)]
    offset: u64,
    /// Seed of the openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    adjudication: AdjudicationArgs,
    /// Write every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Move notation in the PGN: iccs, wxf, chinese or yizisanma (一字三码).
    #[arg(long, default_value = "iccs")]
    pgn_notation: String,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn read_params(path: Option<&Path>) -> anyhow::Result<Params> {
    let Some(path) = path else {
        return Ok(Params::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read parameter file '{}'", path.display()))?;
    Params::from_toml(&text).with_context(|| format!("bad parameter file '{}'", path.display()))
}

impl PlayArgs {
    /// Validates every input into a match, before any game starts.
    fn spec(&self) -> anyhow::Result<(MatchSpec, Notation)> {
        if self.pairs == 0 {
            bail!("--pairs must be at least 1");
        }
        if self.hash == 0 || self.hash > 1 << 16 {
            bail!("--hash {} MB is out of range (1 to 65536)", self.hash);
        }
        let limit = self.limit.limit()?.unwrap_or(Limit::Nodes(2000));
        let own = |text: &Option<String>| -> anyhow::Result<Limit> {
            match text {
                Some(t) => Ok(t.parse()?),
                None => Ok(limit),
            }
        };
        let Some(protocol) = Protocol::parse(&self.protocol) else {
            bail!("unknown protocol '{}'; expected uci or ucci", self.protocol)
        };
        let engine = |path: &Option<PathBuf>,
                      options: &[String],
                      coords: Option<Coords>|
         -> anyhow::Result<_> {
            let Some(path) = path else { return Ok(None) };
            let options = options
                .iter()
                .map(|o| match o.split_once('=') {
                    Some((n, v)) => Ok((n.trim().to_string(), v.trim().to_string())),
                    None => bail!("bad engine option '{o}': expected NAME=VALUE"),
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(Some(EngineConfig {
                path: path.clone(),
                args: Vec::new(),
                protocol,
                options,
                if_offered: Vec::new(),
                timeouts: Timeouts {
                    margin_ms: self.time_margin,
                    ..Timeouts::default()
                },
                coords,
            }))
        };
        let player = |name: &str,
                      path: &Option<PathBuf>,
                      limit: Limit,
                      search_threads: usize,
                      engine|
         -> anyhow::Result<_> {
            Ok(PlayerConfig {
                name: name.to_string(),
                params: read_params(path.as_deref())?,
                limit,
                hash_mb: self.hash,
                threads: search_threads,
                engine,
                draw_contempt: true,
            })
        };
        let dev_name = self
            .dev_engine
            .as_ref()
            .map_or("dev".to_string(), |p| p.display().to_string());
        let base_name = self
            .base_engine
            .as_ref()
            .map_or("base".to_string(), |p| p.display().to_string());
        let dev = player(
            &dev_name,
            &self.dev,
            own(&self.dev_limit)?,
            self.dev_search_threads as usize,
            engine(&self.dev_engine, &self.dev_options, self.dev_coords)?,
        )?;
        let base = player(
            &base_name,
            &self.base,
            own(&self.base_limit)?,
            self.base_search_threads as usize,
            engine(&self.base_engine, &self.base_options, self.base_coords)?,
        )?;
        let rules: RuleSet = self.rules.parse()?;
        let openings =
            OpeningBook::load(&self.openings.source()?, &crate::blob_cache::default_dir())?;
        let order = match self.order.as_str() {
            "sequential" => Order::Sequential,
            "random" => Order::Random,
            other => bail!("unknown opening order '{other}'; expected sequential or random"),
        };
        let notation: Notation = self
            .pgn_notation
            .parse()
            .map_err(|e: String| anyhow::anyhow!(e))?;
        let spec = MatchSpec {
            players: [dev, base],
            rules,
            pairs: self.pairs,
            openings,
            order,
            seed: self.seed,
            offset: self.offset,
            opening_per_game: false,
            adjudication: self.adjudication.adjudication(),
            keep_games: self.pgn.is_some(),
        };
        Ok((spec, notation))
    }

    /// Plays the match and prints the summary.
    pub fn run(self) -> anyhow::Result<()> {
        let (spec, notation) = self.spec()?;
        let runner = Runner::new(self.threads)?;
        let cores = u32::try_from(self.threads).unwrap_or(u32::MAX);
        let needs = GameNeeds::symmetric(
            self.dev_search_threads.max(self.base_search_threads),
            u32::try_from(self.hash).unwrap_or(u32::MAX),
        );
        let at_once = Capacity::of(cores, None).games_at_once(needs).max(1) as usize;
        let games = spec.pairs * 2;
        let bar = if self.quiet || self.json {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(games)
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}  [{elapsed_precise}]")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let counts = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        let start = std::time::Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let on_game = |_: u64, g: &PlayedGame| {
            let slot = match g.record.first_score() {
                Score::Win => 0,
                Score::Draw => 1,
                Score::Loss => 2,
            };
            counts[slot].fetch_add(1, Ordering::Relaxed);
            let done: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            bar.set_message(format!(
                "W {} D {} L {}  {:.1} games/s",
                counts[0].load(Ordering::Relaxed),
                counts[1].load(Ordering::Relaxed),
                counts[2].load(Ordering::Relaxed),
                done as f64 / start.elapsed().as_secs_f64().max(1e-9)
            ));
            bar.inc(1);
        };
        let report = runner.play_at_once(&spec, at_once, &stop, &on_game)?;
        bar.finish_and_clear();
        if let Some(path) = &self.pgn {
            write_pgn(path, &spec, &report, notation)?;
        }
        if self.json {
            outln!("{}", summary_json(&spec, &report))?;
        } else {
            print_summary(&spec, &report, runner.threads())?;
        }
        Ok(())
    }
}

fn summary_json(spec: &MatchSpec, o: &MatchReport) -> serde_json::Value {
    let t = &o.outcome.totals;
    let players: Vec<serde_json::Value> = spec
        .players
        .iter()
        .zip(&o.players)
        .map(|(p, s)| {
            let mut v = s.to_json();
            v["name"] = json!(p.name);
            v
        })
        .collect();
    json!({
        "games": t.games(),
        "wins": t.wdl.wins,
        "draws": t.wdl.draws,
        "losses": t.wdl.losses,
        "pairs": t.pairs,
        "pentanomial": t.pentanomial,
        "mean_plies": t.mean_plies(),
        "games_per_second": o.games_per_second(),
        "nodes_per_second": o.nodes_per_second(),
        "search_share": o.search_share(),
        "reasons": t.reasons,
        "players": players,
    })
}

fn print_summary(spec: &MatchSpec, o: &MatchReport, threads: usize) -> Result<(), StdoutError> {
    let t = &o.outcome.totals;
    outln!(
        "{} vs {}: {} games ({} pairs), rules {}",
        spec.players[0].name,
        spec.players[1].name,
        t.games(),
        t.pairs,
        spec.rules.name().unwrap_or_else(|| "custom".to_string())
    )?;
    outln!(
        "W/D/L (dev's view): {} / {} / {}",
        t.wdl.wins,
        t.wdl.draws,
        t.wdl.losses
    )?;
    outln!(
        "pentanomial [LL, LD+DL, LW+DD+WL, DW+WD, WW]: {:?}",
        t.pentanomial.0
    )?;
    outln!("mean plies: {:.1}", t.mean_plies())?;
    let reasons: Vec<String> = t.reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
    outln!("end reasons: {}", reasons.join(", "))?;
    outln!(
        "games/s: {:.2} on {threads} threads; engine nodes/s per thread: {:.0}; time in search: {:.1} %",
        o.games_per_second(),
        o.nodes_per_second(),
        100.0 * o.search_share()
    )?;
    for (p, s) in spec.players.iter().zip(&o.players) {
        outln!("{}: {}", p.name, s.summary())?;
    }
    Ok(())
}

/// Today's date as `YYYY.MM.DD` (UTC).
fn pgn_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let (year, month, day) = xq_proto::utc::civil_from_days(days);
    format!("{year:04}.{month:02}.{day:02}")
}

fn write_pgn(
    path: &Path,
    spec: &MatchSpec,
    report: &MatchReport,
    notation: Notation,
) -> anyhow::Result<()> {
    let date = pgn_date();
    let mut text = String::new();
    let games = report.outcome.games.iter().zip(&report.openings);
    for (i, (g, opening)) in games.enumerate() {
        let start = Position::from_fen(&g.start_fen)
            .with_context(|| format!("game {}: bad start position '{}'", i + 1, g.start_fen))?;
        let red = usize::from(g.red_player);
        let game = PgnGame {
            header: PgnHeader {
                event: "xq-worker match",
                site: "local",
                date: &date,
                round: i as u64 + 1,
                red: &spec.players[red].name,
                black: &spec.players[1 - red].name,
                red_build: None,
                black_build: None,
            },
            start: &start,
            rules: &spec.rules,
            opening,
            moves: &g.moves,
            opening_plies: g.opening_plies as usize,
            per_move: &g.per_move,
            outcome: g.outcome(),
            stderr_tail: &g.stderr_tail,
            overrun_ms: g.overrun_ms,
        };
        let pgn = pgn::write(&game, notation).with_context(|| format!("game {}", i + 1))?;
        text.push_str(&pgn);
    }
    xq_proto::atomic_file::write(path, text.as_bytes())
        .with_context(|| format!("cannot write pgn file '{}'", path.display()))
}
