//! What the simulated workers count: per call, the latency of those that
//! end inside the measured window and how many started inside it; results
//! accepted; errors by call and code.

use std::collections::BTreeMap;
use std::time::Instant;

/// The calls the bench times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Register,
    RequestWork,
    Heartbeat,
    SubmitResult,
}

impl Call {
    pub const ALL: [Call; 4] = [
        Call::Register,
        Call::RequestWork,
        Call::Heartbeat,
        Call::SubmitResult,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Call::Register => "Register",
            Call::RequestWork => "RequestWork",
            Call::Heartbeat => "Heartbeat",
            Call::SubmitResult => "SubmitResult",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The measured stretch of time; the rates are counts inside it over its length.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub from: Instant,
    pub to: Instant,
}

impl Window {
    pub fn contains(&self, t: Instant) -> bool {
        self.from <= t && t <= self.to
    }

    pub fn secs(&self) -> f64 {
        (self.to - self.from).as_secs_f64()
    }
}

/// One worker's counts, or their sum.
#[derive(Debug, Default)]
pub struct Tally {
    /// Latency in µs of each call that ended inside the window, by [`Call`].
    latency: [Vec<u32>; 4],
    /// Calls started inside the window, by [`Call`].
    started: [u64; 4],
    /// Pairs of every accepted submission, inside the window or not: what
    /// the run's totals must equal.
    pub accepted_pairs: u64,
    /// Accepted submissions that ended inside the window.
    pub window_results: u64,
    /// Their pairs.
    pub window_pairs: u64,
    /// Leases a heartbeat said were no longer active (then given up).
    pub lost_leases: u64,
    /// Failed calls by call and status code, and submissions answered with
    /// another status than accepted, by that status.
    pub errors: BTreeMap<String, u64>,
    /// The message of the first submission refused as invalid.
    pub first_refusal: Option<String>,
    /// Submissions refused for load (`RESOURCE_EXHAUSTED`, then submitted
    /// again), and those of them that started inside the window.
    pub load_refusals: u64,
    pub window_load_refusals: u64,
}

impl Tally {
    /// A call of kind `call` that started at `started` has just answered;
    /// whether it ended inside the window.
    pub fn answered(&mut self, window: &Window, call: Call, started: Instant) -> bool {
        let now = Instant::now();
        if window.contains(started) {
            self.started[call.index()] += 1;
        }
        let inside = window.contains(now);
        if inside {
            let micros = (now - started).as_micros().min(u128::from(u32::MAX)) as u32;
            self.latency[call.index()].push(micros);
        }
        inside
    }

    /// A call of kind `call` that started at `started` failed with `code`.
    pub fn failed(&mut self, window: &Window, call: Call, started: Instant, code: tonic::Code) {
        if window.contains(started) {
            self.started[call.index()] += 1;
        }
        self.count(format!("{} {code:?}", call.name()));
    }

    /// A submission that started at `started` was refused for load.
    pub fn refused_for_load(&mut self, window: &Window, started: Instant) {
        self.load_refusals += 1;
        if window.contains(started) {
            self.window_load_refusals += 1;
        }
    }

    /// One more of `what` among the errors.
    pub fn count(&mut self, what: String) {
        *self.errors.entry(what).or_default() += 1;
    }

    /// A submission of `pairs` was accepted; `inside`: it ended inside the window.
    pub fn accepted(&mut self, pairs: u64, inside: bool) {
        self.accepted_pairs += pairs;
        if inside {
            self.window_results += 1;
            self.window_pairs += pairs;
        }
    }

    pub fn add(&mut self, other: Tally) {
        for i in 0..Call::ALL.len() {
            self.latency[i].extend(&other.latency[i]);
            self.started[i] += other.started[i];
        }
        self.accepted_pairs += other.accepted_pairs;
        self.window_results += other.window_results;
        self.window_pairs += other.window_pairs;
        self.lost_leases += other.lost_leases;
        self.load_refusals += other.load_refusals;
        self.window_load_refusals += other.window_load_refusals;
        if self.first_refusal.is_none() {
            self.first_refusal = other.first_refusal;
        }
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
    }

    /// Calls of kind `call` that started inside the window.
    pub fn started(&self, call: Call) -> u64 {
        self.started[call.index()]
    }

    /// Latencies in µs of the calls of kind `call` that ended inside the
    /// window, sorted (after [`Tally::sort`]).
    pub fn latency(&self, call: Call) -> &[u32] {
        &self.latency[call.index()]
    }

    pub fn sort(&mut self) {
        for l in &mut self.latency {
            l.sort_unstable();
        }
    }

    /// Whether any submission was refused as invalid (a bench whose results
    /// do not pass the checks measures nothing).
    pub fn results_refused(&self) -> bool {
        self.errors
            .keys()
            .any(|k| k.starts_with("SubmitResult InvalidArgument"))
    }
}

/// The `p` quantile (0..=1) of `sorted` µs, in ms.
pub fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}
