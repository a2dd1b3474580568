//! A run's stored games for export, the one place `pgn --db`, the
//! `ExportGames` RPC (`pgn --coordinator`) and the web view read them from:
//!
//! - [`GameQuery`]: which games (the `--filter` forms, and the wire's
//!   `GameFilter`, convert to it);
//! - [`export`]: the games that pass it, with what PGN needs besides them
//!   (the run's name, its players' names, each lease's rule set);
//! - [`Export::write_pgn`] / [`Export::write_game`]: PGN text, as
//!   `xq-worker play --pgn` writes it ([`xq_games::pgn`]).

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use rusqlite::Connection;
use xq_engine::notation::Notation;
use xq_engine::rules::{Reason, RuleSet};
use xq_engine::{Move, Position};
use xq_games::pgn::{self, PgnGame, PgnHeader};

use crate::runs::RunStatus;
use crate::store::games::{self, ArchivedGame, GameFilter};
use crate::store::{StoreError, lease_results, leases, runs as run_rows, workers};

/// Which stored games to export; every set field must match, the default
/// matches all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameQuery {
    /// An end reason.
    pub reason: Option<Reason>,
    /// A worker's id or name.
    pub worker: Option<String>,
    /// Only games lost by player 0 (dev, or θ+ in SPSA).
    pub lost: bool,
}

/// A filter that names nothing the archive knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("unknown end reason '{0}'; expected one of {all}", all = Reason::ALL.map(Reason::token).join(", "))]
    Reason(String),
    #[error(
        "unknown filter '{0}'; expected lost, time-forfeit, crash, illegal-move, reason=R or worker=W"
    )]
    Filter(String),
}

impl GameQuery {
    /// A query of the end reason whose token is `reason`.
    pub fn with_reason(mut self, reason: &str) -> Result<Self, QueryError> {
        let reason =
            Reason::from_token(reason).ok_or_else(|| QueryError::Reason(reason.to_owned()))?;
        self.reason = Some(reason);
        Ok(self)
    }

    /// The query of `--filter` values (all must match): `lost`,
    /// `time-forfeit`, `crash` (resignation: an engine that crashed or did
    /// not start), `illegal-move`, `reason=R`, `worker=W`.
    pub fn parse(filters: &[String]) -> Result<Self, QueryError> {
        let mut q = GameQuery::default();
        for f in filters {
            q = match f.split_once('=') {
                Some(("reason", r)) => q.with_reason(r)?,
                Some(("worker", w)) => GameQuery {
                    worker: Some(w.to_owned()),
                    ..q
                },
                Some(_) => return Err(QueryError::Filter(f.clone())),
                None => match f.as_str() {
                    "lost" => GameQuery { lost: true, ..q },
                    "time-forfeit" | "illegal-move" => q.with_reason(f)?,
                    "crash" => q.with_reason(Reason::Resignation.token())?,
                    _ => return Err(QueryError::Filter(f.clone())),
                },
            };
        }
        Ok(q)
    }
}

/// A stored game with its lease's rule set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedGame {
    pub game: ArchivedGame,
    /// The lease's rule set.
    pub rules: RuleSet,
    /// The engine build each player (0 and 1, as in the run) played on the
    /// worker's machine ([`lease_results::lease_builds`]); `None`: no
    /// tagged build.
    pub builds: [Option<String>; 2],
}

/// A run's games that passed a query, in the order they were counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub run_id: u64,
    pub run_name: String,
    /// Names of players 0 and 1: an external engine's name, or dev/base.
    pub players: [String; 2],
    pub games: Vec<ExportedGame>,
}

/// Why stored games could not be written as PGN.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("game {game_index} of lease {lease_id}: {what}")]
    Game {
        game_index: u32,
        lease_id: u64,
        what: String,
    },
}

/// The store filter of `query`: a worker named by name must exist.
pub fn filter(conn: &Connection, query: &GameQuery) -> Result<GameFilter, StoreError> {
    let worker_id = match &query.worker {
        None => None,
        Some(w) => Some(match w.parse::<u64>() {
            Ok(id) => id,
            Err(_) => workers::id_by_name(conn, w)?.ok_or_else(|| {
                StoreError::NotFound(format!("no worker named {}", xq_proto::quote(w)))
            })?,
        }),
    };
    Ok(GameFilter {
        reason: query.reason,
        worker_id,
        lost_by: query.lost.then_some(0),
    })
}

/// The names of players 0 and 1 when no lease names an external engine.
pub fn default_players() -> [String; 2] {
    ["dev".to_owned(), "base".to_owned()]
}

/// The rule set of lease `lease_id`'s work in `run`; an external
/// engine it plays names its player in `players`.
pub fn lease_rules(
    conn: &Connection,
    run: &RunStatus,
    lease_id: u64,
    players: &mut [String; 2],
) -> Result<RuleSet, StoreError> {
    let lease = leases::load(conn, lease_id)?
        .ok_or_else(|| StoreError::NotFound(format!("no lease {lease_id}")))?;
    let work = run.spec.kind.ops().slice_work(run, &lease.slice())?;
    for (name, p) in players.iter_mut().zip(&work.players) {
        if let Some(e) = &p.engine {
            name.clone_from(&e.name);
        }
    }
    Ok(work.rules)
}

