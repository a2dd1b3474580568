//! The check lane: where results' games are replayed, apart from the calls
//! that keep workers alive.
//!
//! A result's check (decoding its games, replaying them, compressing them)
//! costs milliseconds of CPU; a heartbeat costs microseconds. Both used to
//! share the runtime's threads and tokio's blocking pool, so a burst of
//! results made every heartbeat wait, leases lapsed and played games were
//! thrown away. Here:
//!
//! * **Admission before work.** At most [`CheckConfig::admitted`] results
//!   are admitted at once (decoding, queued for a check, being checked, or
//!   waiting for the writer). A result that finds no room is refused before
//!   its message is read ([`CheckLane::try_admit`]), with a delay after
//!   which to try again, which grows with the share of submissions refused;
//!   the worker keeps its lease alive meanwhile. The
//!   results in the coordinator's memory are thus bounded by `admitted` ×
//!   the largest message it decodes, whatever the offered load.
//! * **Threads of their own, below the rest.** Checks run on
//!   [`CheckConfig::threads`] threads that lower their own scheduling
//!   priority (`nice` [`CHECK_NICE`]): they use every idle cycle, and the
//!   runtime's threads (heartbeats, leases, reads) and the store's writer
//!   take the CPU from them whenever they need it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::result_readers::ResultReaders;
use crate::store::StoreError;

/// The nice value check threads give themselves (0 is the default, 19 the
/// lowest priority): at 10 a busy check thread gets about a tenth of a core
/// that a runtime thread also wants.
pub const CHECK_NICE: i32 = 10;

/// The longest a lease's result should take to check on one check thread:
/// leases sized by time are capped to the pairs that fit
/// ([`CheckLane::pairs_within_budget`]). With [`CheckConfig::admitted_per_thread`]
/// results admitted per thread, an admitted result is then written within a
/// few seconds, far inside a lease's time to live, so a result the
/// coordinator took is never thrown away because checking it took too long.
pub const CHECK_BUDGET: Duration = Duration::from_secs(1);

/// Shortest and longest delay a refused result is told to wait. The worker
/// keeps its lease alive with heartbeats however long it waits.
const MIN_PUSHBACK: Duration = Duration::from_millis(200);
const MAX_PUSHBACK: Duration = Duration::from_secs(120);

/// The factor by which each refusal lengthens the delay told to refused
/// results, and each admission shortens it ([`Inner::delay_us`]).
const DELAY_STEP: f64 = 1.001;

/// How many checks run at once and how many results may be admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckConfig {
    /// Threads that check results; 0: one per core.
    pub threads: usize,
    /// Results admitted at once, per check thread (in flight or queued).
    pub admitted_per_thread: usize,
}

impl Default for CheckConfig {
    /// One thread per core, sixteen results admitted per thread: enough to
    /// keep every thread busy while others decode or wait for the writer,
    /// and to take a fleet's small results in bursts without refusing them.
    fn default() -> Self {
        CheckConfig {
            threads: 0,
            admitted_per_thread: 16,
        }
    }
}

