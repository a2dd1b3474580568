//! Heartbeats kept in memory and written in batches.
//!
//! A fleet's heartbeats are most of its calls (a worker sends one every
//! sixth of a lease's time to live, so 100,000 workers send about 10,000 a
//! second). Each used to be a writer transaction (touch the worker, expire
//! overdue leases, read the lease, extend it), queued behind every other
//! write. Now a heartbeat is recorded here ([`Beats::record`]), answered
//! from a read of the lease on a read-only connection, and its extension
//! written by the next [`Beats::settle`], which the writer runs every
//! [`SETTLE_EVERY`] and at the start of every call that expires or finishes
//! leases.
//!
//! # Invariant
//!
//! A lease is expired or finished only at a time `now` that
//! [`Beats::settle`] read under the book's lock after taking the beats
//! recorded until then, and it writes them before the caller expires or
//! finishes anything; a beat recorded after that has arrived at or after
//! `now` ([`Beats::record`] reads the clock under the same lock). So a
//! heartbeat that arrives by its lease's deadline always extends it,
//! however long its write waits, and one that arrives later never revives
//! it: a beat is written only if the stored deadline is at least
//! [`Beat::since_ms`], the arrival of the first of the beats that vouch for
//! it.
//!
//! Callers settle before they open their own savepoint, so the beats are
//! written in the batch's transaction and a call that fails and rolls back
//! its own changes does not take them along. A beat lost with a failed
//! batch (SQLite rolled the whole transaction back) costs nothing but the
//! worker's next heartbeat: the stored deadline is at most one heartbeat
//! behind, far inside a lease's time to live.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, params};

use super::{StoreError, now_ms};

/// How often the writer writes the beats recorded meanwhile, in ms: often
/// enough that each write is short (a tenth of a second's heartbeats), and
/// reports and pages are never behind by more.
pub const SETTLE_EVERY_MS: i64 = 100;

/// A lease's latest heartbeat from one worker, not yet written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Beat {
    pairs_done: u32,
    /// The deadline it extends the lease to (ms since the epoch).
    deadline_ms: i64,
    /// When it arrived (ms since the epoch).
    arrived_ms: i64,
    /// Written only if the stored deadline is at least this: its own
    /// arrival, or that of an earlier beat of the lease, confirmed and still
    /// unwritten, whose deadline it arrived within.
    since_ms: i64,
    /// The lease's read confirmed it was active and in time.
    confirmed: bool,
}

#[derive(Debug, Default)]
struct Book {
    /// By lease and worker: a beat of another worker's lease (refused once
    /// its read shows whose it is) never displaces the owner's.
    leases: HashMap<(u64, u64), Beat>,
    /// Workers that called, with when, for `last_seen_ms`.
    workers: HashMap<u64, i64>,
}

/// The heartbeats recorded and not yet written; one per writer, shared by
/// every door's calls.
#[derive(Debug, Default)]
pub struct Beats {
    book: Mutex<Book>,
    /// When the last settle took the book (ms since the epoch).
    settled_ms: AtomicI64,
}

/// A time (ms since the epoch) that [`Beats::settle`] read after writing
/// the beats recorded before it: the only time leases are expired or
/// finished at ([`super::leases::expire_overdue`], [`super::leases::finish`]
/// take no other), which keeps [the invariant](self#invariant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Settled(i64);

impl Settled {
    /// The time, ms since the epoch.
    pub fn ms(self) -> i64 {
        self.0
    }
}

/// What [`Beats::record`] took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// When the heartbeat arrived (ms since the epoch).
    pub arrived_ms: i64,
    /// For each lease in the order given: whether an earlier confirmed beat
    /// already vouches that the lease is in time at this arrival.
    pub vouched: Vec<bool>,
}

