//! The game archive's rows: a counted result's games, written in the
//! submission's transaction, and read back by filter.
//!
//! Each result's kept games are one blob in `game_batches` (see
//! [`super::game_codec`]) and one row each in `games`; a game's `slot` is its
//! place in the blob.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_engine::rules::Reason;
use xq_proto::game_record::ENGINE_FAILURES;
use xq_proto::{GameRecord, pb};

use super::{StoreError, count, game_codec};

/// A stored game with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedGame {
    pub lease_id: u64,
    pub worker_id: u64,
    /// The game's place in its lease (pair p: games 2p and 2p + 1).
    pub game_index: u32,
    pub record: GameRecord,
}

/// Which stored games to read. Every set field must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameFilter {
    pub reason: Option<Reason>,
    pub worker_id: Option<u64>,
    /// Games lost by this player (0: the engine under test, dev or θ+).
    pub lost_by: Option<u8>,
}

/// The games of a result that its run keeps, chosen and compressed off the
/// store's thread; [`insert`] writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptGames {
    /// The kept games' places in the result, ascending.
    indices: Vec<u32>,
    /// Their [`game_codec`] blob, in that order; empty when none is kept.
    blob: Vec<u8>,
}

impl KeptGames {
    /// The games of `games` that `keeps(record)` keeps, encoded.
    pub fn new(games: &[GameRecord], keeps: impl Fn(&GameRecord) -> bool) -> KeptGames {
        let indices: Vec<u32> = (0u32..)
            .zip(games)
            .filter(|(_, g)| keeps(g))
            .map(|(i, _)| i)
            .collect();
        if indices.is_empty() {
            return KeptGames::default();
        }
        let wire: Vec<pb::GameRecord> = indices
            .iter()
            .map(|&i| games[i as usize].clone().into())
            .collect();
        KeptGames {
            indices,
            blob: game_codec::encode(&wire),
        }
    }
}

/// Stores the kept games of lease `lease_id` (`games` the result's records,
/// `kept` those of them its run keeps); nothing when none is kept. Runs
/// inside the submission's transaction.
pub fn insert(
    conn: &Connection,
    run_id: u64,
    lease_id: u64,
    worker_id: u64,
    games: &[GameRecord],
    kept: &KeptGames,
) -> Result<(), StoreError> {
    if kept.indices.is_empty() {
        return Ok(());
    }
    conn.prepare_cached("INSERT INTO game_batches (lease_id, run_id, data) VALUES (?1, ?2, ?3)")?
        .execute(params![lease_id as i64, run_id as i64, kept.blob])?;
    let mut row = conn.prepare_cached(
        "INSERT INTO games (run_id, lease_id, worker_id, game_index, slot, opening_index,
                            red_player, result, reason, loser, plies, overrun_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for (slot, &index) in kept.indices.iter().enumerate() {
        let g = games.get(index as usize).ok_or_else(|| {
            StoreError::Schema(format!(
                "kept game {index} is not in lease {lease_id}'s result"
            ))
        })?;
        row.execute(params![
            run_id as i64,
            lease_id as i64,
            worker_id as i64,
            i64::from(index),
            slot as i64,
            g.opening_index as i64,
            i64::from(g.red_player),
            g.result.token(),
            g.reason.token(),
            g.loser().map(i64::from),
            g.moves.len() as i64,
            g.overrun_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)),
        ])?;
    }
    Ok(())
}

/// Games stored for `run_id`.
pub fn count_run(conn: &Connection, run_id: u64) -> Result<u64, StoreError> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM games WHERE run_id = ?1")?
        .query_row([run_id as i64], |r| r.get(0))?;
    Ok(count(n))
}

/// The `WHERE` of a run's games that pass a filter: `?1` the run, `?2` to
/// `?4` [`GameFilter`]'s fields in order (see [`filter_params`]).
const FILTERED: &str = "run_id = ?1
           AND (?2 IS NULL OR reason = ?2)
           AND (?3 IS NULL OR worker_id = ?3)
           AND (?4 IS NULL OR loser = ?4)";

