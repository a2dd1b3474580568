//! What the services' tests share: specs, workers and results.

pub(super) use std::collections::BTreeMap;
pub(super) use std::time::Duration;

pub(super) use xq_proto::engine_source::FailedBuild;
pub(super) use xq_proto::variant_stats::VariantStats;
pub(super) use xq_proto::{BatchOutcome, Limit, Score, WorkSpec};

pub(super) use super::{Core, Grant, NewWorker, SchedulerConfig, SubmitStatus};
pub(super) use crate::events::Actor;
pub(super) use crate::pace::PaceConfig;
pub(super) use crate::runs::{self, KindSpec};
pub(super) use crate::runs::{RunSpec, RunState, games_spec};
pub(super) use crate::store::Store;

/// Every game of `work` drawn, with its games.
pub(super) fn draws(work: &WorkSpec) -> BatchOutcome {
    xq_games::stand_in::adjudicated(work, |_| Score::Draw).unwrap()
}

/// Submits lease `g` of worker `w` with every game drawn: the answer.
pub(super) async fn submit_draws(s: &Core, w: u64, g: &Grant) -> SubmitStatus {
    let status = s.leases().submit(w, g.lease_id, draws(&g.work)).await;
    status.unwrap()
}

/// Registers a worker named `name` that measured `bench_nps`.
pub(super) async fn register(s: &Core, name: &str, bench_nps: Option<u64>) -> u64 {
    register_with(s, name, bench_nps, None, &[]).await
}

/// Registers a worker that reported `machine` and the build `tools`.
pub(super) async fn register_with(
    s: &Core,
    name: &str,
    bench_nps: Option<u64>,
    machine: Option<xq_proto::Machine>,
    tools: &[&str],
) -> u64 {
    s.workers()
        .register(NewWorker {
            name: name.to_owned(),
            threads: 1,
            version: "0".to_owned(),
            signature: 0,
            bench_nps,
            token_key: None,
            machine,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            target: String::new(),
            updated_from: None,
            machine_id: None,
        })
        .await
        .unwrap()
        .id()
}

/// Leases of `batch_pairs` each (no sizing by time), `ttl` long.
pub(super) async fn setup(ttl: Duration) -> (Core, u64) {
    setup_with(SchedulerConfig {
        lease_ttl: ttl,
        ..SchedulerConfig::default()
    })
    .await
}

/// A core timed by `config` but with leases of `batch_pairs` each (no
/// sizing by time), and one worker.
pub(super) async fn setup_with(config: SchedulerConfig) -> (Core, u64) {
    let config = SchedulerConfig {
        pace: PaceConfig {
            target: Duration::ZERO,
            ..config.pace
        },
        ..config
    };
    let core = Core::new(Store::open_in_memory().unwrap(), config);
    let worker = register(&core, "w", None).await;
    (core, worker)
}

pub(super) const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A games run whose dev engine is built from `repo` at [`COMMIT`] with make.
pub(super) fn source_spec(repo: &str) -> RunSpec {
    let mut spec = games_spec(40, 2);
    let KindSpec::Games(g) = &mut spec.kind else {
        unreachable!()
    };
    g.lineup.dev = Some(runs::EngineSel {
        name: "engine@main".to_owned(),
        options: BTreeMap::new(),
        registered: Some(xq_proto::EngineRef {
            name: "engine@main".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: Some(xq_proto::Signature::Bench(777)),
            protocol: xq_proto::Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            binaries: Vec::new(),
            source: Some(xq_proto::EngineSource {
                repo: repo.to_owned(),
                commit: COMMIT.to_owned(),
                git_ref: Some("main".to_owned()),
                build: "make engine".to_owned(),
                binary: "engine".to_owned(),
                needs: Vec::new(),
            }),
        }),
    });
    spec
}

pub(super) fn failed(commit: &str) -> FailedBuild {
    FailedBuild {
        commit: commit.to_owned(),
        reason: "build command exited with status 2".to_owned(),
        log_tail: "main.cpp:3:1: error: expected ';' before '}' token\n".to_owned(),
    }
}

/// The outcome of `work` with these pentanomial counts (index 2 = DD),
/// with its games; `p` sums to the lease's pairs.
pub(super) fn from_pentanomial(work: &WorkSpec, p: [u64; 5]) -> BatchOutcome {
    use Score::{Draw, Loss, Win};
    let kinds = [
        [Loss, Loss],
        [Loss, Draw],
        [Draw, Draw],
        [Draw, Win],
        [Win, Win],
    ];
    let scores: Vec<Score> = p
        .iter()
        .zip(kinds)
        .flat_map(|(&n, pair)| std::iter::repeat_n(pair, n as usize).flatten())
        .collect();
    assert_eq!(scores.len(), 2 * work.pairs as usize);
    xq_games::stand_in::adjudicated(work, |i| scores[i as usize]).unwrap()
}