impl Beats {
    /// Records worker `worker_id`'s heartbeat for its leases
    /// `(lease id, pairs done)`, each to be extended to `ttl_ms` after its
    /// arrival. Until [`Beats::confirm`] the beats are only written if their
    /// lease is in time at their arrival.
    pub fn record(&self, worker_id: u64, progress: &[(u64, u32)], ttl_ms: i64) -> Recorded {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        let now = now_ms();
        book.workers.insert(worker_id, now);
        let vouched = progress
            .iter()
            .map(|&(lease_id, pairs_done)| {
                let earlier = book
                    .leases
                    .get(&(lease_id, worker_id))
                    .filter(|b| b.confirmed && b.deadline_ms >= now)
                    .map(|b| b.since_ms);
                let since_ms = earlier.unwrap_or(now);
                let beat = Beat {
                    pairs_done,
                    deadline_ms: now.saturating_add(ttl_ms),
                    arrived_ms: now,
                    since_ms,
                    confirmed: earlier.is_some(),
                };
                book.leases.insert((lease_id, worker_id), beat);
                earlier.is_some()
            })
            .collect();
        Recorded {
            arrived_ms: now,
            vouched,
        }
    }

    /// Marks worker `worker_id`'s beat of lease `lease_id` that arrived at
    /// `arrived_ms` as confirmed by a read (the lease was the worker's,
    /// active and in time), if it is still unwritten.
    pub fn confirm(&self, worker_id: u64, lease_id: u64, arrived_ms: i64) {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(beat) = book.leases.get_mut(&(lease_id, worker_id))
            && beat.arrived_ms == arrived_ms
        {
            beat.confirmed = true;
        }
    }

    /// Drops worker `worker_id`'s beat of lease `lease_id` that arrived at
    /// `arrived_ms`, if it is still unwritten (the read found the lease not
    /// the worker's, not active, or not in time).
    pub fn withdraw(&self, worker_id: u64, lease_id: u64, arrived_ms: i64) {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (lease_id, worker_id);
        if book
            .leases
            .get(&key)
            .is_some_and(|b| b.arrived_ms == arrived_ms)
        {
            book.leases.remove(&key);
        }
    }

    /// Writes every beat recorded so far and returns the time from which
    /// the caller may expire or finish leases (see [the
    /// invariant](self#invariant)). Run on the writer's connection before
    /// the caller's savepoint, so that the caller's rollback keeps them.
    pub fn settle(&self, conn: &Connection) -> Result<Settled, StoreError> {
        let (now, book) = {
            let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
            let now = now_ms();
            self.settled_ms.fetch_max(now, Ordering::Relaxed);
            (now, std::mem::take(&mut *book))
        };
        if !book.leases.is_empty() {
            let mut extend = conn.prepare_cached(
                "UPDATE leases SET pairs_done = MIN(?2, pairs), deadline_ms = MAX(deadline_ms, ?3)
                 WHERE id = ?1 AND worker_id = ?4 AND state = 'active' AND deadline_ms >= ?5",
            )?;
            for ((lease_id, worker_id), b) in &book.leases {
                extend.execute(params![
                    *lease_id as i64,
                    b.pairs_done,
                    b.deadline_ms,
                    *worker_id as i64,
                    b.since_ms
                ])?;
            }
        }
        if !book.workers.is_empty() {
            let mut touch = conn.prepare_cached(
                "UPDATE workers SET last_seen_ms = MAX(last_seen_ms, ?2) WHERE id = ?1",
            )?;
            for (worker_id, seen) in &book.workers {
                touch.execute(params![*worker_id as i64, seen])?;
            }
        }
        Ok(Settled(now))
    }

