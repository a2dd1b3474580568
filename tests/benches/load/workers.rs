//! The simulated workers: each registers under its own token and name, then
//! follows one of two patterns until the end of the bench.
//!
//! - [`Pattern::Loop`]: RequestWork → SubmitResult at once, back to back
//!   (a closed loop), or with a random 0.5–1.5 pauses between results.
//! - [`Pattern::Fleet`]: what a real worker does: RequestWork, heartbeats
//!   every `heartbeat_interval_ms` the server last answered (to Register,
//!   with the lease or to a heartbeat) while it
//!   "plays" the lease for a random 0.5–1.5 lease lengths, then
//!   SubmitResult.
//!
//! Every result carries the games of its lease's pairs, each pair a copy of
//! one real pair, sent as bytes built from the pair encoded once
//! ([`EncodedPair`]: the bytes a worker's client would encode, without the
//! cost of encoding them on the cores the coordinator runs on).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use tonic::Code;
use tonic::codegen::Bytes;
use tonic::codegen::http::uri::PathAndQuery;
use xq_proto::pb;
use xq_tests::cluster::{WorkerClient, register_request};

use xq_tests::bench_pair::{EncodedPair, PreEncoded};
use xq_tests::cluster::Authed;

use crate::tally::{Call, Tally, Window};

/// How each simulated worker behaves.
#[derive(Debug, Clone, Copy)]
pub enum Pattern {
    /// Results back to back, or `pause` (× 0.5–1.5) apart; the first call
    /// within one pause of the start.
    Loop { pause: Duration },
    /// Leases played for `lease` × 0.5–1.5 with heartbeats; the first call
    /// within one lease of the start.
    Fleet { lease: Duration },
}

/// What every worker shares.
#[derive(Debug)]
pub struct Plan {
    pub pattern: Pattern,
    /// Every worker makes its first call at a random time within one period
    /// (pause or lease) after this.
    pub start: Instant,
    pub window: Window,
    /// When the workers stop: calls in flight finish, leases being played
    /// are given up.
    pub end: Instant,
    /// One real pair's results, encoded.
    pub pair: EncodedPair,
    /// The run's pairs per lease: a fleet worker plays a lease of more
    /// pairs (sized by time) for proportionally longer.
    pub batch_pairs: u32,
}

/// Retry delay after a failed call.
const RETRY: Duration = Duration::from_millis(100);

/// One simulated worker from [`Plan::start`] to [`Plan::end`].
pub async fn worker(client: Authed, name: String, plan: Arc<Plan>) -> Tally {
    let mut rpc = WorkerClient::new(client.clone());
    let mut raw = tonic::client::Grpc::new(client);
    let mut tally = Tally::default();
    let period = match plan.pattern {
        Pattern::Loop { pause } => pause,
        Pattern::Fleet { lease } => lease,
    };
    sleep_until(plan.start + period.mul_f64(unit()), &plan).await;
    let Some((worker_id, mut heartbeat)) = register(&mut rpc, name, &plan, &mut tally).await else {
        return tally;
    };
    while Instant::now() < plan.end {
        let started = Instant::now();
        let lease = match rpc.request_work(pb::RequestWorkRequest { worker_id }).await {
            Ok(a) => {
                tally.answered(&plan.window, Call::RequestWork, started);
                a.into_inner()
            }
            Err(e) => {
                tally.failed(&plan.window, Call::RequestWork, started, e.code());
                sleep_until(Instant::now() + RETRY, &plan).await;
                continue;
            }
        };
        let Some(lease) = lease.lease else {
            let wait = Duration::from_millis(lease.retry_after_ms.max(50));
            sleep_until(Instant::now() + wait, &plan).await;
            continue;
        };
        told(&mut heartbeat, lease.heartbeat_interval_ms);
        let pairs = lease.work.as_ref().map_or(0, |w| w.pairs);
        let offset = lease
            .work
            .as_ref()
            .and_then(|w| w.openings.as_ref())
            .map_or(0, |o| o.offset);
        if let Pattern::Fleet { lease: batch } = plan.pattern {
            let length = batch.mul_f64(f64::from(pairs) / f64::from(plan.batch_pairs.max(1)));
            let played = play(
                &mut rpc,
                worker_id,
                &lease,
                length,
                &mut heartbeat,
                &plan,
                &mut tally,
            );
            if !played.await {
                continue;
            }
        }
        let request = plan.pair.request(worker_id, lease.lease_id, pairs, offset);
        submit(
            (&mut rpc, &mut raw),
            (worker_id, lease.lease_id, request),
            u64::from(pairs),
            &mut heartbeat,
            &plan,
            &mut tally,
        )
        .await;
        if let Pattern::Loop { pause } = plan.pattern
            && !pause.is_zero()
        {
            let wake = Instant::now() + pause.mul_f64(0.5 + unit());
            sleep_until(wake, &plan).await;
        }
    }
    tally
}

