//! The writer thread's batches: every call waiting in the queue (up to
//! [`MAX_BATCH`]) runs inside one transaction, which is committed once
//! before any of them is answered. Calls wait in one of two lanes
//! ([`Lane`]): a control call never waits behind more than [`MAX_BULK`]
//! results' writes, nor behind a batch that has run [`BULK_TIME`] before it
//! takes another.
//!
//! A call's own transaction is a savepoint inside the batch's (see
//! [`crate::store`]): it commits or rolls back alone, and the batch's
//! commit makes all of them durable at once. A page that several calls
//! change (a run's totals, the leases' index) is written to the WAL once per
//! batch instead of once per call, and with [`super::Durability::Full`] the
//! one commit is the one sync.
//!
//! SQLite may roll a whole transaction back after an error inside it
//! (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_BUSY`, `SQLITE_NOMEM`). The
//! thread sees that after each call (the connection is back in autocommit
//! mode): the calls of the batch that wrote until then are answered with
//! the error, and the rest of the batch runs in a new transaction. A failed
//! commit likewise fails every call of its part that wrote. A call that
//! wrote is never answered success for a change that is not on disk.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::instruments::StoreMetrics;

/// Work for the thread: runs a call and says whether it wrote, and how to
/// answer it once its batch is committed (with the commit's error, if any).
pub(super) type Job = Box<dyn FnOnce(&mut Connection) -> (bool, Deliver) + Send>;
pub(super) type Deliver = Box<dyn FnOnce(Option<&str>) + Send>;

/// Which queue a call waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Short calls that keep workers and pages going (leases, heartbeats,
    /// registrations, administration): served first.
    Control,
    /// Long writes (a result's games): at most [`MAX_BULK`] a batch, after
    /// every control call that is waiting.
    Bulk,
}

/// Most calls answered by one commit.
pub const MAX_BATCH: usize = 512;

/// Most bulk calls in one batch: a batch of results' writes takes a few
/// milliseconds, which is what a control call can wait behind them.
pub const MAX_BULK: usize = 32;

/// Longest a batch takes bulk calls: once it has run this long, it takes
/// only the control calls waiting and commits, so a control call that
/// arrives during results' writes is answered after at most about this,
/// one more write and the commit (writes of a 256-pair result take several
/// milliseconds, 32 of them a hundred).
pub const BULK_TIME: Duration = Duration::from_millis(10);

/// Most calls taken from the channel at a time (so that a steady stream of
/// arrivals cannot keep the thread from running what it took).
const MAX_DRAIN: usize = 4096;

/// The calls taken from the channel and not yet run, by lane.
#[derive(Default)]
struct Queues {
    control: VecDeque<Job>,
    bulk: VecDeque<Job>,
}

impl Queues {
    fn push(&mut self, (lane, job): (Lane, Job)) {
        match lane {
            Lane::Control => self.control.push_back(job),
            Lane::Bulk => self.bulk.push_back(job),
        }
    }