/// The parameters `?1` to `?4` of [`FILTERED`].
fn filter_params(run_id: u64, filter: &GameFilter) -> [rusqlite::types::Value; 4] {
    use rusqlite::types::Value;
    let int = |v: Option<i64>| v.map_or(Value::Null, Value::Integer);
    [
        Value::Integer(run_id as i64),
        filter
            .reason
            .map_or(Value::Null, |r| Value::Text(r.token().to_owned())),
        int(filter.worker_id.map(|w| w as i64)),
        int(filter.lost_by.map(i64::from)),
    ]
}

/// The stored games of `run_id` that pass `filter`, in the order they were
/// counted (lease by lease, game by game).
pub fn load(
    conn: &Connection,
    run_id: u64,
    filter: &GameFilter,
) -> Result<Vec<ArchivedGame>, StoreError> {
    Ok(load_page(conn, run_id, filter, 0, u64::MAX)?
        .into_iter()
        .map(|(_, g)| g)
        .collect())
}

/// At most `limit` of [`load`]'s games, those after the game row `after`
/// (0: from the first), each with its row id: a streamed export's next page.
pub fn load_page(
    conn: &Connection,
    run_id: u64,
    filter: &GameFilter,
    after: i64,
    limit: u64,
) -> Result<Vec<(i64, ArchivedGame)>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT lease_id, worker_id, game_index, slot, id FROM games
         WHERE {FILTERED} AND id > ?5 ORDER BY id LIMIT ?6"
    ))?;
    let [a, b, c, d] = filter_params(run_id, filter);
    let bound = |v: i64| rusqlite::types::Value::Integer(v);
    let rows = stmt
        .query_map(
            rusqlite::params_from_iter([
                a,
                b,
                c,
                d,
                bound(after),
                bound(i64::try_from(limit).unwrap_or(i64::MAX)),
            ]),
            |r| {
                Ok((
                    count(r.get(0)?),
                    count(r.get(1)?),
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            },
        )?
        .collect::<Result<Vec<_>, _>>()?;
    let mut batches: BTreeMap<u64, Vec<pb::GameRecord>> = BTreeMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (lease_id, worker_id, game_index, slot, id) in rows {
        if let std::collections::btree_map::Entry::Vacant(e) = batches.entry(lease_id) {
            e.insert(batch(conn, lease_id)?);
        }
        out.push((
            id,
            ArchivedGame {
                lease_id,
                worker_id,
                game_index: u32::try_from(game_index).unwrap_or(u32::MAX),
                record: record(&batches[&lease_id], lease_id, game_index, slot)?,
            },
        ));
    }
    Ok(out)
}

/// The leases of `run_id` that have stored games, ascending: with
/// [`load_batch`], a run's archive read one result at a time (8 bytes a
/// lease here, one batch decoded at a time there).
pub fn batch_leases(conn: &Connection, run_id: u64) -> Result<Vec<u64>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT lease_id FROM game_batches WHERE run_id = ?1 ORDER BY lease_id")?;
    let rows = stmt
        .query_map([run_id as i64], |r| r.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows.into_iter().map(count).collect())
}

