//! Rows of `events`: the log of who did what. Every writer calls [`log`]
//! inside the transaction of the change it records.

use rusqlite::{Connection, params_from_iter};

use super::StoreError;
use crate::events::{Actor, Event, EventFilter, EventKind};

/// Longest detail kept, in bytes (a longer one is cut at a character boundary).
pub const MAX_DETAIL: usize = 512;

/// Records that `actor` made a change of `kind` to `run` at `now`; an actor
/// with a user is logged under the user's name.
pub fn log(
    conn: &Connection,
    actor: &Actor,
    kind: EventKind,
    run: Option<u64>,
    detail: &str,
    now: i64,
) -> Result<(), StoreError> {
    let mut end = detail.len().min(MAX_DETAIL);
    while !detail.is_char_boundary(end) {
        end -= 1;
    }
    conn.prepare_cached(
        "INSERT INTO events (time_ms, actor, user_id, kind, run_id, detail)
         VALUES (?1, COALESCE((SELECT name FROM users WHERE id = ?3), ?2), ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![
        now,
        actor.name,
        actor.user.map(|u| u as i64),
        kind.as_str(),
        run.map(|r| r as i64),
        &detail[..end],
    ])?;
    Ok(())
}

/// The events `filter` selects, newest first.
pub fn list(conn: &Connection, filter: &EventFilter) -> Result<Vec<Event>, StoreError> {
    let mut sql = "SELECT id, time_ms, actor, kind, run_id, detail FROM events WHERE 1".to_owned();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(actor) = &filter.actor {
        sql += " AND actor = ?";
        args.push(actor.clone().into());
    }
    if let Some(run) = filter.run {
        sql += " AND run_id = ?";
        args.push((run as i64).into());
    }
    if let Some(kind) = filter.kind {
        sql += " AND kind = ?";
        args.push(kind.as_str().to_owned().into());
    }
    sql += " ORDER BY id DESC LIMIT ?";
    args.push(i64::from(filter.limit.max(1)).into());
    let rows = conn
        .prepare(&sql)?
        .query_map(params_from_iter(args), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, String>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(id, time_ms, actor, kind, run, detail)| {
            Ok(Event {
                id: id as u64,
                time_ms,
                actor,
                kind: EventKind::parse(&kind).ok_or_else(|| {
                    StoreError::Schema(format!("events.kind of event {id}: {kind:?}"))
                })?,
                run: run.map(|r| r as u64),
                detail,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_listed_newest_first_by_filter() {
        let conn = crate::store::migrations::memory();
        let ana = Actor::token("ana");
        log(&conn, &Actor::cli(), EventKind::User, None, "added ana", 1).unwrap();
        log(&conn, &ana, EventKind::Token, None, &"é".repeat(400), 2).unwrap();
        let all = list(
            &conn,
            &EventFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            all.iter().map(|e| e.kind).collect::<Vec<_>>(),
            [EventKind::Token, EventKind::User]
        );
        assert_eq!(all[0].detail.len(), MAX_DETAIL);
        let by_ana = EventFilter {
            actor: Some("ana".to_owned()),
            limit: 10,
            ..Default::default()
        };
        assert_eq!(list(&conn, &by_ana).unwrap().len(), 1);
        let users = EventFilter {
            kind: Some(EventKind::User),
            limit: 10,
            ..Default::default()
        };
        assert_eq!(list(&conn, &users).unwrap()[0].detail, "added ana");
        let run = EventFilter {
            run: Some(3),
            limit: 10,
            ..Default::default()
        };
        assert!(list(&conn, &run).unwrap().is_empty());
    }

    #[test]
    fn worker_releases_are_their_own_kind() {
        let conn = crate::store::migrations::memory();
        let cli = Actor::cli();
        let release = "worker release 0.2.0 for x86_64-unknown-linux-gnu required";
        log(&conn, &cli, EventKind::WorkerRelease, None, release, 1).unwrap();
        log(
            &conn,
            &cli,
            EventKind::Engine,
            None,
            "engine 'a' sha256 00",
            2,
        )
        .unwrap();
        let stored: String = conn
            .query_row("SELECT kind FROM events WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, "worker_release");
        let of = |kind| {
            let filter = EventFilter {
                kind: Some(kind),
                limit: 10,
                ..Default::default()
            };
            list(&conn, &filter).unwrap()
        };
        let releases = of(EventKind::WorkerRelease);
        assert_eq!(releases.len(), 1);
        assert_eq!(releases[0].detail, release);
        let engines = of(EventKind::Engine);
        assert_eq!(engines.len(), 1);
        assert_eq!(engines[0].kind, EventKind::Engine);
    }
}
