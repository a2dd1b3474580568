//! Rows of `runs`, `run_reasons`, `run_flags` (why the system stopped a
//! run, e.g. an engine that did not match its signature) and the per-result
//! histories.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{StoreError, count, from_json};
use crate::runs::{Effect, RunKind, RunSpec, RunState, RunStatus, SpsaHistoryRow, StoredProgress};
use xq_proto::{Pentanomial, Totals, Wdl};

/// Inserts an active run; its kind's initial state follows with
/// [`save_effects`].
pub fn insert(
    conn: &Connection,
    spec: &RunSpec,
    author: Option<u64>,
    state: RunState,
    now: i64,
) -> Result<u64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO runs (spec, kind, priority, state, target_pairs, created_ms, updated_ms,
                           author_id)
         VALUES (?1, ?2, ?3, ?7, ?4, ?5, ?5, ?6)",
    )?
    .execute(params![
        serde_json::to_string(spec)?,
        spec.kind.kind().as_str(),
        spec.priority,
        spec.kind.target_pairs().map(|t| t as i64),
        now,
        author.map(|a| a as i64),
        state.as_str(),
    ])?;
    Ok(conn.last_insert_rowid() as u64)
}

/// The author (`users.id`) of run `id`; `NotFound` for an unknown run.
pub fn author(conn: &Connection, id: u64) -> Result<Option<u64>, StoreError> {
    conn.prepare_cached("SELECT author_id FROM runs WHERE id = ?1")?
        .query_row([id as i64], |r| r.get::<_, Option<i64>>(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("no run {id}")))
        .map(|a| a.map(|a| a as u64))
}

/// The counted result that caused a kind's effects: its lease, the run's
/// pairs after it, and its own totals.
#[derive(Debug, Clone, Copy)]
pub struct Cause<'a> {
    pub lease_id: u64,
    pub run_pairs: u64,
    pub result: &'a Totals,
}

/// Writes what a run kind returned (see [`Effect`]) for run `id`: `cause`
/// is the counted result, `None` at the run's creation.
pub fn save_effects(
    conn: &Connection,
    id: u64,
    cause: Option<Cause<'_>>,
    effects: Vec<Effect>,
    now: i64,
) -> Result<(), StoreError> {
    for effect in effects {
        match (effect, cause) {
            (Effect::Progress(progress), _) => save_progress(conn, id, &progress)?,
            (Effect::LlrPoint(llr), Some(c)) => {
                save_llr(conn, id, c.lease_id, c.run_pairs, llr, now)?;
            }
            (Effect::ThetaPoint { iter, theta }, Some(c)) => {
                save_theta(conn, id, c.lease_id, iter, &theta, c.result, now)?;
            }
            (Effect::StartVerification(spec), _) => {
                let verify = insert(conn, &spec, author(conn, id)?, RunState::Active, now)?;
                set_verifies(conn, verify, id)?;
                let detail = format!("sprt run {:?}, verifying tune {id}", spec.name);
                super::events::log(
                    conn,
                    &crate::events::Actor::system(),
                    crate::events::EventKind::Create,
                    Some(verify),
                    &detail,
                    now,
                )?;
                tracing::info!(tune = id, verify, "tune finished; verification started");
            }
            (Effect::LlrPoint(_) | Effect::ThetaPoint { .. }, None) => {
                return Err(StoreError::Schema(format!(
                    "run {id}: a history point without the result it counts"
                )));
            }
        }
    }
    Ok(())
}

/// Replaces run `id`'s kind-specific progress with `progress`, as its kind
/// wrote it: the one write of `runs.progress` (one statement, one row).
pub fn save_progress(
    conn: &Connection,
    id: u64,
    progress: &StoredProgress,
) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE runs SET progress = ?2 WHERE id = ?1")?
        .execute(params![id as i64, progress.as_str()])?;
    Ok(())
}

/// Records that run `id` is the SPRT verifying the tune `tune`.
pub fn set_verifies(conn: &Connection, id: u64, tune: u64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE runs SET verifies = ?2 WHERE id = ?1")?
        .execute(params![id as i64, tune as i64])?;
    Ok(())
}

/// The newest active run with exactly this spec (the stored JSON is
/// canonical: struct fields in order, maps sorted).
pub fn find_active_identical(conn: &Connection, spec: &RunSpec) -> Result<Option<u64>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM runs WHERE state = 'active' AND spec = ?1 ORDER BY id DESC LIMIT 1",
        )?
        .query_row([serde_json::to_string(spec)?], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|id| id as u64))
}

