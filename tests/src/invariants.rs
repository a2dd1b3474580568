//! What must hold in a coordinator's database after any mix of faults,
//! checked on the file itself (read-only), for the chaos soak and the fault
//! tests. Each broken rule is one line of [`Report::violations`].
//!
//! * The file passes `integrity_check` and `foreign_key_check`.
//! * Per run, the totals are the sum of its counted leases' pairs (done and
//!   not set aside by an exclusion); the
//!   pentanomial has `pairs` entries; W + D + L and the end reasons are
//!   `2 × pairs`.
//! * No two done leases of a run share an opening slice (nothing doubled);
//!   a finished run of fixed size has every slice done exactly once
//!   (nothing lost).
//! * Per-lease results: every done lease has its stored result, of its
//!   pairs, and no other lease has one; the run's totals (pairs, pentanomial,
//!   W/D/L) equal the sum of its results not excluded; every excluded result
//!   belongs to a worker excluded from the run, which got no lease of the
//!   run after its exclusion.
//! * SPRT: one history row per done lease; the stored LLR is the one
//!   recomputed from the totals.
//! * SPSA: one history row per counted lease, summing to the totals; θ
//!   replayed from the spec through every applied result in order equals
//!   each stored θ and the final state.
//! * Variants: the per-variant totals add up to the run's, and each equals
//!   its variant's done leases.
//! * Archived games of results still counted equal counted games, once the
//!   store archives games ([`check_archived_games`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use xq_coordinator::runs::{self, KindSpec, RunSpec};
use xq_coordinator::spsa::{SpsaRequest, apply_result};
use xq_coordinator::stats::{Pentanomial, Results};

/// One run as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub id: u64,
    pub kind: String,
    pub state: String,
    pub pairs: u64,
}

/// The outcome of [`check`].
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub runs: Vec<RunSummary>,
    /// Counted games over all runs.
    pub games: u64,
    pub violations: Vec<String>,
    /// Done leases whose openings another done lease of the run also counted.
    pub doubled: usize,
    /// Pairs a finished run of fixed size never counted.
    pub lost_pairs: u64,
    /// Done leases whose results were set aside when their worker was
    /// excluded (kept, not counted).
    pub excluded_leases: usize,
    /// What the archive check did (see [`check_archived_games`]).
    pub archive: String,
}

impl Report {
    pub fn finished(&self) -> usize {
        self.runs.iter().filter(|r| r.state == "finished").count()
    }
}

/// Opens the file read-only.
pub fn open(db: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
}

/// Every rule of the module docs, on the database at `db`.
pub fn check(db: &Path) -> Report {
    let mut report = Report::default();
    let conn = match open(db) {
        Ok(c) => c,
        Err(e) => {
            report
                .violations
                .push(format!("cannot open {}: {e}", db.display()));
            return report;
        }
    };
    if let Err(e) = check_conn(&conn, &mut report) {
        report
            .violations
            .push(format!("cannot read the database: {e}"));
    }
    report
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Clone)]
struct DoneLease {
    id: u64,
    offset: u64,
    pairs: u64,
    variant: Option<i64>,
    spsa_request: Option<String>,
    /// Its result was set aside (the worker was excluded from the run).
    excluded: bool,
}