/// The stored games of lease `lease_id` of `run_id`, in game order.
pub fn load_batch(
    conn: &Connection,
    run_id: u64,
    lease_id: u64,
) -> Result<Vec<ArchivedGame>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT worker_id, game_index, slot FROM games
         WHERE run_id = ?1 AND lease_id = ?2 ORDER BY game_index",
    )?;
    let rows = stmt
        .query_map(params![run_id as i64, lease_id as i64], |r| {
            Ok((count(r.get(0)?), r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let blob = batch(conn, lease_id)?;
    rows.into_iter()
        .map(|(worker_id, game_index, slot)| {
            Ok(ArchivedGame {
                lease_id,
                worker_id,
                game_index: u32::try_from(game_index).unwrap_or(u32::MAX),
                record: record(&blob, lease_id, game_index, slot)?,
            })
        })
        .collect()
}

/// The decoded blob of `lease_id`'s games.
fn batch(conn: &Connection, lease_id: u64) -> Result<Vec<pb::GameRecord>, StoreError> {
    let blob: Vec<u8> = conn
        .prepare_cached("SELECT data FROM game_batches WHERE lease_id = ?1")?
        .query_row([lease_id as i64], |r| r.get(0))?;
    game_codec::decode(&blob)
        .map_err(|e| StoreError::Schema(format!("stored games of lease {lease_id}: {e}")))
}

/// Game `game_index` of a lease's decoded `batch`, at `slot`.
fn record(
    batch: &[pb::GameRecord],
    lease_id: u64,
    game_index: i64,
    slot: i64,
) -> Result<GameRecord, StoreError> {
    let corrupt = |what: String| {
        StoreError::Schema(format!(
            "stored game {game_index} of lease {lease_id}: {what}"
        ))
    };
    let wire = usize::try_from(slot)
        .ok()
        .and_then(|s| batch.get(s))
        .ok_or_else(|| corrupt(format!("no slot {slot} in its batch")))?;
    GameRecord::try_from(wire.clone()).map_err(|e| corrupt(e.to_string()))
}

/// One line of a games list: a stored game without its moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRow {
    pub lease_id: u64,
    pub worker_id: u64,
    pub worker_name: String,
    /// The game's place in its lease.
    pub game_index: u32,
    pub opening_index: u64,
    /// Which player (0 or 1) had Red.
    pub red_player: u8,
    pub result: String,
    pub reason: Reason,
    /// The player that lost, `None` for a draw.
    pub loser: Option<u8>,
    /// Plies, opening included.
    pub plies: u64,
}

/// A page of `run_id`'s games that pass `filter`, in counted order, from
/// the `offset`-th, at most `limit`: `(how many pass, the page)`.
pub fn list(
    conn: &Connection,
    run_id: u64,
    filter: &GameFilter,
    offset: u64,
    limit: u64,
) -> Result<(u64, Vec<GameRow>), StoreError> {
    let total: i64 = conn
        .prepare_cached(&format!("SELECT COUNT(*) FROM games WHERE {FILTERED}"))?
        .query_row(
            rusqlite::params_from_iter(filter_params(run_id, filter)),
            |r| r.get(0),
        )?;
    let mut stmt = conn.prepare(&format!(
        "SELECT g.lease_id, g.worker_id, w.name, g.game_index, g.opening_index, g.red_player,
                g.result, g.reason, g.loser, g.plies
         FROM games g JOIN workers w ON w.id = g.worker_id
         WHERE g.id IN (SELECT id FROM games WHERE {FILTERED} ORDER BY id LIMIT ?5 OFFSET ?6)
         ORDER BY g.id"
    ))?;
    let [a, b, c, d] = filter_params(run_id, filter);
    let clamp = |v: u64| rusqlite::types::Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let rows = stmt
        .query_map(
            rusqlite::params_from_iter([a, b, c, d, clamp(limit), clamp(offset)]),
            |r| {
                let reason = match reason_column(&r.get::<_, String>(7)?) {
                    Ok(reason) => reason,
                    Err(e) => return Ok(Err(e)),
                };
                Ok(Ok(GameRow {
                    lease_id: count(r.get(0)?),
                    worker_id: count(r.get(1)?),
                    worker_name: r.get(2)?,
                    game_index: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(u32::MAX),
                    opening_index: count(r.get(4)?),
                    red_player: u8::try_from(r.get::<_, i64>(5)?).unwrap_or(u8::MAX),
                    result: r.get(6)?,
                    reason,
                    loser: r
                        .get::<_, Option<i64>>(8)?
                        .map(|l| u8::try_from(l).unwrap_or(u8::MAX)),
                    plies: count(r.get(9)?),
                }))
            },
        )?
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok((count(total), rows))
}

/// Game `game_index` of lease `lease_id` in `run_id`, if stored.
pub fn load_one(
    conn: &Connection,
    run_id: u64,
    lease_id: u64,
    game_index: u32,
) -> Result<Option<ArchivedGame>, StoreError> {
    let row = conn
        .prepare_cached(
            "SELECT worker_id, slot FROM games
             WHERE run_id = ?1 AND lease_id = ?2 AND game_index = ?3",
        )?
        .query_row(
            params![run_id as i64, lease_id as i64, i64::from(game_index)],
            |r| Ok((count(r.get(0)?), r.get::<_, i64>(1)?)),
        )
        .optional()?;
    let Some((worker_id, slot)) = row else {
        return Ok(None);
    };
    Ok(Some(ArchivedGame {
        lease_id,
        worker_id,
        game_index,
        record: record(
            &batch(conn, lease_id)?,
            lease_id,
            i64::from(game_index),
            slot,
        )?,
    }))
}

/// The end reason stored in `games.reason`; another value is corrupt.
fn reason_column(token: &str) -> Result<Reason, StoreError> {
    Reason::from_token(token).ok_or_else(|| {
        StoreError::Schema(format!(
            "corrupt stored games.reason: unknown end reason {}",
            xq_proto::quote(token)
        ))
    })
}

/// Failures of each worker over every run's stored games: `(worker id,
/// end reason of [`ENGINE_FAILURES`], games)`, by worker and reason.
pub fn failures_by_worker(conn: &Connection) -> Result<Vec<(u64, Reason, u64)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT worker_id, reason, COUNT(*) FROM games
         WHERE reason IN (?1, ?2, ?3)
         GROUP BY worker_id, reason ORDER BY worker_id, reason",
    )?;
    let rows = stmt
        .query_map(ENGINE_FAILURES.map(Reason::token), |r| {
            Ok((count(r.get(0)?), r.get::<_, String>(1)?, count(r.get(2)?)))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(worker, reason, games)| Ok((worker, reason_column(&reason)?, games)))
        .collect()
}

/// One line of failure counts: games lost by `loser` on `worker_id` for
/// `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureCount {
    pub worker_id: u64,
    pub worker_name: String,
    /// The player (0 or 1) that lost.
    pub loser: u8,
    pub reason: Reason,
    pub games: u64,
    /// For time forfeits: the overrun of each one that has it, ms, ascending.
    pub overruns_ms: Vec<u64>,
}