/// A run's row and what is derived from it. Pairs in flight are the run's
/// `pairs_in_flight`, which triggers on `leases` keep equal to the pairs of
/// its active leases (migration 24), so reading them costs the same with a
/// hundred thousand leases in play as with one.
const COLUMNS: &str =
    "id, spec, state, target_pairs, pairs, penta_ll, penta_ld, penta_dd, penta_dw,
    penta_ww, wins, draws, losses, total_plies, kind, progress, created_ms, updated_ms,
    pairs_in_flight, verifies, (SELECT MIN(v.id) FROM runs v WHERE v.verifies = runs.id),
    (SELECT u.name FROM users u WHERE u.id = runs.author_id), rejection, share";

/// One run, or `NotFound`.
pub fn load(conn: &Connection, id: u64) -> Result<RunStatus, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM runs WHERE id = ?1");
    let row = conn
        .prepare_cached(&sql)?
        .query_row([id as i64], raw)
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("no run {id}")))?;
    let mut status = row.into_status()?;
    status.totals.reasons = reasons(conn, id)?;
    status.flag = flag(conn, id)?;
    Ok(status)
}

/// Every run, newest first.
pub fn list(conn: &Connection) -> Result<Vec<RunStatus>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM runs ORDER BY id DESC");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], raw)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|r| {
            let mut status = r.into_status()?;
            status.totals.reasons = reasons(conn, status.id)?;
            status.flag = flag(conn, status.id)?;
            Ok(status)
        })
        .collect()
}

fn reasons(
    conn: &Connection,
    id: u64,
) -> Result<std::collections::BTreeMap<String, u64>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT reason, games FROM run_reasons WHERE run_id = ?1")?;
    let rows = stmt.query_map([id as i64], |r| {
        Ok((r.get::<_, String>(0)?, count(r.get(1)?)))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The columns as read, before JSON decoding.
struct Raw {
    id: i64,
    spec: String,
    state: String,
    target_pairs: Option<i64>,
    counts: [i64; 10],
    /// The kind's name, checked against the spec's kind.
    kind: String,
    /// The kind's progress as it stored it.
    progress: Option<String>,
    created_ms: i64,
    updated_ms: i64,
    in_flight: i64,
    /// The tune this run verifies, and the run verifying this one.
    verifies: Option<i64>,
    verified_by: Option<i64>,
    /// The author's user name.
    author: Option<String>,
    rejection: Option<String>,
    share: i64,
}

fn raw(r: &Row<'_>) -> rusqlite::Result<Raw> {
    let mut counts = [0i64; 10];
    for (i, c) in counts.iter_mut().enumerate() {
        *c = r.get(4 + i)?;
    }
    Ok(Raw {
        id: r.get(0)?,
        spec: r.get(1)?,
        state: r.get(2)?,
        target_pairs: r.get(3)?,
        counts,
        kind: r.get(14)?,
        progress: r.get(15)?,
        created_ms: r.get(16)?,
        updated_ms: r.get(17)?,
        in_flight: r.get(18)?,
        verifies: r.get(19)?,
        verified_by: r.get(20)?,
        author: r.get(21)?,
        rejection: r.get(22)?,
        share: r.get(23)?,
    })
}

impl Raw {
    /// The run, with its kind's progress as its kind reads it back.
    fn into_status(self) -> Result<RunStatus, StoreError> {
        let spec: RunSpec = from_json(&format!("runs.spec of run {}", self.id), &self.spec)?;
        let state = RunState::parse(&self.state)
            .ok_or_else(|| StoreError::Schema(format!("unknown run state {:?}", self.state)))?;
        if RunKind::parse(&self.kind) != Some(spec.kind.kind()) {
            return Err(StoreError::Schema(format!(
                "runs.kind of run {} is {:?}, its spec's kind {:?}",
                self.id,
                self.kind,
                spec.kind.kind().as_str()
            )));
        }
        let [pairs, ll, ld, dd, dw, ww, wins, draws, losses, plies] = self.counts.map(count);
        let stored = self.progress.map(StoredProgress::from_stored);
        let progress = spec
            .kind
            .ops()
            .read_progress(self.id as u64, stored.as_ref())?;
        Ok(RunStatus {
            id: self.id as u64,
            spec,
            state,
            totals: Totals {
                pairs,
                pentanomial: Pentanomial([ll, ld, dd, dw, ww]),
                wdl: Wdl {
                    wins,
                    draws,
                    losses,
                },
                reasons: Default::default(),
                total_plies: plies,
            },
            target_pairs: self.target_pairs.map(count),
            pairs_in_flight: count(self.in_flight),
            created_ms: self.created_ms,
            updated_ms: self.updated_ms,
            progress,
            flag: None,
            linked: self.verifies.or(self.verified_by).map(|id| id as u64),
            author: self.author,
            rejection: self.rejection,
            share: share(self.share)?,
        })
    }
}

/// A stored share, which the schema keeps positive.
fn share(stored: i64) -> Result<u32, StoreError> {
    u32::try_from(stored)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| StoreError::Schema(format!("invalid share {stored}")))
}

/// Sets the run's state and cancels its active leases if it is no longer
/// active. Returns the number of leases cancelled.
pub fn set_state(
    conn: &Connection,
    id: u64,
    state: RunState,
    now: i64,
) -> Result<usize, StoreError> {
    conn.prepare_cached("UPDATE runs SET state = ?2, updated_ms = ?3 WHERE id = ?1")?
        .execute(params![id as i64, state.as_str(), now])?;
    if state == RunState::Active {
        return Ok(0);
    }
    Ok(conn.prepare_cached("UPDATE leases SET state = 'cancelled', finished_ms = ?2 WHERE run_id = ?1 AND state = 'active'")?.execute(
        params![id as i64, now],
    )?)
}

/// Writes run `id`'s changed `spec` and `share`; the columns the scheduler
/// reads (`priority`, `target_pairs`) are the spec's, written with it.
pub fn modify(
    conn: &Connection,
    id: u64,
    spec: &RunSpec,
    share: u32,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE runs SET spec = ?2, priority = ?3, target_pairs = ?4, share = ?5, updated_ms = ?6
         WHERE id = ?1",
    )?
    .execute(params![
        id as i64,
        serde_json::to_string(spec)?,
        spec.priority,
        spec.kind.target_pairs().map(|t| t as i64),
        share,
        now
    ])?;
    Ok(())
}

