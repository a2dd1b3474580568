//! Per-result histories of a run: its totals after every counted result
//! (`run_history`) and its LLR after every counted SPRT result
//! (`sprt_history`). Read by the web view's graphs; rows are oldest first.

use rusqlite::{Connection, params};

use xq_proto::{Pentanomial, Wdl};

use super::{StoreError, count};

/// A run's cumulative totals right after one counted result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TotalsPoint {
    pub pairs: u64,
    /// First player's view.
    pub pentanomial: Pentanomial,
    pub wdl: Wdl,
    pub unix_ms: i64,
}

/// The LLR right after one counted SPRT result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlrPoint {
    /// Pairs counted at that moment.
    pub pairs: u64,
    pub llr: f64,
}

/// Appends the run's current totals; called right after they changed, in the
/// same transaction.
pub fn record(conn: &Connection, run_id: u64, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO run_history (run_id, pairs, penta_ll, penta_ld, penta_dd, penta_dw,
                                  penta_ww, wins, draws, losses, unix_ms)
         SELECT id, pairs, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws,
                losses, ?2
         FROM runs WHERE id = ?1",
    )?
    .execute(params![run_id as i64, now])?;
    Ok(())
}

/// Every recorded totals point of the run, oldest first.
pub fn totals(conn: &Connection, run_id: u64) -> Result<Vec<TotalsPoint>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT pairs, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses,
                unix_ms
         FROM run_history WHERE run_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([run_id as i64], |r| {
        let mut c = [0u64; 9];
        for (i, v) in c.iter_mut().enumerate() {
            *v = count(r.get(i)?);
        }
        Ok(TotalsPoint {
            pairs: c[0],
            pentanomial: Pentanomial([c[1], c[2], c[3], c[4], c[5]]),
            wdl: Wdl {
                wins: c[6],
                draws: c[7],
                losses: c[8],
            },
            unix_ms: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every LLR point of an SPRT run, oldest first.
pub fn llr(conn: &Connection, run_id: u64) -> Result<Vec<LlrPoint>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT pairs, llr FROM sprt_history WHERE run_id = ?1 ORDER BY pairs, lease_id",
    )?;
    let rows = stmt.query_map([run_id as i64], |r| {
        Ok(LlrPoint {
            pairs: count(r.get(0)?),
            llr: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_appends_the_current_totals() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms, pairs,
                               penta_ll, penta_ww, wins, losses)
             VALUES ('{}', 'games', 0, 'active', 1, 1, 3, 1, 2, 4, 2)",
        )
        .unwrap();
        record(&conn, 1, 10).unwrap();
        conn.execute(
            "UPDATE runs SET pairs = 4, penta_dd = 1, wins = 5, draws = 1, losses = 3",
            [],
        )
        .unwrap();
        record(&conn, 1, 20).unwrap();
        record(&conn, 2, 30).unwrap();
        let points = totals(&conn, 1).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].pentanomial, Pentanomial([1, 0, 0, 0, 2]));
        assert_eq!((points[0].pairs, points[0].unix_ms), (3, 10));
        assert_eq!(points[1].pentanomial, Pentanomial([1, 0, 1, 0, 2]));
        assert_eq!(
            points[1].wdl,
            Wdl {
                wins: 5,
                draws: 1,
                losses: 3
            }
        );
        assert!(totals(&conn, 2).unwrap().is_empty());
    }
}
