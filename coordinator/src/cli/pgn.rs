//! `pgn RUN --out FILE`: a run's stored games as PGN, straight from the
//! database file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use xq_coordinator::runs::Slice;
use xq_coordinator::store::games::{self, ArchivedGame, GameFilter};
use xq_coordinator::store::{Store, StoreError, leases, now_ms, runs as run_rows};
use xq_engine::notation::Notation;
use xq_engine::rules::{Outcome, Reason, RuleSet};
use xq_engine::{Move, Position};
use xq_worker::pgn::{self, PgnGame, PgnHeader};

/// Arguments of `pgn`.
#[derive(Debug, Args)]
pub struct PgnArgs {
    /// The run's id.
    run: u64,
    /// The PGN file to write.
    #[arg(long)]
    out: PathBuf,
    /// Only some games (repeatable; all must match): `lost` (lost by the
    /// engine under test: dev, or θ+ in SPSA), `time-forfeit`, `crash`
    /// (an engine that crashed or did not start), `illegal-move`,
    /// `reason=R` (an end reason's token), `worker=W` (a worker's id or name).
    #[arg(long = "filter")]
    filters: Vec<String>,
    /// Move notation: iccs, wxf or chinese.
    #[arg(long, default_value = "iccs")]
    notation: String,
    /// SQLite database of the coordinator.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
}

/// What `--filter` asks for, before worker names are looked up.
#[derive(Debug, Default, PartialEq, Eq)]
struct Wanted {
    filter: GameFilter,
    worker: Option<String>,
}

fn parse_filters(filters: &[String]) -> anyhow::Result<Wanted> {
    let mut w = Wanted::default();
    let mut reason = |r: &str| -> anyhow::Result<()> {
        if Reason::from_token(r).is_none() {
            bail!(
                "unknown end reason '{r}'; expected one of {}",
                Reason::ALL.map(Reason::token).join(", ")
            );
        }
        w.filter.reason = Some(r.to_owned());
        Ok(())
    };
    let mut lost = false;
    let mut worker = None;
    for f in filters {
        match f.split_once('=') {
            Some(("reason", r)) => reason(r)?,
            Some(("worker", name)) => worker = Some(name.to_owned()),
            Some(_) => bail!("unknown filter '{f}'"),
            None => match f.as_str() {
                "lost" => lost = true,
                "time-forfeit" | "illegal-move" => reason(f)?,
                "crash" => reason(Reason::Resignation.token())?,
                _ => bail!(
                    "unknown filter '{f}'; expected lost, time-forfeit, crash, illegal-move, \
                     reason=R or worker=W"
                ),
            },
        }
    }
    w.filter.lost_by = lost.then_some(0);
    w.worker = worker;
    Ok(w)
}

/// A run's games with what PGN needs besides them.
struct Export {
    name: String,
    players: [String; 2],
    /// Each lease's rule set.
    rules: BTreeMap<u64, String>,
    games: Vec<ArchivedGame>,
}

fn export(conn: &rusqlite::Connection, run_id: u64, wanted: Wanted) -> Result<Export, StoreError> {
    let run = run_rows::load(conn, run_id, now_ms())?;
    let mut filter = wanted.filter;
    if let Some(w) = wanted.worker {
        let id = match w.parse::<u64>() {
            Ok(id) => id,
            Err(_) => conn
                .query_row("SELECT id FROM workers WHERE name = ?1", [&w], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|_| StoreError::NotFound(format!("no worker named '{w}'")))?
                as u64,
        };
        filter.worker_id = Some(id);
    }
    let games = games::load(conn, run_id, &filter)?;
    let mut rules = BTreeMap::new();
    let mut players = ["dev".to_owned(), "base".to_owned()];
    for g in &games {
        if rules.contains_key(&g.lease_id) {
            continue;
        }
        let lease = leases::load(conn, g.lease_id)?
            .ok_or_else(|| StoreError::NotFound(format!("no lease {}", g.lease_id)))?;
        let work = run.spec.kind.ops().slice_work(
            &run,
            &Slice {
                offset: lease.opening_offset,
                pairs: lease.pairs,
                variant: lease.variant,
            },
        )?;
        for (name, p) in players.iter_mut().zip(&work.players) {
            if let Some(e) = &p.engine {
                name.clone_from(&e.name);
            }
        }
        rules.insert(g.lease_id, work.rules);
    }
    Ok(Export {
        name: run.spec.name.clone(),
        players,
        rules,
        games,
    })
}

impl PgnArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let notation: Notation = self
            .notation
            .parse()
            .map_err(|e: String| anyhow::anyhow!(e))?;
        let wanted = parse_filters(&self.filters)?;
        let store = Store::open(&self.db)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let run_id = self.run;
        let export = rt
            .block_on(store.call(move |conn| export(conn, run_id, wanted)))
            .with_context(|| format!("cannot read the games of run {run_id}"))?;
        let mut text = String::new();
        for (i, g) in export.games.iter().enumerate() {
            text.push_str(
                &write_game(&export, g, i as u64 + 1, notation)
                    .with_context(|| format!("game {} of lease {}", g.game_index, g.lease_id))?,
            );
        }
        std::fs::write(&self.out, text)
            .with_context(|| format!("cannot write {}", self.out.display()))?;
        eprintln!(
            "{} games of run {run_id} written to {}",
            export.games.len(),
            self.out.display()
        );
        Ok(())
    }
}

fn write_game(
    export: &Export,
    g: &ArchivedGame,
    round: u64,
    notation: Notation,
) -> anyhow::Result<String> {
    let r = &g.record;
    let rules: RuleSet = export.rules[&g.lease_id].parse()?;
    let start = Position::from_fen(&r.start_fen)?;
    let reason = Reason::from_token(&r.reason)
        .with_context(|| format!("unknown end reason '{}'", r.reason))?;
    let red = usize::from(r.red_player);
    let opening = format!("opening {}", r.opening_index);
    let site = format!("worker {}, lease {}", g.worker_id, g.lease_id);
    let moves: &[Move] = &r.moves;
    let game = PgnGame {
        header: PgnHeader {
            event: &export.name,
            site: &site,
            date: "????.??.??",
            round,
            red: &export.players[red],
            black: &export.players[1 - red],
        },
        start: &start,
        rules: &rules,
        opening: &opening,
        moves,
        opening_plies: r.opening_plies as usize,
        per_move: &r.per_move,
        outcome: Outcome {
            result: r.result,
            reason,
            ply: moves.len(),
        },
        stderr_tail: &r.stderr_tail,
    };
    Ok(pgn::write(&game, notation)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(f: &[&str]) -> anyhow::Result<Wanted> {
        parse_filters(&f.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn filters_parse_and_combine() {
        let w = parse(&["lost", "time-forfeit", "worker=host-3"]).unwrap();
        assert_eq!(w.filter.lost_by, Some(0));
        assert_eq!(w.filter.reason.as_deref(), Some("time-forfeit"));
        assert_eq!(w.worker.as_deref(), Some("host-3"));
        let w = parse(&["crash"]).unwrap();
        assert_eq!(w.filter.reason.as_deref(), Some("resignation"));
        let w = parse(&["reason=perpetual-chase"]).unwrap();
        assert_eq!(w.filter.reason.as_deref(), Some("perpetual-chase"));
        for bad in ["reason=bogus", "won", "colour=red"] {
            let err = parse(&[bad]).unwrap_err().to_string();
            assert!(err.contains("unknown"), "{bad}: {err}");
        }
    }
}