/// The fresh pairs run `id` has handed out (its next fresh opening offset).
pub fn pairs_issued(conn: &Connection, id: u64) -> Result<u64, StoreError> {
    conn.prepare_cached("SELECT pairs_issued FROM runs WHERE id = ?1")?
        .query_row([id as i64], |r| r.get::<_, i64>(0))
        .optional()?
        .map(count)
        .ok_or_else(|| StoreError::NotFound(format!("no run {id}")))
}

/// Marks run `id` rejected with `reason`.
pub fn reject(conn: &Connection, id: u64, reason: &str, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE runs SET state = 'rejected', rejection = ?2, updated_ms = ?3 WHERE id = ?1",
    )?
    .execute(params![id as i64, reason, now])?;
    Ok(())
}

/// Adds a lease's counts to the run's totals.
pub fn add_totals(conn: &Connection, id: u64, o: &Totals, now: i64) -> Result<(), StoreError> {
    let [ll, ld, dd, dw, ww] = o.pentanomial.0.map(|c| c as i64);
    conn.prepare_cached(
        "UPDATE runs SET pairs = pairs + ?2, penta_ll = penta_ll + ?3, penta_ld = penta_ld + ?4,
             penta_dd = penta_dd + ?5, penta_dw = penta_dw + ?6, penta_ww = penta_ww + ?7,
             wins = wins + ?8, draws = draws + ?9, losses = losses + ?10,
             total_plies = total_plies + ?11, updated_ms = ?12
         WHERE id = ?1",
    )?
    .execute(params![
        id as i64,
        o.pairs as i64,
        ll,
        ld,
        dd,
        dw,
        ww,
        o.wdl.wins as i64,
        o.wdl.draws as i64,
        o.wdl.losses as i64,
        o.total_plies as i64,
        now
    ])?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO run_reasons (run_id, reason, games) VALUES (?1, ?2, ?3)
         ON CONFLICT (run_id, reason) DO UPDATE SET games = games + excluded.games",
    )?;
    for (reason, games) in &o.reasons {
        stmt.execute(params![id as i64, reason, *games as i64])?;
    }
    super::history::record(conn, id, now)
}

/// Zeroes the run's counted totals and reasons, before they are rebuilt
/// from its stored results.
pub fn reset_totals(conn: &Connection, id: u64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE runs SET pairs = 0, penta_ll = 0, penta_ld = 0, penta_dd = 0, penta_dw = 0,
             penta_ww = 0, wins = 0, draws = 0, losses = 0, total_plies = 0
         WHERE id = ?1",
    )?
    .execute([id as i64])?;
    conn.prepare_cached("DELETE FROM run_reasons WHERE run_id = ?1")?
        .execute([id as i64])?;
    Ok(())
}