/// Engine failures ([`ENGINE_FAILURES`]) per worker and losing player in
/// `run_id`'s stored games, ordered by worker, player and reason.
pub fn failure_counts(conn: &Connection, run_id: u64) -> Result<Vec<FailureCount>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT g.worker_id, w.name, g.loser, g.reason, g.overrun_ms FROM games g
         JOIN workers w ON w.id = g.worker_id
         WHERE g.run_id = ?1 AND g.reason IN (?2, ?3, ?4)
         ORDER BY g.worker_id, g.loser, g.reason, g.overrun_ms",
    )?;
    let [a, b, c] = ENGINE_FAILURES.map(Reason::token);
    let mut rows = stmt.query(params![run_id as i64, a, b, c])?;
    let mut out: Vec<FailureCount> = Vec::new();
    while let Some(r) = rows.next()? {
        let worker_id = count(r.get(0)?);
        let loser = u8::try_from(r.get::<_, i64>(2)?).unwrap_or(u8::MAX);
        let reason = reason_column(&r.get::<_, String>(3)?)?;
        let overrun: Option<i64> = r.get(4)?;
        let overrun = overrun.map(count);
        match out.last_mut() {
            Some(f) if (f.worker_id, f.loser, f.reason) == (worker_id, loser, reason) => {
                f.games += 1;
                f.overruns_ms.extend(overrun);
            }
            _ => out.push(FailureCount {
                worker_id,
                worker_name: r.get(1)?,
                loser,
                reason,
                games: 1,
                overruns_ms: overrun.into_iter().collect(),
            }),
        }
    }
    Ok(out)
}

