//! How a run's source engines (built by workers from a git commit) and
//! their failed builds are shown: in `status`, `watch` and `report`.

use xq_coordinator::report::summary::kind_spec;
use xq_proto::pb;

/// Each source engine of the run, `  dev          built from REPO@COMMIT
/// (REF): `BUILD` → BINARY, bench N`; empty for a run without one.
pub fn engines(s: &pb::RunStatus) -> String {
    let Some(kind) = kind_spec(s) else {
        return String::new();
    };
    let Some(lineup) = kind.ops().lineup() else {
        return String::new();
    };
    let mut out = String::new();
    for (side, sel) in [("dev", &lineup.dev), ("base", &lineup.base)] {
        let Some(engine) = sel.as_ref().and_then(|s| s.registered.as_ref()) else {
            continue;
        };
        let Some(source) = &engine.source else {
            continue;
        };
        out += &format!(
            "  {side:<12} {} built from {}: `{}` → {}, bench {}\n",
            engine.name,
            source.label(),
            source.build,
            source.binary,
            engine.signature_text()
        );
    }
    out
}

/// `  dev repo@commit` for each source engine, for a one-line status.
pub fn suffix(s: &pb::RunStatus) -> String {
    let Some(kind) = kind_spec(s) else {
        return String::new();
    };
    let Some(lineup) = kind.ops().lineup() else {
        return String::new();
    };
    [("dev", &lineup.dev), ("base", &lineup.base)]
        .into_iter()
        .filter_map(|(side, sel)| Some(format!("  {side} {}", sel.as_ref()?.source()?.label())))
        .collect()
}

/// The failed builds, each with its log tail indented under it; empty for
/// none.
pub fn failures(failures: &[pb::BuildFailure]) -> String {
    if failures.is_empty() {
        return String::new();
    }
    let mut out = String::from("  build failures\n");
    for f in failures {
        let short = &f.commit[..f.commit.len().min(12)];
        out += &format!(
            "    {} (#{}): {}@{short}: {}\n",
            f.worker_name, f.worker_id, f.repo, f.reason
        );
        for line in f.log_tail.lines() {
            out += &format!("      | {line}\n");
        }
    }
    out
}

/// The failed builds as JSON (`report --json`'s `build_failures`).
pub fn failures_json(failures: &[pb::BuildFailure]) -> serde_json::Value {
    failures
        .iter()
        .map(|f| {
            serde_json::json!({
                "worker_id": f.worker_id,
                "worker_name": f.worker_name,
                "repo": f.repo,
                "commit": f.commit,
                "reason": f.reason,
                "log_tail": f.log_tail,
                "unix_ms": f.unix_ms,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_shows_its_worker_source_reason_and_log() {
        let f = pb::BuildFailure {
            worker_id: 3,
            worker_name: "box".to_owned(),
            repo: "file:///src/engine".to_owned(),
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            reason: "build command exited with status 1".to_owned(),
            log_tail: "g++ main.cpp\nmain.cpp:3: error: expected ';'\n".to_owned(),
            unix_ms: 1,
        };
        assert_eq!(
            failures(std::slice::from_ref(&f)),
            "  build failures\n    box (#3): file:///src/engine@0123456789ab: build command \
             exited with status 1\n      | g++ main.cpp\n      | main.cpp:3: error: expected \
             ';'\n"
        );
        assert_eq!(failures(&[]), "");
        assert_eq!(failures_json(&[f])[0]["worker_name"], "box");
    }
}