/// Stores a point of the SPRT's LLR history: `llr` after the counted result
/// of lease `lease_id`, with the run's `pairs` then (a recount replaces the
/// point of the result that caused it).
fn save_llr(
    conn: &Connection,
    id: u64,
    lease_id: u64,
    pairs: u64,
    llr: f64,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO sprt_history (lease_id, run_id, pairs, llr, unix_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![lease_id as i64, id as i64, pairs as i64, llr, now])?;
    Ok(())
}

/// Stores a point of the tune's θ history: θ after the applied result
/// `outcome` of lease `lease_id`, `iter` pairs applied.
fn save_theta(
    conn: &Connection,
    id: u64,
    lease_id: u64,
    iter: u64,
    theta: &[f64],
    outcome: &Totals,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO spsa_history (lease_id, run_id, iter, wins, draws, losses, theta, unix_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        lease_id as i64,
        id as i64,
        iter as i64,
        outcome.wdl.wins as i64,
        outcome.wdl.draws as i64,
        outcome.wdl.losses as i64,
        serde_json::to_string(theta)?,
        now
    ])?;
    Ok(())
}

/// The SPSA history of a run, oldest first.
pub fn spsa_history(conn: &Connection, id: u64) -> Result<Vec<SpsaHistoryRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT lease_id, iter, wins, draws, losses, theta, unix_ms FROM spsa_history
         WHERE run_id = ?1 ORDER BY iter, lease_id",
    )?;
    let rows = stmt
        .query_map([id as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                [r.get::<_, i64>(2)?, r.get(3)?, r.get(4)?],
                r.get::<_, String>(5)?,
                r.get::<_, i64>(6)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(lease_id, iter, [w, d, l], theta, unix_ms)| {
            Ok(SpsaHistoryRow {
                lease_id: lease_id as u64,
                iter: count(iter),
                wins: count(w),
                draws: count(d),
                losses: count(l),
                theta: serde_json::from_str(&theta)?,
                unix_ms,
            })
        })
        .collect()
}

/// Stops `run_id` because of `message`, keeping the first message if it was
/// flagged before (call it in the transaction of the cause). Returns the
/// leases cancelled.
pub fn flag_run(
    conn: &Connection,
    run_id: u64,
    message: &str,
    now: i64,
) -> Result<usize, StoreError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO run_flags (run_id, message, unix_ms) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![run_id as i64, message, now])?;
    set_state(conn, run_id, RunState::Stopped, now)
}

/// Why the system stopped `run_id`, if it did.
pub fn flag(conn: &Connection, run_id: u64) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT message FROM run_flags WHERE run_id = ?1")?
        .query_row([run_id as i64], |r| r.get(0))
        .optional()?)
}

/// An active run as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: u64,
    pub priority: i32,
    pub target_pairs: Option<u64>,
    pub pairs_issued: u64,
    pub pairs_counted: u64,
    pub pairs_in_flight: u64,
    /// Throughput share, positive (see the scheduler's fair share).
    pub share: u32,
    /// Whether an expired, released or excluded slice waits to be handed
    /// out again.
    pub has_requeued: bool,
}

impl Candidate {
    /// Whether the run has a slice to hand out.
    pub fn has_work(&self) -> bool {
        self.has_requeued || self.target_pairs.is_none_or(|t| self.pairs_issued < t)
    }
}

