//! Rows of `variant_totals`: a variants run's counted games per variant.

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, from_json};
use crate::runs::VariantTotals;

/// Variant `variant` of run `run_id`, or `None` before its first result.
pub fn load_one(
    conn: &Connection,
    run_id: u64,
    variant: usize,
) -> Result<Option<VariantTotals>, StoreError> {
    let row = conn
        .query_row(
            "SELECT totals FROM variant_totals WHERE run_id = ?1 AND variant = ?2",
            params![run_id as i64, variant as i64],
            |r| r.get::<_, String>(0),
        )
        .optional()?;
    let column = format!("variant_totals.totals of run {run_id}, variant {variant}");
    row.as_deref().map(|t| from_json(&column, t)).transpose()
}

/// Every counted variant of a run, by variant index.
pub fn load(conn: &Connection, run_id: u64) -> Result<Vec<(usize, VariantTotals)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT variant, totals FROM variant_totals WHERE run_id = ?1 ORDER BY variant",
    )?;
    let rows = stmt
        .query_map([run_id as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(v, json)| {
            let column = format!("variant_totals.totals of run {run_id}, variant {v}");
            Ok((super::count(v) as usize, from_json(&column, &json)?))
        })
        .collect()
}

/// Stores a variant's totals (inserting or replacing).
pub fn save(
    conn: &Connection,
    run_id: u64,
    variant: usize,
    totals: &VariantTotals,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO variant_totals (run_id, variant, totals) VALUES (?1, ?2, ?3)
         ON CONFLICT (run_id, variant) DO UPDATE SET totals = excluded.totals",
        params![
            run_id as i64,
            variant as i64,
            serde_json::to_string(totals)?
        ],
    )?;
    Ok(())
}