    /// Takes what is waiting in `rx` without blocking.
    fn drain(&mut self, rx: &mpsc::Receiver<(Lane, Job)>) {
        for _ in 0..MAX_DRAIN {
            match rx.try_recv() {
                Ok(next) => self.push(next),
                Err(_) => return,
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.control.is_empty() && self.bulk.is_empty()
    }

    /// The next call to run: a control call if one waits, else a bulk call
    /// while `bulk_left` allows.
    fn next(&mut self, bulk_left: &mut usize) -> Option<Job> {
        if let Some(job) = self.control.pop_front() {
            return Some(job);
        }
        if *bulk_left == 0 {
            return None;
        }
        let job = self.bulk.pop_front()?;
        *bulk_left -= 1;
        Some(job)
    }
}

/// Runs jobs from `rx` until every sender is gone: control calls in
/// arrival order before bulk calls, bulk calls in arrival order. With
/// `grouped`, each batch is one transaction (a writer's connection);
/// without, each call is on its own (a reader's).
pub(super) fn serve(
    mut conn: Connection,
    rx: mpsc::Receiver<(Lane, Job)>,
    grouped: bool,
    metrics: Arc<StoreMetrics>,
) {
    let mut queues = Queues::default();
    loop {
        queues.drain(&rx);
        if queues.is_empty() {
            match rx.recv() {
                Ok(next) => queues.push(next),
                Err(_) => return,
            }
        }
        let start = Instant::now();
        let mut batch = Batch::begin(&conn, grouped);
        let mut bulk_left = MAX_BULK;
        while batch.answers.len() < MAX_BATCH {
            queues.drain(&rx);
            if start.elapsed() >= BULK_TIME {
                bulk_left = 0;
            }
            let Some(job) = queues.next(&mut bulk_left) else {
                break;
            };
            batch.run(&mut conn, job);
        }
        let committed = Instant::now();
        batch.commit(&conn);
        metrics
            .sync_seconds
            .observe(committed.elapsed().as_secs_f64());
        if let Some(failed) = batch.writes_lost() {
            metrics.write_failed.store(failed, Ordering::Relaxed);
        }
        batch.answer();
        metrics.batch_seconds.observe(start.elapsed().as_secs_f64());
    }
}

/// The calls of one batch and the parts of it that failed.
struct Batch {
    /// Each call's answer, whether it wrote, and the part it ran in.
    answers: Vec<(bool, Deliver, usize)>,
    /// Per part (a new part starts when SQLite rolled the previous one
    /// back): why its writes are lost, if they are.
    lost: Vec<Option<String>>,
    /// A batch transaction is open.
    open: bool,
    grouped: bool,
}

impl Batch {
    fn begin(conn: &Connection, grouped: bool) -> Batch {
        Batch {
            answers: Vec::new(),
            lost: vec![None],
            open: grouped && begin(conn),
            grouped,
        }
    }

    fn run(&mut self, conn: &mut Connection, job: Job) {
        let (wrote, deliver) = job(conn);
        self.answers.push((wrote, deliver, self.lost.len() - 1));
        if self.open && conn.is_autocommit() {
            let why = "the database rolled the batch holding this change back after an error";
            *self.lost.last_mut().expect("one part at least") = Some(why.to_owned());
            self.lost.push(None);
            self.open = self.grouped && begin(conn);
        }
    }

    fn commit(&mut self, conn: &Connection) {
        if !self.open {
            return;
        }
        if let Err(e) = conn.execute_batch("COMMIT") {
            *self.lost.last_mut().expect("one part at least") = Some(e.to_string());
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
    }

    /// Whether a change of this batch was lost (a failed commit, or a part
    /// SQLite rolled back); `None` if no call wrote.
    fn writes_lost(&self) -> Option<bool> {
        let mut writes = self
            .answers
            .iter()
            .filter(|(wrote, _, _)| *wrote)
            .peekable();
        writes.peek()?;
        Some(writes.any(|&(_, _, part)| self.lost[part].is_some()))
    }

    fn answer(self) {
        for (wrote, deliver, part) in self.answers {
            deliver(self.lost[part].as_deref().filter(|_| wrote));
        }
    }
}

/// Opens a batch transaction, taking the write lock at once (so that no
/// other process's commit can invalidate the batch's reads before it
/// writes). `false` if it could not: the calls then run on their own.
fn begin(conn: &Connection) -> bool {
    match conn.execute_batch("BEGIN IMMEDIATE") {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, "cannot open a batch transaction; calls run one by one");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use rusqlite::Connection;

    use crate::store::{Store, StoreError, StoreOptions};

    struct TempFile(PathBuf);

    impl TempFile {
        fn new(tag: &str) -> TempFile {
            let path =
                std::env::temp_dir().join(format!("xq-batch-{tag}-{}.sqlite", std::process::id()));
            let _ = std::fs::remove_file(&path);
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm"] {
                let mut name = self.0.clone().into_os_string();
                name.push(suffix);
                let _ = std::fs::remove_file(name);
            }
        }
    }

    fn make_table(store: &Store) -> impl Future<Output = Result<(), StoreError>> + use<> {
        let store = store.clone();
        async move {
            store
                .call(|c| {
                    c.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")?;
                    Ok(())
                })
                .await
        }
    }

    /// Inserts row `k` with `bytes` bytes in the call's own savepoint; the
    /// first call of a test sleeps so that the later ones queue behind it
    /// and run in its batch.
    fn insert(
        store: &Store,
        k: i64,
        bytes: usize,
        fail_after: bool,
        wait: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + use<> {
        let store = store.clone();
        async move {
            store
                .call(move |c| {
                    std::thread::sleep(wait);
                    let tx = c.savepoint()?;
                    tx.execute(
                        "INSERT INTO t (k, v) VALUES (?1, zeroblob(?2))",
                        (k, bytes as i64),
                    )?;
                    if fail_after {
                        return Err(StoreError::invalid("k", "refused after the insert"));
                    }
                    tx.commit()?;
                    Ok(())
                })
                .await
        }
    }

    fn stored(path: &PathBuf) -> Vec<i64> {
        let conn = Connection::open(path).unwrap();
        let mut q = conn.prepare("SELECT k FROM t ORDER BY k").unwrap();
        q.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[tokio::test]
    async fn a_call_that_fails_rolls_back_alone_and_the_rest_of_its_batch_commits() {
        let file = TempFile::new("alone");
        let store = Store::open(&file.0).unwrap();
        make_table(&store).await.unwrap();
        let slow = insert(&store, 1, 10, false, Duration::from_millis(100));
        let refused = insert(&store, 2, 10, true, Duration::ZERO);
        let fine = insert(&store, 3, 10, false, Duration::ZERO);
        let (a, b, c) = tokio::join!(slow, refused, fine);
        assert!(a.is_ok() && c.is_ok(), "{a:?} {c:?}");
        assert!(matches!(b, Err(StoreError::Invalid(_))), "{b:?}");
        drop(store);
        assert_eq!(stored(&file.0), [1, 3]);
    }

    #[tokio::test]
    async fn on_a_full_disk_every_call_answered_success_is_stored_and_no_other() {
        let file = TempFile::new("full");
        let options = StoreOptions {
            max_pages: Some(120),
            ..StoreOptions::default()
        };
        let store = Store::open_with(&file.0, options).unwrap();
        make_table(&store).await.unwrap();
        let calls: Vec<_> = (0..40)
            .map(|k| {
                let wait = Duration::from_millis(if k == 0 { 100 } else { 0 });
                tokio::spawn(insert(&store, k, 20_000, false, wait))
            })
            .collect();
        let mut answers = Vec::new();
        for (k, call) in (0..).zip(calls) {
            answers.push((k, call.await.unwrap()));
        }
        let accepted: Vec<i64> = answers
            .iter()
            .filter(|(_, a)| a.is_ok())
            .map(|(k, _)| *k)
            .collect();
        assert!(
            answers.iter().any(|(_, a)| a.is_err()),
            "the disk never filled: {answers:?}"
        );
        assert!(!accepted.is_empty(), "nothing fit: {answers:?}");
        drop(store);
        assert_eq!(stored(&file.0), accepted);
    }

    /// A slow control call holds the writer while a control call and
    /// results' writes queue: the control call runs in its batch, the
    /// writes (past [`super::BULK_TIME`]) in the next, where another
    /// connection already sees the control call's row committed.
    #[tokio::test]
    async fn a_batch_past_its_bulk_time_commits_before_taking_results_writes() {
        let file = TempFile::new("bulk-time");
        let store = Store::open(&file.0).unwrap();
        make_table(&store).await.unwrap();
        let slow = tokio::spawn(insert(&store, 1, 10, false, Duration::from_millis(200)));
        tokio::time::sleep(Duration::from_millis(20)).await;
        let path = file.0.clone();
        let writes: Vec<_> = (10..20)
            .map(|k| {
                let (store, path) = (store.clone(), path.clone());
                tokio::spawn(async move {
                    store
                        .call_bulk(move |c| {
                            let other = Connection::open(&path)?;
                            let seen: i64 =
                                other.query_row("SELECT count(*) FROM t WHERE k = 2", [], |r| {
                                    r.get(0)
                                })?;
                            c.execute("INSERT INTO t (k, v) VALUES (?1, NULL)", [k])?;
                            Ok(seen)
                        })
                        .await
                })
            })
            .collect();
        let control = tokio::spawn(insert(&store, 2, 10, false, Duration::ZERO));
        slow.await.unwrap().unwrap();
        control.await.unwrap().unwrap();
        for w in writes {
            assert_eq!(
                w.await.unwrap().unwrap(),
                1,
                "a write ran before the control call's commit"
            );
        }
        drop(store);
        assert_eq!(
            stored(&file.0),
            [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
        );
    }

    #[test]
    fn a_batch_lost_its_writes_only_if_a_call_that_wrote_was_in_a_lost_part() {
        let batch = |calls: &[(bool, usize)], lost: Vec<Option<String>>| super::Batch {
            answers: calls
                .iter()
                .map(|&(wrote, part)| {
                    (
                        wrote,
                        Box::new(|_: Option<&str>| {}) as super::Deliver,
                        part,
                    )
                })
                .collect(),
            lost,
            open: false,
            grouped: true,
        };
        let gone = || Some("disk I/O error".to_owned());
        assert_eq!(batch(&[(false, 0)], vec![gone()]).writes_lost(), None);
        assert_eq!(
            batch(&[(true, 0), (false, 0)], vec![None]).writes_lost(),
            Some(false)
        );
        assert_eq!(
            batch(&[(false, 0), (true, 1)], vec![gone(), None]).writes_lost(),
            Some(false)
        );
        assert_eq!(
            batch(&[(true, 0), (true, 1)], vec![gone(), None]).writes_lost(),
            Some(true)
        );
    }
}