impl CheckConfig {
    /// The check threads: [`CheckConfig::threads`], or one per core.
    pub fn thread_count(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// Results admitted at once (at least 1).
    pub fn admitted(&self) -> usize {
        (self.thread_count() * self.admitted_per_thread).max(1)
    }
}

/// A result's place in the lane: while it is held, the result counts
/// against the bound. Dropped when the submission is answered.
#[derive(Debug)]
pub struct Admission(#[allow(dead_code)] OwnedSemaphorePermit);

/// The lane is full: try again after `retry_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    pub retry_after: Duration,
}

type Job = Box<dyn FnOnce() + Send>;

/// The check threads and the admission bound; cheap to clone.
#[derive(Debug, Clone)]
pub struct CheckLane {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    admitted: Arc<Semaphore>,
    capacity: usize,
    threads: usize,
    jobs: Mutex<mpsc::Sender<Job>>,
    /// A check's recent mean duration, µs (exponentially weighted).
    mean_check_us: AtomicU64,
    /// A checked ply's recent mean cost, ns (exponentially weighted).
    mean_ply_ns: AtomicU64,
    /// Results refused for load since the start.
    refused: AtomicU64,
    /// The threads that serve admitted results, their decoding included.
    readers: ResultReaders,
    /// The delay told to refused results before its spread, µs: each
    /// refusal multiplies it by [`DELAY_STEP`] and each admission divides
    /// it, within [`MIN_PUSHBACK`]..[`MAX_PUSHBACK`]. It grows while
    /// refusals outnumber admissions and settles where the waiting workers
    /// come back about as often as places free, however many wait (the
    /// resubmission rate is their number over the delay).
    delay_us: AtomicU64,
}

impl CheckLane {
    /// Starts the lane's threads.
    pub fn new(config: CheckConfig) -> CheckLane {
        let threads = config.thread_count();
        let capacity = config.admitted();
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            let rx = Arc::clone(&rx);
            let spawned = std::thread::Builder::new()
                .name(format!("xq-check-{i}"))
                .spawn(move || serve(&rx));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a check thread");
            }
        }
        CheckLane {
            inner: Arc::new(Inner {
                admitted: Arc::new(Semaphore::new(capacity)),
                capacity,
                threads,
                jobs: Mutex::new(tx),
                mean_check_us: AtomicU64::new(10_000),
                mean_ply_ns: AtomicU64::new(INITIAL_PLY_NS),
                refused: AtomicU64::new(0),
                readers: ResultReaders::new(threads),
                delay_us: AtomicU64::new(MIN_PUSHBACK.as_micros() as u64),
            }),
        }
    }

    /// A place for one more result, or how long to wait for one.
    pub fn try_admit(&self) -> Result<Admission, Busy> {
        match Arc::clone(&self.inner.admitted).try_acquire_owned() {
            Ok(permit) => {
                scale_delay(&self.inner.delay_us, 1.0 / DELAY_STEP);
                Ok(Admission(permit))
            }
            Err(_) => {
                scale_delay(&self.inner.delay_us, DELAY_STEP);
                self.inner.refused.fetch_add(1, Ordering::Relaxed);
                Err(Busy {
                    retry_after: self.pushback(),
                })
            }
        }
    }

    /// A place for one more result, once there is one (callers in this
    /// process, which wait instead of being refused).
    pub async fn admit(&self) -> Admission {
        let permit = Arc::clone(&self.inner.admitted)
            .acquire_owned()
            .await
            .expect("the lane's semaphore is never closed");
        Admission(permit)
    }

    /// The threads that serve admitted results ([`ResultReaders`]).
    pub fn readers(&self) -> &ResultReaders {
        &self.inner.readers
    }

    /// Results admitted now (decoding, checking or being written).
    pub fn in_flight(&self) -> usize {
        self.inner.capacity - self.inner.admitted.available_permits()
    }

    /// The admission bound.
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// Results refused for load since the start.
    pub fn refused(&self) -> u64 {
        self.inner.refused.load(Ordering::Relaxed)
    }

    /// The delay told to a refused result: the longer of the time the
    /// admitted results take to drain at the recent pace and the delay the
    /// refusals and admissions have set ([`Inner::delay_us`]), within
    /// [`MIN_PUSHBACK`]..[`MAX_PUSHBACK`], spread by ±50 % so that refused
    /// workers do not come back together.
    fn pushback(&self) -> Duration {
        let mean = Duration::from_micros(self.inner.mean_check_us.load(Ordering::Relaxed));
        let drain = mean * self.inner.capacity as u32 / self.inner.threads.max(1) as u32;
        let delay = Duration::from_micros(self.inner.delay_us.load(Ordering::Relaxed));
        let spread: f64 = 0.5 + rand::random::<f64>();
        drain
            .max(delay)
            .clamp(MIN_PUSHBACK, MAX_PUSHBACK)
            .mul_f64(spread)
            .min(MAX_PUSHBACK)
    }

    /// The most pairs of `plies_per_pair` plies whose result checks within
    /// [`CHECK_BUDGET`] at the recent cost per ply (at least 1).
    pub fn pairs_within_budget(&self, plies_per_pair: u64) -> u32 {
        let ply_ns = self.inner.mean_ply_ns.load(Ordering::Relaxed).max(1);
        let pair_ns = u128::from(ply_ns * plies_per_pair.max(1));
        (CHECK_BUDGET.as_nanos() / pair_ns).clamp(1, u128::from(u32::MAX)) as u32
    }

    /// Runs `check` of a result of `plies` plies on a check thread.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        plies: u64,
        check: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let inner = Arc::clone(&self.inner);
        let job: Job = Box::new(move || {
            let started = Instant::now();
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
            let took = started.elapsed();
            let micros = took.as_micros().min(u128::from(u64::MAX)) as u64;
            smooth(&inner.mean_check_us, micros);
            if plies > 0 {
                let per_ply = took.as_nanos() / u128::from(plies);
                smooth(&inner.mean_ply_ns, per_ply.min(u128::from(u64::MAX)) as u64);
            }
            let _ = tx.send(answer);
        });
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .map_err(|_| StoreError::Join("the check threads have stopped".to_owned()))?;
        rx.await
            .map_err(|_| StoreError::Join("a check thread dropped a check".to_owned()))?
            .map_err(|_| StoreError::Join("the game check panicked".to_owned()))
    }
}

/// The cost per ply assumed before any result was checked, ns: about what a
/// replay under the Chinese rules costs on a slow core.
const INITIAL_PLY_NS: u64 = 2_000;

