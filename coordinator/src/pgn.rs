//! A run's stored games as PGN: the filters that `pgn --filter` and the web
//! view's games list take, the games they select with what PGN needs
//! besides them (players, each lease's rules), and the one writer call
//! ([`xq_worker::pgn::write`]) for both.

use std::collections::BTreeMap;

use rusqlite::Connection;
use xq_engine::notation::Notation;
use xq_engine::rules::{Outcome, Reason, RuleSet};
use xq_engine::{Move, Position};
use xq_proto::GameRecord;
use xq_worker::pgn::{self, PgnGame, PgnHeader};

use crate::runs::{RunStatus, Slice};
use crate::store::games::{self, ArchivedGame, GameFilter};
use crate::store::{StoreError, leases, now_ms, runs as run_rows};

/// What a list of filters asks for, before a worker's name is looked up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameQuery {
    pub filter: GameFilter,
    /// A worker's id or name.
    pub worker: Option<String>,
}

/// A filter that is not one of [`FILTER_HELP`]'s forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("unknown end reason '{0}'; expected one of {all}", all = Reason::ALL.map(Reason::token).join(", "))]
    Reason(String),
    #[error("unknown filter '{0}'; expected {FILTER_HELP}")]
    Unknown(String),
}

/// The filters' forms, for messages.
pub const FILTER_HELP: &str = "lost, time-forfeit, crash, illegal-move, reason=R or worker=W";

/// Parses filters (all must match): `lost` (lost by the engine under test:
/// dev, or θ+ in SPSA), `time-forfeit`, `crash` (an engine that crashed or
/// did not start, stored as a resignation), `illegal-move`, `reason=R` (an
/// end reason's token), `worker=W` (a worker's id or name). Empty filters
/// are ignored.
pub fn parse_filters<S: AsRef<str>>(filters: &[S]) -> Result<GameQuery, FilterError> {
    let mut q = GameQuery::default();
    let mut reason = |r: &str| -> Result<(), FilterError> {
        if Reason::from_token(r).is_none() {
            return Err(FilterError::Reason(r.to_owned()));
        }
        q.filter.reason = Some(r.to_owned());
        Ok(())
    };
    let mut lost = false;
    let mut worker = None;
    for f in filters.iter().map(|f| f.as_ref().trim()) {
        match f.split_once('=') {
            Some(("reason", r)) => reason(r)?,
            Some(("worker", name)) => worker = Some(name.to_owned()),
            Some(_) => return Err(FilterError::Unknown(f.to_owned())),
            None => match f {
                "" => {}
                "lost" => lost = true,
                "time-forfeit" | "illegal-move" => reason(f)?,
                "crash" => reason(Reason::Resignation.token())?,
                _ => return Err(FilterError::Unknown(f.to_owned())),
            },
        }
    }
    q.filter.lost_by = lost.then_some(0);
    q.worker = worker;
    Ok(q)
}

/// The store filter of `query`: its worker's name looked up.
pub fn resolve(conn: &Connection, query: GameQuery) -> Result<GameFilter, StoreError> {
    let mut filter = query.filter;
    if let Some(w) = query.worker {
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
    Ok(filter)
}

/// What a run's games are played with besides their records.
#[derive(Debug, Clone)]
pub struct Context {
    /// The run's name (PGN's Event).
    pub name: String,
    /// The players' names, by player (0: dev or θ+).
    pub players: [String; 2],
    /// Each lease's rule set, by lease id.
    pub rules: BTreeMap<u64, String>,
}

impl Context {
    /// An empty context for `run` (players named dev and base).
    pub fn new(run: &RunStatus) -> Self {
        Context {
            name: run.spec.name.clone(),
            players: ["dev".to_owned(), "base".to_owned()],
            rules: BTreeMap::new(),
        }
    }

    /// Adds the rules (and the players' engine names) of `lease_id`'s work.
    pub fn add_lease(
        &mut self,
        conn: &Connection,
        run: &RunStatus,
        lease_id: u64,
    ) -> Result<(), StoreError> {
        if self.rules.contains_key(&lease_id) {
            return Ok(());
        }
        let lease = leases::load(conn, lease_id)?
            .ok_or_else(|| StoreError::NotFound(format!("no lease {lease_id}")))?;
        let work = run.spec.kind.ops().slice_work(
            run,
            &Slice {
                offset: lease.opening_offset,
                pairs: lease.pairs,
                variant: lease.variant,
            },
        )?;
        for (name, p) in self.players.iter_mut().zip(&work.players) {
            if let Some(e) = &p.engine {
                name.clone_from(&e.name);
            }
        }
        self.rules.insert(lease_id, work.rules);
        Ok(())
    }

    /// The rule set of `lease_id`, once added.
    pub fn rules_of(&self, lease_id: u64) -> Result<RuleSet, ExportError> {
        let text = self
            .rules
            .get(&lease_id)
            .ok_or(ExportError::NoRules(lease_id))?;
        text.parse()
            .map_err(|e| ExportError::Game(format!("rules '{text}': {e}")))
    }
}

/// A run's selected games with their context.
#[derive(Debug, Clone)]
pub struct Export {
    pub context: Context,
    pub games: Vec<ArchivedGame>,
}

/// The games of `run_id` that pass `filter`, with their context.
pub fn export(conn: &Connection, run_id: u64, filter: &GameFilter) -> Result<Export, StoreError> {
    let run = run_rows::load(conn, run_id, now_ms())?;
    let games = games::load(conn, run_id, filter)?;
    let mut context = Context::new(&run);
    for g in &games {
        context.add_lease(conn, &run, g.lease_id)?;
    }
    Ok(Export { context, games })
}

/// Why a stored game cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("no rules known for lease {0}")]
    NoRules(u64),
    #[error("{0}")]
    Game(String),
    #[error("game {game} of lease {lease}: {message}")]
    At {
        lease: u64,
        game: u32,
        message: String,
    },
}

