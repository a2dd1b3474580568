//! What a run's source engines (engines its workers build from a git
//! commit) ask of the coordinator: which workers may play it (those with
//! `git` and every tool a source needs), and when failed builds stop it.
//!
//! The coordinator never builds or runs a source itself: it resolves a
//! branch or tag to its commit when the run is created (`crate::git`), and
//! hands the commit to workers.

use std::collections::BTreeSet;

use xq_proto::EngineSource;
use xq_proto::engine_source::FailedBuild;

use super::RunSpec;

/// Failed builds on this many distinct workers stop a run, unless the
/// coordinator is told otherwise (`serve --build-failures-to-stop`).
pub const DEFAULT_FAILURES_TO_STOP: u32 = 3;

/// The sources of `spec`'s source engines, dev first; empty for a run
/// without one.
pub fn of(spec: &RunSpec) -> Vec<&EngineSource> {
    spec.kind
        .ops()
        .lineup()
        .map(super::Lineup::sources)
        .unwrap_or_default()
}

/// Every tool a worker needs to play `spec`: `git` and each source's tools
/// ([`EngineSource::tools`]); empty for a run without sources.
pub fn needs(spec: &RunSpec) -> BTreeSet<&str> {
    of(spec).into_iter().flat_map(EngineSource::tools).collect()
}

/// Whether a worker that reported `tools` may play `spec`: it has every tool
/// the run's sources need (always, for a run without sources). A worker that
/// builds nothing reports no tools, so it gets no source run.
pub fn admits(spec: &RunSpec, tools: &BTreeSet<String>) -> bool {
    needs(spec).into_iter().all(|t| tools.contains(t))
}

/// The flag a run stops with once builds failed on `workers` distinct
/// workers, the last of them `failed` (of `source`): one line naming the
/// source, the reason and the log's last line; the whole log tail stays
/// with the failure.
pub fn stop_flag(source: &EngineSource, failed: &FailedBuild, workers: u64) -> String {
    let last_line = failed
        .log_tail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut flag = format!(
        "the build of {} failed on {workers} worker{}: {}",
        source.label(),
        if workers == 1 { "" } else { "s" },
        failed.reason
    );
    if !last_line.is_empty() {
        flag += &format!(": {}", xq_proto::bounded(last_line.to_owned()));
    }
    flag
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use xq_proto::{EngineRef, Limit, OpeningSource, Protocol, Retention};

    use super::*;
    use crate::runs::{EngineSel, GamesSpec, KindSpec, Lineup, MatchSettings, WorkerPolicy};

    fn source(build: &str, needs: &[&str]) -> EngineSource {
        EngineSource {
            repo: "https://example.org/engine.git".to_owned(),
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            git_ref: None,
            build: build.to_owned(),
            binary: "engine".to_owned(),
            needs: needs.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn sel(source: Option<EngineSource>) -> EngineSel {
        EngineSel {
            name: "e".to_owned(),
            options: BTreeMap::new(),
            registered: Some(EngineRef {
                name: "e".to_owned(),
                sha256: String::new(),
                size: 0,
                signature: Some(xq_proto::Signature::Bench(1)),
                protocol: Protocol::Uci,
                options: BTreeMap::new(),
                coords: None,
                binaries: Vec::new(),
                source,
            }),
        }
    }

    fn spec(dev: Option<EngineSel>, base: Option<EngineSel>) -> RunSpec {
        RunSpec {
            name: "g".to_owned(),
            priority: 0,
            batch_pairs: 2,
            settings: MatchSettings {
                limit: Limit::Nodes(100),
                hash_mb: 1,
                rules: xq_engine::rules::RuleSet::STANDARD,
                openings: OpeningSource::Builtin { random_plies: 2 },
                seed: 1,
                adjudication: xq_proto::Adjudication::OFF,
                draw_contempt: false,
                threads: 1,
            },
            kind: KindSpec::Games(GamesSpec {
                dev_params: BTreeMap::new(),
                base_params: BTreeMap::new(),
                lineup: Lineup {
                    dev,
                    base,
                    ..Lineup::default()
                },
                pairs: 4,
            }),
            workers: WorkerPolicy::default(),
            keep_games: Retention::All,
        }
    }

    fn tools(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_worker_needs_git_and_every_tool_of_every_source() {
        let both = spec(
            Some(sel(Some(source("make -j2", &[])))),
            Some(sel(Some(source("./build.sh", &["cargo"])))),
        );
        assert_eq!(
            needs(&both).into_iter().collect::<Vec<_>>(),
            ["cargo", "git", "make"]
        );
        assert!(admits(&both, &tools(&["git", "make", "cargo", "g++"])));
        assert!(!admits(&both, &tools(&["git", "make"])));
        assert!(!admits(&both, &tools(&["make", "cargo"])), "no git");
        assert!(!admits(&both, &tools(&[])), "a worker that builds nothing");
    }

    #[test]
    fn a_run_without_sources_admits_every_worker() {
        let registered = spec(Some(sel(None)), None);
        assert!(needs(&registered).is_empty());
        assert!(admits(&registered, &tools(&[])));
        assert!(admits(&spec(None, None), &tools(&[])));
    }

    #[test]
    fn the_stop_flag_names_the_source_the_reason_and_the_logs_last_line() {
        let failed = FailedBuild {
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            reason: "build command exited with status 2".to_owned(),
            log_tail: "g++ -o engine main.cpp\nmain.cpp:3:1: error: expected ';'\n\n".to_owned(),
        };
        let flag = stop_flag(&source("make", &[]), &failed, 3);
        assert_eq!(
            flag,
            "the build of https://example.org/engine.git@0123456789ab failed on 3 workers: \
             build command exited with status 2: main.cpp:3:1: error: expected ';'"
        );
    }
}