/// Registers until it succeeds or the bench ends: the worker id and the
/// heartbeat interval the server asks for.
async fn register(
    rpc: &mut WorkerClient,
    name: String,
    plan: &Plan,
    tally: &mut Tally,
) -> Option<(u64, Duration)> {
    while Instant::now() < plan.end {
        let started = Instant::now();
        let request = register_request(&name);
        match rpc.register(request).await {
            Ok(r) => {
                tally.answered(&plan.window, Call::Register, started);
                let r = r.into_inner();
                let heartbeat = Duration::from_millis(r.heartbeat_interval_ms.max(100));
                return Some((r.worker_id, heartbeat));
            }
            Err(e) => {
                tally.failed(&plan.window, Call::Register, started, e.code());
                sleep_until(Instant::now() + RETRY, plan).await;
            }
        }
    }
    None
}

/// "Plays" `lease` for `length` × 0.5–1.5, with a heartbeat every
/// `heartbeat` (as the last answer sets it); whether it was played to the end (not lost, not cut off by
/// the end of the bench).
async fn play(
    rpc: &mut WorkerClient,
    worker_id: u64,
    lease: &pb::Lease,
    length: Duration,
    heartbeat: &mut Duration,
    plan: &Plan,
    tally: &mut Tally,
) -> bool {
    let pairs = lease.work.as_ref().map_or(0, |w| w.pairs);
    let began = Instant::now();
    let playing = length.mul_f64(0.5 + unit());
    let done_at = began + playing;
    let mut beat_at = began + *heartbeat;
    while beat_at < done_at {
        if !sleep_until(beat_at, plan).await {
            return false;
        }
        let pairs_done =
            (f64::from(pairs) * (beat_at - began).as_secs_f64() / playing.as_secs_f64()) as u32;
        let done = pairs_done.min(pairs);
        if !beat(
            rpc,
            (worker_id, lease.lease_id, done),
            heartbeat,
            plan,
            tally,
        )
        .await
        {
            return false;
        }
        beat_at += *heartbeat;
    }
    sleep_until(done_at, plan).await
}