/// Every active run `worker_id` was not excluded from and did not fail to
/// build for. Call [`super::leases::expire_overdue`] first.
pub fn candidates(conn: &Connection, worker_id: u64) -> Result<Vec<Candidate>, StoreError> {
    let sql = format!(
        "SELECT id, priority, target_pairs, pairs_issued, pairs,
            pairs_in_flight, EXISTS ({requeued}), share
         FROM runs WHERE state = 'active'
         AND NOT EXISTS (SELECT 1 FROM run_excluded_workers e
                         WHERE e.run_id = runs.id AND e.worker_id = ?1)
         AND NOT EXISTS (SELECT 1 FROM build_failures b
                         WHERE b.run_id = runs.id AND b.worker_id = ?1)",
        requeued = super::leases::requeued("runs.id")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([worker_id as i64], |r| {
        Ok(Candidate {
            id: r.get::<_, i64>(0)? as u64,
            priority: r.get(1)?,
            target_pairs: r.get::<_, Option<i64>>(2)?.map(count),
            pairs_issued: count(r.get(3)?),
            pairs_counted: count(r.get(4)?),
            pairs_in_flight: count(r.get(5)?),
            has_requeued: r.get(6)?,
            share: r.get::<_, u32>(7)?.max(1),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Advances the fresh-opening counter by `pairs`.
pub fn advance_issued(conn: &Connection, id: u64, pairs: u32) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE runs SET pairs_issued = pairs_issued + ?2 WHERE id = ?1")?
        .execute(params![id as i64, pairs])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(rules: &str) -> Result<RunStatus, StoreError> {
        stored_as(rules, "games")
    }

    fn stored_as(rules: &str, kind: &str) -> Result<RunStatus, StoreError> {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        let spec = format!(
            r#"{{"name":"g","priority":0,"batch_pairs":2,"settings":{{"limit":{{"nodes":200}},
            "hash_mb":1,"rules":"{rules}","openings":{{"builtin":{{"random_plies":4}}}},"seed":1,
            "adjudication":{{"resign_cp":0,"resign_moves":0,"draw_cp":0,"draw_moves":0,
            "draw_after_move":0,"max_plies":0}}}},
            "kind":{{"games":{{"dev_params":{{}},"base_params":{{}},"pairs":10}}}}}}"#
        );
        conn.execute(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
             VALUES (?1, ?2, 0, 'active', 1, 1)",
            [spec.as_str(), kind],
        )
        .unwrap();
        load(&conn, 1)
    }

    #[test]
    fn the_kind_column_is_checked_against_the_spec_when_a_run_is_read() {
        assert_eq!(
            stored_as("standard", "games").unwrap().progress,
            Default::default()
        );
        for kind in ["sprt", "sixth"] {
            let err = stored_as("standard", kind).unwrap_err().to_string();
            assert!(
                err.contains(&format!("runs.kind of run 1 is {kind:?}")) && err.contains("games"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_kind_writes_its_progress_whole_and_reads_it_back() {
        use crate::runs::{Progress, StoredProgress};
        let conn = super::super::migrations::memory();
        let spec = r#"{"name":"s","priority":0,"batch_pairs":2,"settings":{"limit":{"nodes":200},
            "hash_mb":1,"rules":"standard","openings":{"builtin":{"random_plies":4}},"seed":1,
            "adjudication":{"resign_cp":0,"resign_moves":0,"draw_cp":0,"draw_moves":0,
            "draw_after_move":0,"max_plies":0}},"kind":{"sprt":{"dev_params":{},
            "base_params":{},"sprt":{"elo0":0.0,"elo1":5.0,"alpha":0.05,"beta":0.05,
            "model":"normalized"},"max_pairs":null}}}"#;
        conn.execute(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
             VALUES (?1, 'sprt', 0, 'active', 1, 1)",
            [spec],
        )
        .unwrap();
        assert_eq!(load(&conn, 1).unwrap().progress, Progress::Sprt(None));
        let llr = 0.012_516_499_155_219_102;
        let json = format!(r#"{{"llr":{llr},"state":"accepted_h1"}}"#);
        let effects = vec![Effect::Progress(StoredProgress::from_stored(json))];
        save_effects(&conn, 1, None, effects, 2).unwrap();
        let outcome = load(&conn, 1).unwrap().progress.sprt().copied().unwrap();
        assert_eq!(
            (outcome.llr, outcome.state),
            (llr, crate::stats::sprt::SprtState::AcceptedH1)
        );
        conn.execute("UPDATE runs SET progress = '{\"llr\":1}' WHERE id = 1", [])
            .unwrap();
        let err = load(&conn, 1).unwrap_err().to_string();
        assert!(err.contains("runs.progress of run 1"), "{err}");
    }

    #[test]
    fn a_stored_rule_set_is_parsed_when_its_row_is_read() {
        let run = stored("conversion").unwrap();
        assert!(run.spec.settings.rules.conversion);
        assert_eq!(
            serde_json::to_value(&run.spec).unwrap()["settings"]["rules"],
            "standard+conversion"
        );
        let err = stored("standard+chess").unwrap_err().to_string();
        assert!(
            err.contains("runs.spec of run 1") && err.contains("unknown rule preset \"chess\""),
            "{err}"
        );
    }
}

/// The store's path of a counted result timed per kind (ignored: a
/// measurement).
#[cfg(test)]
#[path = "progress_write.rs"]
mod progress_write;