/// The stored games of `run_id` that pass `query`. A worker named by name
/// must exist.
pub fn export(conn: &Connection, run_id: u64, query: &GameQuery) -> Result<Export, StoreError> {
    let run = run_rows::load(conn, run_id)?;
    let stored = games::load(conn, run_id, &filter(conn, query)?)?;
    let mut players = default_players();
    with_rules(conn, &run, stored, &mut players)
}

/// Games per page of a streamed export ([`export_page`]).
pub const PAGE_GAMES: u64 = 256;

/// The next page of `run`'s games that pass `filter`: at most `limit`
/// games after the game row `after` (0: from the first), and the last
/// row's id when a further page may follow. `players` carries the players'
/// names from page to page (an external engine a page's lease names
/// replaces dev or base).
pub fn export_page(
    conn: &Connection,
    run: &RunStatus,
    filter: &GameFilter,
    after: i64,
    limit: u64,
    players: &mut [String; 2],
) -> Result<(Export, Option<i64>), StoreError> {
    let page = games::load_page(conn, run.id, filter, after, limit)?;
    let last = page
        .last()
        .map(|(id, _)| *id)
        .filter(|_| page.len() as u64 == limit);
    let stored = page.into_iter().map(|(_, g)| g).collect();
    Ok((with_rules(conn, run, stored, players)?, last))
}

/// `stored` with each game's lease rule set, as an export of `run`.
fn with_rules(
    conn: &Connection,
    run: &RunStatus,
    stored: Vec<ArchivedGame>,
    players: &mut [String; 2],
) -> Result<Export, StoreError> {
    let mut leases: BTreeMap<u64, (RuleSet, [Option<String>; 2])> = BTreeMap::new();
    let mut out = Vec::with_capacity(stored.len());
    for game in stored {
        let (rules, builds) = match leases.entry(game.lease_id) {
            Entry::Occupied(e) => e.get().clone(),
            Entry::Vacant(e) => e
                .insert((
                    lease_rules(conn, run, game.lease_id, players)?,
                    lease_results::lease_builds(conn, game.lease_id)?,
                ))
                .clone(),
        };
        out.push(ExportedGame {
            rules,
            game,
            builds,
        });
    }
    Ok(Export {
        run_id: run.id,
        run_name: run.spec.name.clone(),
        players: players.clone(),
        games: out,
    })
}

impl Export {
    /// Every game as PGN, numbered from 1 in `[Round]`.
    pub fn write_pgn(&self, notation: Notation) -> Result<String, ExportError> {
        let mut text = String::new();
        for (i, g) in self.games.iter().enumerate() {
            text.push_str(&self.write_game(g, i as u64 + 1, notation)?);
        }
        Ok(text)
    }

    /// One game as PGN, `[Round]` = `round`; `[Site]` names the worker and
    /// the lease, `[RedBuild]` and `[BlackBuild]` the engine builds its
    /// machine played.
    pub fn write_game(
        &self,
        g: &ExportedGame,
        round: u64,
        notation: Notation,
    ) -> Result<String, ExportError> {
        let fail = |what: String| ExportError::Game {
            game_index: g.game.game_index,
            lease_id: g.game.lease_id,
            what,
        };
        let r = &g.game.record;
        let start = Position::from_fen(&r.start_fen).map_err(|e| fail(format!("{e}")))?;
        let red = usize::from(r.red_player);
        let opening = format!("opening {}", r.opening_index);
        let site = format!("worker {}, lease {}", g.game.worker_id, g.game.lease_id);
        let moves: &[Move] = &r.moves;
        let game = PgnGame {
            header: PgnHeader {
                event: &self.run_name,
                site: &site,
                date: "????.??.??",
                round,
                red: &self.players[red],
                black: &self.players[1 - red],
                red_build: g.builds[red].as_deref(),
                black_build: g.builds[1 - red].as_deref(),
            },
            start: &start,
            rules: &g.rules,
            opening: &opening,
            moves,
            opening_plies: r.opening_plies as usize,
            per_move: &r.per_move,
            outcome: r.outcome(),
            stderr_tail: &r.stderr_tail,
            overrun_ms: r.overrun_ms,
        };
        pgn::write(&game, notation).map_err(|e| fail(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(f: &[&str]) -> Result<GameQuery, QueryError> {
        GameQuery::parse(&f.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn filters_parse_and_combine() {
        let q = parse(&["lost", "time-forfeit", "worker=host-3"]).unwrap();
        assert!(q.lost);
        assert_eq!(q.reason, Some(Reason::TimeForfeit));
        assert_eq!(q.worker.as_deref(), Some("host-3"));
        let q = parse(&["crash"]).unwrap();
        assert_eq!(q.reason, Some(Reason::Resignation));
        let q = parse(&["reason=perpetual-chase"]).unwrap();
        assert_eq!(q.reason, Some(Reason::PerpetualChase));
        for bad in ["reason=bogus", "won", "colour=red"] {
            let err = parse(&[bad]).unwrap_err().to_string();
            assert!(err.contains("unknown"), "{bad}: {err}");
        }
        assert_eq!(parse(&[]).unwrap(), GameQuery::default());
    }
}