/// Multiplies the delay `delay_us` by `factor`, within
/// [`MIN_PUSHBACK`]..[`MAX_PUSHBACK`]. Concurrent steps may lose one
/// another; the delay still follows the balance of refusals and admissions.
fn scale_delay(delay_us: &AtomicU64, factor: f64) {
    let (lo, hi) = (
        MIN_PUSHBACK.as_micros() as f64,
        MAX_PUSHBACK.as_micros() as f64,
    );
    let old = delay_us.load(Ordering::Relaxed) as f64;
    delay_us.store((old * factor).clamp(lo, hi) as u64, Ordering::Relaxed);
}

/// Moves the running mean `mean` an eighth of the way to `sample`.
fn smooth(mean: &AtomicU64, sample: u64) {
    let old = mean.load(Ordering::Relaxed);
    mean.store(old - old / 8 + sample / 8, Ordering::Relaxed);
    // Concurrent updates may lose one another's step; the mean stays a mean.
}

/// Lowers the calling thread to [`CHECK_NICE`]; `who` names it in the
/// warning if it cannot.
pub(super) fn lower_priority(who: &str) {
    if let Err(e) = rustix::process::setpriority_process(None, CHECK_NICE) {
        tracing::warn!(error = %e, "{who} could not lower its priority");
    }
}

/// A check thread: lowers its priority, then runs jobs until the lane is gone.
fn serve(jobs: &Mutex<mpsc::Receiver<Job>>) {
    lower_priority("a check thread");
    loop {
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_capped_to_the_pairs_checked_within_the_budget() {
        let lane = CheckLane::new(CheckConfig::default());
        // 2 µs a ply, 400 plies a pair: 800 µs a pair, 1,250 pairs in 1 s.
        assert_eq!(lane.pairs_within_budget(400), 1_250);
        lane.inner
            .mean_ply_ns
            .store(1_000_000_000, Ordering::Relaxed);
        assert_eq!(lane.pairs_within_budget(400), 1);
    }

    #[tokio::test]
    async fn a_full_lane_refuses_with_a_delay_and_admits_again_once_a_place_frees() {
        let lane = CheckLane::new(CheckConfig {
            threads: 1,
            admitted_per_thread: 2,
        });
        let a = lane.try_admit().unwrap();
        let _b = lane.try_admit().unwrap();
        let busy = lane.try_admit().unwrap_err();
        assert!(busy.retry_after >= MIN_PUSHBACK / 2 && busy.retry_after <= MAX_PUSHBACK);
        assert_eq!((lane.in_flight(), lane.refused()), (2, 1));
        drop(a);
        let _c = lane.try_admit().unwrap();
        assert_eq!(lane.run(0, || 6 * 7).await.unwrap(), 42);
    }

    #[test]
    fn the_delay_grows_while_refusals_outnumber_admissions_and_falls_back() {
        let lane = CheckLane::new(CheckConfig {
            threads: 1,
            admitted_per_thread: 1,
        });
        lane.inner.mean_check_us.store(1, Ordering::Relaxed);
        let delay = |lane: &CheckLane| lane.inner.delay_us.load(Ordering::Relaxed);
        let held = lane.try_admit().unwrap();
        let start = delay(&lane);
        // Two thousand refusals to a place held: about e² longer.
        for _ in 0..2_000 {
            lane.try_admit().unwrap_err();
        }
        let grown = delay(&lane);
        assert!(
            grown > start * 6 && grown < start * 9,
            "{start} -> {grown} µs"
        );
        let busy = lane.try_admit().unwrap_err();
        let told = busy.retry_after.as_micros() as u64;
        assert!(
            told >= grown / 2 && told <= grown * 3 / 2 + 2_000,
            "{told} of {grown} µs"
        );
        // As many admissions as refusals bring it back.
        drop(held);
        for _ in 0..2_001 {
            drop(lane.try_admit().unwrap());
        }
        assert!(delay(&lane) <= start + start / 100, "{} µs", delay(&lane));
        // Never past the longest delay.
        let held = lane.try_admit().unwrap();
        for _ in 0..20_000 {
            assert!(lane.try_admit().unwrap_err().retry_after <= MAX_PUSHBACK);
        }
        assert_eq!(delay(&lane), MAX_PUSHBACK.as_micros() as u64);
        drop(held);
    }

    #[tokio::test]
    async fn a_check_that_panics_is_an_error_and_the_thread_goes_on() {
        let lane = CheckLane::new(CheckConfig {
            threads: 1,
            admitted_per_thread: 1,
        });
        let failed = lane.run(0, || -> u32 { panic!("bad game") }).await;
        assert!(matches!(failed, Err(StoreError::Join(_))), "{failed:?}");
        assert_eq!(lane.run(0, || 1).await.unwrap(), 1);
    }
}