fn check_conn(conn: &Connection, report: &mut Report) -> Res<()> {
    let v = &mut report.violations;
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if integrity != "ok" {
        v.push(format!("integrity_check: {integrity}"));
    }
    if conn.prepare("PRAGMA foreign_key_check")?.exists([])? {
        v.push("foreign_key_check found dangling references".to_owned());
    }
    let mut stmt = conn.prepare(
        "SELECT id, spec, kind, state, target_pairs, pairs, penta_ll, penta_ld, penta_dd,
                penta_dw, penta_ww, wins, draws, losses, progress ->> '$.llr', progress
         FROM runs ORDER BY id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<i64>>(4)?,
                (5..14)
                    .map(|i| r.get::<_, i64>(i).map(|n| n as u64))
                    .collect::<Result<Vec<_>, _>>()?,
                r.get::<_, Option<f64>>(14)?,
                r.get::<_, Option<String>>(15)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for (id, spec, kind, state, target, counts, llr, progress) in rows {
        let (pairs, penta, wdl) = (counts[0], &counts[1..6], &counts[6..9]);
        report.runs.push(RunSummary {
            id,
            kind: kind.clone(),
            state: state.clone(),
            pairs,
        });
        report.games += 2 * pairs;
        let spec: RunSpec = match serde_json::from_str(&spec) {
            Ok(s) => s,
            Err(e) => {
                v.push(format!("run {id}: spec does not decode: {e}"));
                continue;
            }
        };
        let all_done = done_leases(conn, id)?;
        let done: Vec<DoneLease> = all_done.iter().filter(|l| !l.excluded).cloned().collect();
        report.excluded_leases += all_done.len() - done.len();
        let done_pairs: u64 = done.iter().map(|l| l.pairs).sum();
        if done_pairs != pairs {
            v.push(format!(
                "run {id}: totals count {pairs} pairs, its counted leases {done_pairs}"
            ));
        }
        check_lease_results(conn, id, &counts[..9], v)?;
        if penta.iter().sum::<u64>() != pairs {
            v.push(format!(
                "run {id}: pentanomial {penta:?} is not {pairs} pairs"
            ));
        }
        if wdl.iter().sum::<u64>() != 2 * pairs {
            v.push(format!("run {id}: W+D+L {wdl:?} is not 2 × {pairs}"));
        }
        let reasons: i64 = conn.query_row(
            "SELECT COALESCE(SUM(games), 0) FROM run_reasons WHERE run_id = ?1",
            [id as i64],
            |r| r.get(0),
        )?;
        if reasons as u64 != 2 * pairs {
            v.push(format!(
                "run {id}: end reasons count {reasons} games, not 2 × {pairs}"
            ));
        }
        let (doubled, lost) = check_slices(id, &state, target.map(|t| t as u64), &spec, &done, v);
        report.doubled += doubled;
        report.lost_pairs += lost;
        match &spec.kind {
            KindSpec::Sprt(s) => {
                let history: i64 = conn.query_row(
                    "SELECT COUNT(*) FROM sprt_history WHERE run_id = ?1",
                    [id as i64],
                    |r| r.get(0),
                )?;
                if history as usize != all_done.len() {
                    v.push(format!(
                        "run {id}: {history} SPRT history rows, {} done leases",
                        all_done.len()
                    ));
                }
                if pairs > 0 {
                    let penta: [u64; 5] = penta.try_into()?;
                    let test = s.sprt.evaluate(&Results::Pentanomial(Pentanomial(penta)));
                    match (test, llr) {
                        (Ok(test), Some(llr))
                            if (test.llr - llr).abs() <= 1e-9 * llr.abs().max(1.0) => {}
                        (test, llr) => v.push(format!(
                            "run {id}: stored LLR {llr:?}, recomputed {:?}",
                            test.map(|t| t.llr)
                        )),
                    }
                }
            }
            KindSpec::Spsa(s) => check_spsa(conn, id, s, wdl, progress.as_deref(), &done, v)?,
            KindSpec::Variants(_) => check_variants(id, pairs, progress.as_deref(), &done, v)?,
            KindSpec::Datagen(_) => check_datagen(id, pairs, progress.as_deref(), v)?,
            // Games runs, and any kind without checks of its own here.
            _ => {}
        }
    }
    report.archive = check_archived_games(conn, v)?;
    Ok(())
}

fn done_leases(conn: &Connection, run: u64) -> Res<Vec<DoneLease>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, opening_offset, pairs, variant, spsa_request,
                EXISTS (SELECT 1 FROM lease_results r WHERE r.lease_id = leases.id
                        AND r.excluded_ms IS NOT NULL)
         FROM leases WHERE run_id = ?1 AND state = 'done' ORDER BY id",
    )?;
    let rows = stmt.query_map([run as i64], |r| {
        Ok(DoneLease {
            id: r.get::<_, i64>(0)? as u64,
            offset: r.get::<_, i64>(1)? as u64,
            pairs: r.get::<_, i64>(2)? as u64,
            variant: r.get(3)?,
            spsa_request: r.get(4)?,
            excluded: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The per-lease results of run `id` against its leases and its totals
/// `counts` (`[pairs, pentanomial ×5, W, D, L]`).
fn check_lease_results(conn: &Connection, id: u64, counts: &[u64], v: &mut Vec<String>) -> Res<()> {
    let bad: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT l.id, l.state FROM leases l LEFT JOIN lease_results r ON r.lease_id = l.id
             WHERE l.run_id = ?1 AND ((l.state = 'done') != (r.lease_id IS NOT NULL)
                                      OR r.pairs != l.pairs OR r.run_id != l.run_id
                                      OR r.worker_id != l.worker_id)",
        )?
        .query_map([id as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (lease, state) in bad {
        v.push(format!(
            "run {id}: lease {lease} ({state}) and its stored result disagree (missing, extra or another slice)"
        ));
    }
    let sums: Vec<u64> = conn.query_row(
        "SELECT COALESCE(SUM(pairs), 0), COALESCE(SUM(penta_ll), 0), COALESCE(SUM(penta_ld), 0),
                COALESCE(SUM(penta_dd), 0), COALESCE(SUM(penta_dw), 0), COALESCE(SUM(penta_ww), 0),
                COALESCE(SUM(wins), 0), COALESCE(SUM(draws), 0), COALESCE(SUM(losses), 0)
         FROM lease_results WHERE run_id = ?1 AND excluded_ms IS NULL",
        [id as i64],
        |r| {
            (0..9)
                .map(|i| r.get::<_, i64>(i).map(|n| n as u64))
                .collect()
        },
    )?;
    if sums != counts {
        v.push(format!(
            "run {id}: totals {counts:?} (pairs, pentanomial, W/D/L) but its counted lease results sum to {sums:?}"
        ));
    }
    let stray: i64 = conn.query_row(
        "SELECT COUNT(*) FROM lease_results r WHERE r.run_id = ?1 AND r.excluded_ms IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM run_excluded_workers e
                         WHERE e.run_id = r.run_id AND e.worker_id = r.worker_id)",
        [id as i64],
        |r| r.get(0),
    )?;
    if stray > 0 {
        v.push(format!(
            "run {id}: {stray} results set aside of workers not excluded from it"
        ));
    }
    let after: i64 = conn.query_row(
        "SELECT COUNT(*) FROM leases l JOIN run_excluded_workers e
             ON e.run_id = l.run_id AND e.worker_id = l.worker_id
         WHERE l.run_id = ?1 AND l.created_ms > e.unix_ms",
        [id as i64],
        |r| r.get(0),
    )?;
    if after > 0 {
        v.push(format!(
            "run {id}: {after} leases handed to workers after their exclusion from it"
        ));
    }
    Ok(())
}

/// Done slices never overlap; a finished run of fixed size has them all.
/// Returns the overlapping leases and the pairs never counted.
fn check_slices(
    id: u64,
    state: &str,
    target: Option<u64>,
    spec: &RunSpec,
    done: &[DoneLease],
    v: &mut Vec<String>,
) -> (usize, u64) {
    let (mut doubled, mut lost) = (0, 0);
    let mut by_variant: BTreeMap<Option<i64>, Vec<(u64, u64, u64)>> = BTreeMap::new();
    for l in done {
        by_variant
            .entry(l.variant)
            .or_default()
            .push((l.offset, l.offset + l.pairs, l.id));
    }
    for (variant, slices) in &mut by_variant {
        slices.sort_unstable();
        for w in slices.windows(2) {
            if w[1].0 < w[0].1 {
                doubled += 1;
                v.push(format!(
                    "run {id}: done leases {} and {} overlap on openings {}..{} (variant {variant:?}): a result counted twice",
                    w[0].2, w[1].2, w[1].0, w[0].1
                ));
            }
        }
    }
    // SPRT runs stop at a bound with slices still out; every other kind
    // finishes only with all of its pairs.
    let fixed = !matches!(spec.kind, KindSpec::Sprt(_));
    if state != "finished" || !fixed {
        return (doubled, lost);
    }
    let expected: Vec<(Option<i64>, u64)> = match &spec.kind {
        KindSpec::Variants(vs) => (0..vs.rules.len() as i64)
            .map(|i| (Some(i), vs.pairs))
            .collect(),
        _ => vec![(None, target.unwrap_or(0))],
    };
    for (variant, size) in expected {
        let mut covered = 0;
        for &(start, end, lease) in by_variant.get(&variant).map_or(&[][..], Vec::as_slice) {
            if start > covered {
                lost += start - covered;
                v.push(format!(
                    "run {id}: finished with openings {covered}..{start} (variant {variant:?}) never counted (next: lease {lease})"
                ));
            }
            covered = covered.max(end);
        }
        if covered != size {
            lost += size.saturating_sub(covered);
            v.push(format!(
                "run {id}: finished with {covered} of {size} pairs counted (variant {variant:?})"
            ));
        }
    }
    (doubled, lost)
}

fn check_spsa(
    conn: &Connection,
    id: u64,
    spec: &runs::SpsaSpec,
    wdl: &[u64],
    stored: Option<&str>,
    done: &[DoneLease],
    v: &mut Vec<String>,
) -> Res<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT lease_id, iter, wins, draws, losses, theta FROM spsa_history
         WHERE run_id = ?1 ORDER BY iter, lease_id",
    )?;
    let history = stmt
        .query_map([id as i64], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get::<_, i64>(1)? as u64,
                [
                    r.get::<_, i64>(2)? as u64,
                    r.get::<_, i64>(3)? as u64,
                    r.get::<_, i64>(4)? as u64,
                ],
                r.get::<_, String>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let history_ids: BTreeSet<u64> = history.iter().map(|h| h.0).collect();
    let done_ids: BTreeSet<u64> = done.iter().map(|l| l.id).collect();
    if history_ids != done_ids || history.len() != done.len() {
        v.push(format!(
            "run {id}: SPSA history has leases {:?} not done / done leases {:?} not in the history",
            history_ids.difference(&done_ids).collect::<Vec<_>>(),
            done_ids.difference(&history_ids).collect::<Vec<_>>()
        ));
    }
    let sum = history.iter().fold([0u64; 3], |a, h| {
        [a[0] + h.2[0], a[1] + h.2[1], a[2] + h.2[2]]
    });
    if sum[..] != wdl[..] {
        v.push(format!(
            "run {id}: SPSA history W/D/L {sum:?}, totals {wdl:?}"
        ));
    }
    let mut state = spec.initial_state()?;
    let requests: BTreeMap<u64, Option<&str>> = done
        .iter()
        .map(|l| (l.id, l.spsa_request.as_deref()))
        .collect();
    for (lease, iter, [wins, draws, losses], theta) in &history {
        let Some(Some(request)) = requests.get(lease) else {
            v.push(format!(
                "run {id}: SPSA history lease {lease} has no request"
            ));
            return Ok(());
        };
        let request: SpsaRequest = serde_json::from_str(request)?;
        let result = xq_coordinator::stats::Wdl {
            wins: *wins,
            draws: *draws,
            losses: *losses,
        };
        if let Err(e) = apply_result(&mut state, &request, result) {
            v.push(format!("run {id}: SPSA lease {lease} does not replay: {e}"));
            return Ok(());
        }
        let theta: Vec<f64> = serde_json::from_str(theta)?;
        if state.iter != *iter || !same(&state.theta(), &theta) {
            v.push(format!(
                "run {id}: after lease {lease} the replay has iter {} θ {:?}, the history iter {iter} θ {theta:?}",
                state.iter,
                state.theta()
            ));
            return Ok(());
        }
    }
    let stored: Option<xq_coordinator::spsa::SpsaState> =
        stored.map(serde_json::from_str).transpose()?;
    match stored {
        Some(s) if s.iter == state.iter && same(&s.theta(), &state.theta()) => {}
        other => v.push(format!(
            "run {id}: stored SPSA state {:?} is not the replay's iter {} θ {:?}",
            other.map(|s| (s.iter, s.theta())),
            state.iter,
            state.theta()
        )),
    }
    Ok(())
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
}

/// A variants run's stored progress (`runs.progress`: its totals per
/// variant, in the spec's order) counts each variant's done leases.
fn check_variants(
    id: u64,
    pairs: u64,
    progress: Option<&str>,
    done: &[DoneLease],
    v: &mut Vec<String>,
) -> Res<()> {
    let stored: Vec<Option<runs::VariantTotals>> = match progress {
        Some(json) => serde_json::from_str(json)?,
        None => Vec::new(),
    };
    let mut sum = 0;
    for (variant, totals) in stored.into_iter().enumerate() {
        let counted = totals.map_or(0, |t| t.pairs);
        let leases: u64 = done
            .iter()
            .filter(|l| l.variant == Some(variant as i64))
            .map(|l| l.pairs)
            .sum();
        if counted != leases {
            v.push(format!(
                "run {id}: variant {variant} counts {counted} pairs, its done leases {leases}"
            ));
        }
        sum += counted;
    }
    if sum != pairs {
        v.push(format!(
            "run {id}: variants count {sum} pairs, the run {pairs}"
        ));
    }
    Ok(())
}

/// A datagen run's Red-view totals (its stored progress) count the run's
/// pairs.
fn check_datagen(id: u64, pairs: u64, progress: Option<&str>, v: &mut Vec<String>) -> Res<()> {
    let counted = match progress {
        Some(json) => serde_json::from_str::<runs::VariantTotals>(json)?.pairs,
        None => 0,
    };
    if counted != pairs {
        v.push(format!(
            "run {id}: its datagen totals count {counted} pairs, the run {pairs}"
        ));
    }
    Ok(())
}

/// **Archive hook.** A game is stored exactly when it is counted and its
/// run's retention keeps it: each run's stored games must number
/// [`xq_proto::Retention::kept_of`] its counted totals (all games, the
/// decisive ones, the failures or none), and each stored game must be one
/// the retention keeps. Without a `games` table with a `run_id` column this
/// checks nothing and says so.
pub fn check_archived_games(conn: &Connection, v: &mut Vec<String>) -> Res<String> {
    let has_archive = conn
        .query_row(
            "SELECT 1 FROM pragma_table_info('games') WHERE name = 'run_id'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_archive {
        return Ok("no game archive in this schema: stored = counted not checked".to_owned());
    }
    let mut stmt = conn.prepare(
        "SELECT id, spec, pairs, wins, draws, losses,
                (SELECT COUNT(*) FROM games g WHERE g.run_id = runs.id
                 AND NOT EXISTS (SELECT 1 FROM lease_results r WHERE r.lease_id = g.lease_id
                                 AND r.excluded_ms IS NOT NULL))
         FROM runs ORDER BY id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                [2, 3, 4, 5].map(|i| r.get::<_, i64>(i).map(|n| n as u64)),
                r.get::<_, i64>(6)? as u64,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stored = 0;
    for (run, spec, counts, archived) in rows {
        let [pairs, wins, draws, losses] = counts.map(|c| c.unwrap_or(0));
        stored += archived;
        let keep = match serde_json::from_str::<RunSpec>(&spec) {
            Ok(s) => s.keep_games,
            Err(e) => {
                v.push(format!("run {run}: spec does not decode: {e}"));
                continue;
            }
        };
        let mut reasons =
            conn.prepare("SELECT reason, games FROM run_reasons WHERE run_id = ?1")?;
        let totals = xq_proto::Totals {
            pairs,
            wdl: xq_proto::Wdl {
                wins,
                draws,
                losses,
            },
            reasons: reasons
                .query_map([run], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
                })?
                .collect::<Result<_, _>>()?,
            ..Default::default()
        };
        let kept = keep.kept_of(&totals);
        if kept != archived {
            v.push(format!(
                "run {run}: {archived} games stored, {kept} of {} counted kept by retention {keep}",
                totals.games()
            ));
        }
        let mut games = conn.prepare("SELECT result, reason FROM games WHERE run_id = ?1")?;
        let outside = games
            .query_map([run], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|(result, reason)| {
                let result = match result.as_str() {
                    "draw" => xq_engine::rules::GameResult::Draw,
                    "red" => xq_engine::rules::GameResult::Red,
                    _ => xq_engine::rules::GameResult::Black,
                };
                xq_engine::rules::Reason::from_token(reason)
                    .is_none_or(|reason| !keep.keeps(result, reason))
            })
            .count();
        if outside > 0 {
            v.push(format!(
                "run {run}: {outside} stored games that retention {keep} does not keep"
            ));
        }
    }
    Ok(format!(
        "{stored} archived games checked against the counted ones their retention keeps"
    ))
}

/// Active leases whose deadline passed more than `slack_ms` before `now_ms`.
pub fn overdue_active(db: &Path, now_ms: i64, slack_ms: i64) -> rusqlite::Result<Vec<u64>> {
    let conn = open(db)?;
    let mut stmt = conn
        .prepare("SELECT id FROM leases WHERE state = 'active' AND deadline_ms < ?1 ORDER BY id")?;
    let rows = stmt.query_map([now_ms - slack_ms], |r| {
        r.get::<_, i64>(0).map(|n| n as u64)
    })?;
    rows.collect()
}

/// Leases a worker was told were accepted but that are not done in `db`:
/// results lost after their acknowledgement.
pub fn lost_acknowledged(db: &Path, accepted: &BTreeSet<u64>) -> rusqlite::Result<Vec<u64>> {
    let conn = open(db)?;
    let mut stmt = conn.prepare("SELECT state FROM leases WHERE id = ?1")?;
    let mut lost = Vec::new();
    for &id in accepted {
        let state: Option<String> = stmt.query_row([id as i64], |r| r.get(0)).optional()?;
        if state.as_deref() != Some("done") {
            lost.push(id);
        }
    }
    Ok(lost)
}

/// Lease ids of the `result accepted` lines in a worker's log.
pub fn accepted_in_log(log: &str) -> BTreeSet<u64> {
    strip_ansi(log)
        .lines()
        .filter(|l| l.contains("result accepted"))
        .filter_map(|l| {
            let rest = &l[l.find("lease_id=")? + "lease_id=".len()..];
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// `text` without ANSI colour sequences (`ESC [ … m`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAMES_SPEC: &str = r#"{"name":"g","priority":0,"batch_pairs":2,"settings":{"limit":{"nodes":200},"hash_mb":1,"rules":"standard","openings":{"builtin":{"random_plies":4}},"seed":1,"adjudication":{"resign_cp":1000,"resign_moves":4,"draw_cp":10,"draw_moves":8,"draw_after_move":40,"max_plies":80}},"kind":{"games":{"dev_params":{},"base_params":{},"pairs":10}}}"#;

    /// [`check`] on a database holding games run 1 (10 pairs, 4 counted as
    /// DD, `state`, W/D/L `wdl`, 8 checkmates), worker 1, and then `sql`.
    fn check_with(tag: &str, state: &str, wdl: [i64; 3], sql: &str) -> Report {
        let path =
            std::env::temp_dir().join(format!("xq-invariants-{tag}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut conn = Connection::open(&path).unwrap();
        xq_coordinator::store::migrations::migrate(&mut conn).unwrap();
        conn.execute(
            "INSERT INTO runs (id, spec, kind, priority, state, target_pairs, pairs, penta_dd,
                               wins, draws, losses, created_ms, updated_ms)
             VALUES (1, ?1, 'games', 0, ?2, 10, 4, 4, ?3, ?4, ?5, 1, 1)",
            rusqlite::params![GAMES_SPEC, state, wdl[0], wdl[1], wdl[2]],
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO run_reasons VALUES (1, 'checkmate', 8);
             INSERT INTO workers (id, name, threads, version, signature, registered_ms, last_seen_ms)
                 VALUES (1, 'w', 1, '0', 0, 1, 1);",
        )
        .unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let report = check(&path);
        let _ = std::fs::remove_file(&path);
        report
    }

    #[test]
    fn a_doubled_slice_lost_pairs_and_bad_totals_are_reported() {
        let report = check_with(
            "doubled",
            "finished",
            [4, 0, 3],
            "INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs, created_ms, deadline_ms)
                 VALUES (1, 1, 'done', 0, 2, 1, 1), (1, 1, 'done', 1, 2, 1, 1);",
        );
        assert_eq!(report.doubled, 1, "{:?}", report.violations);
        assert_eq!(report.lost_pairs, 7, "{:?}", report.violations);
        let text = report.violations.join("\n");
        assert!(text.contains("overlap on openings 1..2"), "{text}");
        assert!(text.contains("W+D+L [4, 0, 3] is not 2 × 4"), "{text}");
        assert_eq!(report.games, 8);
    }

    #[test]
    fn lease_results_that_disagree_with_leases_or_totals_are_reported() {
        let report = check_with(
            "results",
            "active",
            [0, 8, 0],
            "INSERT INTO leases (id, run_id, worker_id, state, opening_offset, pairs, created_ms, deadline_ms)
                 VALUES (1, 1, 1, 'done', 0, 2, 1, 1), (2, 1, 1, 'done', 2, 2, 1, 1),
                        (3, 1, 1, 'done', 4, 2, 1, 1);
             INSERT INTO lease_results (lease_id, run_id, worker_id, pairs, penta_ll, penta_ld,
                 penta_dd, penta_dw, penta_ww, wins, draws, losses, total_plies, time_losses,
                 crashes, reasons, excluded_ms)
             VALUES (1, 1, 1, 2, 0, 0, 2, 0, 0, 0, 4, 0, 10, 0, 0, '{}', NULL),
                    (3, 1, 1, 2, 0, 0, 2, 0, 0, 0, 4, 0, 10, 0, 0, '{}', 5);",
        );
        let text = report.violations.join("\n");
        assert!(
            text.contains("lease 2 (done) and its stored result disagree"),
            "{text}"
        );
        assert!(
            text.contains("counted lease results sum to [2, 0, 0, 2, 0, 0, 0, 4, 0]"),
            "{text}"
        );
        assert!(
            text.contains("1 results set aside of workers not excluded"),
            "{text}"
        );
        assert_eq!(report.excluded_leases, 1);
    }

    #[test]
    fn accepted_leases_are_read_from_log_lines() {
        let log = "2026-12-01T09:00:00Z  INFO xq_worker::client: result accepted lease_id=12 pairs=4\n\
                   2026-12-01T09:00:01Z  WARN xq_worker::client: heartbeat failed lease_id=13\n\
                   result accepted \u{1b}[3mlease_id\u{1b}[0m\u{1b}[2m=\u{1b}[0m140 pairs=2\n";
        assert_eq!(accepted_in_log(log), [12, 140].into());
    }
}