    /// Whether a settle is due at `now` (ms since the epoch): true for one
    /// caller at a time once [`SETTLE_EVERY_MS`] passed since the last.
    pub fn due(&self, now: i64) -> bool {
        let last = self.settled_ms.load(Ordering::Relaxed);
        now - last >= SETTLE_EVERY_MS
            && self
                .settled_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::leases;

    /// A database with worker 1's active lease 1 of 4 pairs, due in
    /// `due_ms` (negative: overdue).
    fn one_lease(due_ms: i64) -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::store::migrations::migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, spec, kind, priority, state, created_ms, updated_ms)
                 VALUES (1, '{}', 'games', 0, 'active', 0, 0);
             INSERT INTO workers (id, name, threads, version, signature, registered_ms,
                                  last_seen_ms) VALUES (1, 'w', 1, '0', 0, 0, 0);",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO leases (id, run_id, worker_id, state, opening_offset, pairs, created_ms,
                                 deadline_ms) VALUES (1, 1, 1, 'active', 0, 4, 0, ?1)",
            [now_ms() + due_ms],
        )
        .unwrap();
        conn
    }

    fn lease(conn: &Connection) -> crate::runs::lease::Lease {
        leases::load(conn, 1).unwrap().unwrap()
    }

    fn pairs_done(conn: &Connection) -> u32 {
        conn.query_row("SELECT pairs_done FROM leases WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap()
    }

    #[test]
    fn a_beat_in_time_outlives_its_deadline_unwritten_and_is_written_before_any_expiry() {
        let conn = one_lease(40);
        let beats = Beats::default();
        let recorded = beats.record(1, &[(1, 3)], 60_000);
        assert_eq!(recorded.vouched, [false]);
        beats.confirm(1, 1, recorded.arrived_ms);
        std::thread::sleep(Duration::from_millis(80));
        let now = beats.settle(&conn).unwrap();
        assert_eq!(leases::expire_overdue(&conn, now).unwrap(), 0);
        let l = lease(&conn);
        assert_eq!(l.deadline_ms, recorded.arrived_ms + 60_000);
        assert_eq!(pairs_done(&conn), 3);
        let seen: i64 = conn
            .query_row("SELECT last_seen_ms FROM workers WHERE id = 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(seen, recorded.arrived_ms);
    }

    #[test]
    fn a_late_beat_never_revives_its_lease() {
        let conn = one_lease(-5);
        let beats = Beats::default();
        beats.record(1, &[(1, 2)], 60_000);
        let now = beats.settle(&conn).unwrap();
        assert_eq!(leases::expire_overdue(&conn, now).unwrap(), 1);
        assert_eq!(lease(&conn).state, crate::runs::LeaseState::Expired);
    }

    #[test]
    fn a_confirmed_beat_vouches_for_the_next_and_another_workers_beat_changes_nothing() {
        let conn = one_lease(30);
        let beats = Beats::default();
        let first = beats.record(1, &[(1, 1)], 100);
        beats.confirm(1, 1, first.arrived_ms);
        std::thread::sleep(Duration::from_millis(60));
        // Past the stored deadline but within the first beat's.
        let second = beats.record(1, &[(1, 2)], 100);
        assert_eq!(second.vouched, [true]);
        // Another worker names the lease; its read refuses it, and it never
        // displaced the owner's beat.
        let stranger = beats.record(2, &[(1, 4)], 100_000);
        assert_eq!(stranger.vouched, [false]);
        beats.withdraw(2, 1, stranger.arrived_ms);
        let now = beats.settle(&conn).unwrap();
        assert_eq!(leases::expire_overdue(&conn, now).unwrap(), 0);
        assert_eq!(pairs_done(&conn), 2);
        assert_eq!(lease(&conn).deadline_ms, second.arrived_ms + 100);
    }

    #[test]
    fn a_withdrawn_beat_is_not_written_and_settles_are_due_one_at_a_time() {
        let conn = one_lease(60_000);
        let before = lease(&conn).deadline_ms;
        let beats = Beats::default();
        let r = beats.record(1, &[(1, 1)], 600_000);
        beats.withdraw(1, 1, r.arrived_ms);
        beats.settle(&conn).unwrap();
        assert_eq!(lease(&conn).deadline_ms, before);
        let later = now_ms() + SETTLE_EVERY_MS;
        assert!(beats.due(later));
        assert!(!beats.due(later));
    }
}