/// Submits until the answer is final, as the real client does: after a
/// refusal for load, waits the delay the coordinator asks for with a
/// heartbeat whenever one is due; after a lost answer (`UNAVAILABLE`,
/// `CANCELLED`), tries again at once. What the server counted is what is
/// tallied: an accepted first answer, or a `DUPLICATE` after a retry (an
/// earlier attempt was counted and its answer lost).
async fn submit(
    (rpc, raw): (&mut WorkerClient, &mut tonic::client::Grpc<Authed>),
    (worker_id, lease_id, request): (u64, u64, Bytes),
    pairs: u64,
    heartbeat: &mut Duration,
    plan: &Plan,
    tally: &mut Tally,
) {
    let mut retried = false;
    let mut last_beat = Instant::now();
    loop {
        let started = Instant::now();
        match submit_once(raw, request.clone()).await {
            Ok(a) => {
                let inside = tally.answered(&plan.window, Call::SubmitResult, started);
                match a.into_inner().status() {
                    pb::SubmitStatus::Accepted => tally.accepted(pairs, inside),
                    pb::SubmitStatus::Duplicate if retried => {
                        tally.count("SubmitResult DUPLICATE after a lost answer".to_owned());
                        tally.accepted(pairs, inside);
                    }
                    other => tally.count(format!("SubmitResult answered {other:?}")),
                }
                return;
            }
            Err(e) if e.code() == Code::ResourceExhausted => {
                tally.refused_for_load(&plan.window, started);
                let wait = xq_proto::connect::retry_pushback(&e).unwrap_or(RETRY);
                let until = Instant::now() + wait;
                while last_beat + *heartbeat < until {
                    tokio::time::sleep_until((last_beat + *heartbeat).into()).await;
                    let done = u32::try_from(pairs).unwrap_or(u32::MAX);
                    beat(rpc, (worker_id, lease_id, done), heartbeat, plan, tally).await;
                    last_beat = Instant::now();
                }
                tokio::time::sleep_until(until.into()).await;
            }
            Err(e) => {
                tally.failed(&plan.window, Call::SubmitResult, started, e.code());
                if e.code() == Code::InvalidArgument && tally.first_refusal.is_none() {
                    tally.first_refusal = Some(e.message().chars().take(300).collect());
                }
                if !matches!(e.code(), Code::Unavailable | Code::Cancelled) {
                    return;
                }
                tokio::time::sleep(RETRY).await;
            }
        }
        retried = true;
    }
}

/// One SubmitResult of a request already encoded.
async fn submit_once(
    raw: &mut tonic::client::Grpc<Authed>,
    request: Bytes,
) -> Result<tonic::Response<pb::SubmitResultResponse>, tonic::Status> {
    raw.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("not ready: {e}")))?;
    let path = PathAndQuery::from_static("/xq.cluster.v1.WorkerService/SubmitResult");
    let codec = PreEncoded::<pb::SubmitResultResponse>::default();
    raw.unary(tonic::Request::new(request), path, codec).await
}

/// A heartbeat for a lease `pairs_done` into its play (or played, its
/// result waiting to be taken), taking the interval the answer tells;
/// false, and the lease counted lost, if the coordinator says it is no
/// longer active.
async fn beat(
    rpc: &mut WorkerClient,
    (worker_id, lease_id, pairs_done): (u64, u64, u32),
    heartbeat: &mut Duration,
    plan: &Plan,
    tally: &mut Tally,
) -> bool {
    let request = pb::HeartbeatRequest {
        worker_id,
        leases: vec![pb::LeaseProgress {
            lease_id,
            pairs_done,
        }],
    };
    let started = Instant::now();
    match rpc.heartbeat(request).await {
        Ok(a) => {
            tally.answered(&plan.window, Call::Heartbeat, started);
            let a = a.into_inner();
            told(heartbeat, a.heartbeat_interval_ms);
            let active = a
                .leases
                .first()
                .is_some_and(|l| l.state() == pb::LeaseState::Active);
            if !active {
                tally.lost_leases += 1;
            }
            active
        }
        Err(e) => {
            tally.failed(&plan.window, Call::Heartbeat, started, e.code());
            true
        }
    }
}

/// Takes the heartbeat interval an answer told, in ms (0: none).
fn told(heartbeat: &mut Duration, ms: u64) {
    if ms > 0 {
        *heartbeat = Duration::from_millis(ms.max(100));
    }
}

/// A random number in [0, 1) (the thread's generator is not held across an await).
fn unit() -> f64 {
    rand::rng().random()
}

/// Sleeps until `at` or the end of the bench, whichever is first; whether
/// `at` came first.
async fn sleep_until(at: Instant, plan: &Plan) -> bool {
    tokio::time::sleep_until(at.min(plan.end).into()).await;
    at < plan.end
}