/// The bytes of `run_id`'s stored blobs and its number of games.
pub fn stored_bytes(conn: &Connection, run_id: u64) -> Result<(u64, u64), StoreError> {
    let bytes: i64 = conn
        .prepare_cached(
            "SELECT COALESCE(SUM(length(data)), 0) FROM game_batches WHERE run_id = ?1",
        )?
        .query_row([run_id as i64], |r| r.get(0))?;
    Ok((count(bytes), count_run(conn, run_id)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_end_reason_is_parsed_when_its_row_is_read() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        // Only the rows the reads need: no run, lease or blob behind them.
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        conn.execute_batch(
            "INSERT INTO workers (id, name, threads, version, signature, registered_ms,
                                  last_seen_ms)
             VALUES (3, 'w', 1, 'v', 0, 0, 0);
             INSERT INTO games (run_id, lease_id, worker_id, game_index, slot, opening_index,
                                red_player, result, reason, loser, plies)
             VALUES (1, 2, 3, 0, 0, 0, 0, 'red', 'time-forfeit', 1, 9),
                    (1, 2, 3, 1, 1, 0, 1, 'draw', 'adjudication', NULL, 9);",
        )
        .unwrap();
        let filter = GameFilter {
            reason: Some(Reason::TimeForfeit),
            ..GameFilter::default()
        };
        let (total, rows) = list(&conn, 1, &filter, 0, 10).unwrap();
        assert_eq!((total, rows[0].reason), (1, Reason::TimeForfeit));
        assert_eq!(
            failures_by_worker(&conn).unwrap(),
            [(3, Reason::TimeForfeit, 1)]
        );
        conn.execute("UPDATE games SET reason = 'move_limit'", [])
            .unwrap();
        let err = list(&conn, 1, &GameFilter::default(), 0, 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("games.reason") && err.contains("\"move_limit\""),
            "{err}"
        );
    }

    #[test]
    fn a_run_reads_back_page_by_page_and_batch_by_batch() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        let record = |i: u64| GameRecord {
            opening_index: i,
            start_fen: xq_engine::START_FEN.into(),
            moves: Vec::new(),
            opening_plies: 0,
            result: xq_engine::rules::GameResult::Draw,
            reason: Reason::Adjudication,
            red_player: (i % 2) as u8,
            per_move: Vec::new(),
            stderr_tail: String::new(),
            overrun_ms: None,
        };
        for (lease, first) in [(7u64, 0u64), (4, 3)] {
            let games: Vec<pb::GameRecord> = (first..first + 3).map(|i| record(i).into()).collect();
            conn.execute(
                "INSERT INTO game_batches (lease_id, run_id, data) VALUES (?1, 1, ?2)",
                params![lease as i64, game_codec::encode(&games)],
            )
            .unwrap();
            for slot in 0..3i64 {
                conn.execute(
                    "INSERT INTO games (run_id, lease_id, worker_id, game_index, slot,
                                        opening_index, red_player, result, reason, loser, plies)
                     VALUES (1, ?1, 3, ?2, ?2, ?3, 0, 'draw', 'adjudication', NULL, 0)",
                    params![lease as i64, slot, first as i64 + slot],
                )
                .unwrap();
            }
        }
        let all = GameFilter::default();
        let mut after = 0;
        let mut openings = Vec::new();
        loop {
            let page = load_page(&conn, 1, &all, after, 4).unwrap();
            openings.extend(page.iter().map(|(_, g)| g.record.opening_index));
            match page.last() {
                Some((id, _)) if page.len() == 4 => after = *id,
                _ => break,
            }
        }
        assert_eq!(openings, [0, 1, 2, 3, 4, 5], "counted order, in pages of 4");
        assert_eq!(batch_leases(&conn, 1).unwrap(), [4, 7]);
        let batch = load_batch(&conn, 1, 4).unwrap();
        assert_eq!(
            batch
                .iter()
                .map(|g| g.record.opening_index)
                .collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert!(load_batch(&conn, 2, 4).unwrap().is_empty());
    }
}