/// The start position and outcome of a stored game.
pub fn parse_record(r: &GameRecord) -> Result<(Position, Outcome), ExportError> {
    let start = Position::from_fen(&r.start_fen)
        .map_err(|e| ExportError::Game(format!("start FEN: {e}")))?;
    let reason = Reason::from_token(&r.reason)
        .ok_or_else(|| ExportError::Game(format!("unknown end reason '{}'", r.reason)))?;
    Ok((
        start,
        Outcome {
            result: r.result,
            reason,
            ply: r.moves.len(),
        },
    ))
}

/// One game as PGN, numbered `round`.
pub fn write_game(
    context: &Context,
    g: &ArchivedGame,
    round: u64,
    notation: Notation,
) -> Result<String, ExportError> {
    let at = |message: String| ExportError::At {
        lease: g.lease_id,
        game: g.game_index,
        message,
    };
    let r = &g.record;
    let rules = context
        .rules_of(g.lease_id)
        .map_err(|e| at(e.to_string()))?;
    let (start, outcome) = parse_record(r).map_err(|e| at(e.to_string()))?;
    let red = usize::from(r.red_player.min(1));
    let opening = format!("opening {}", r.opening_index);
    let site = format!("worker {}, lease {}", g.worker_id, g.lease_id);
    let moves: &[Move] = &r.moves;
    let game = PgnGame {
        header: PgnHeader {
            event: &context.name,
            site: &site,
            date: "????.??.??",
            round,
            red: &context.players[red],
            black: &context.players[1 - red],
        },
        start: &start,
        rules: &rules,
        opening: &opening,
        moves,
        opening_plies: r.opening_plies as usize,
        per_move: &r.per_move,
        outcome,
        stderr_tail: &r.stderr_tail,
    };
    pgn::write(&game, notation).map_err(|e| at(e.to_string()))
}

/// Every game of `export` as PGN, numbered from 1.
pub fn write_all(export: &Export, notation: Notation) -> Result<String, ExportError> {
    let mut text = String::new();
    for (i, g) in export.games.iter().enumerate() {
        text.push_str(&write_game(&export.context, g, i as u64 + 1, notation)?);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_and_combine() {
        let w = parse_filters(&["lost", "time-forfeit", "worker=host-3"]).unwrap();
        assert_eq!(w.filter.lost_by, Some(0));
        assert_eq!(w.filter.reason.as_deref(), Some("time-forfeit"));
        assert_eq!(w.worker.as_deref(), Some("host-3"));
        let w = parse_filters(&["crash"]).unwrap();
        assert_eq!(w.filter.reason.as_deref(), Some("resignation"));
        let w = parse_filters(&["reason=perpetual-chase", ""]).unwrap();
        assert_eq!(w.filter.reason.as_deref(), Some("perpetual-chase"));
        for bad in ["reason=bogus", "won", "colour=red"] {
            let err = parse_filters(&[bad]).unwrap_err().to_string();
            assert!(err.contains("unknown"), "{bad}: {err}");
        }
    }
}
