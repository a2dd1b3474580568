//! The cluster's worker versions in `report` (text and JSON): each worker
//! seen lately, its version and target, and where it stands against the
//! required version.

use serde_json::{Value, json};
use xq_proto::pb;

/// A worker's update state in one short line, as the workers page shows it.
pub fn state_text(w: &pb::WorkerVersion, required: &str) -> String {
    match w.update() {
        pb::UpdateState::UpToDate | pb::UpdateState::Unspecified => "up to date".to_owned(),
        pb::UpdateState::Updated => format!("updated from {}", w.updated_from),
        pb::UpdateState::TooOld => format!("too old (requires {required})"),
        pb::UpdateState::Failed => format!(
            "update to {} failed: {}",
            if w.failed_to.is_empty() {
                required
            } else {
                &w.failed_to
            },
            w.failure
        ),
    }
}

/// The state's stable name: `up_to_date`, `updated`, `too_old`, `failed`.
fn state_name(w: &pb::WorkerVersion) -> &'static str {
    match w.update() {
        pb::UpdateState::UpToDate | pb::UpdateState::Unspecified => "up_to_date",
        pb::UpdateState::Updated => "updated",
        pb::UpdateState::TooOld => "too_old",
        pb::UpdateState::Failed => "failed",
    }
}

/// One line per worker under a header naming the required version.
pub fn text(workers: &[pb::WorkerVersion], required: &str) -> String {
    let mut out = format!(
        "  versions     required {}\n",
        if required.is_empty() {
            "none"
        } else {
            required
        }
    );
    for w in workers {
        out += &format!(
            "    {:>10} {:<16} {:<10} {:<26} {}\n",
            w.worker_id,
            w.worker_name,
            w.version,
            if w.target.is_empty() { "-" } else { &w.target },
            state_text(w, required)
        );
    }
    out
}

/// The workers as a JSON array (`report --json`'s `worker_versions`).
pub fn json(workers: &[pb::WorkerVersion], required: &str) -> Value {
    Value::Array(
        workers
            .iter()
            .map(|w| {
                json!({
                    "worker_id": w.worker_id,
                    "name": w.worker_name,
                    "version": w.version,
                    "target": w.target,
                    "last_seen_unix_ms": w.last_seen_unix_ms,
                    "update": state_name(w),
                    "update_text": state_text(w, required),
                    "updated_from": (!w.updated_from.is_empty()).then_some(&w.updated_from),
                    "failed_to": (!w.failed_to.is_empty()).then_some(&w.failed_to),
                    "failure": (!w.failure.is_empty()).then_some(&w.failure),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(id: u64, state: pb::UpdateState) -> pb::WorkerVersion {
        pb::WorkerVersion {
            worker_id: id,
            worker_name: format!("w{id}"),
            version: "0.1.0".to_owned(),
            target: "x86_64-unknown-linux-gnu".to_owned(),
            last_seen_unix_ms: 1,
            update: state.into(),
            updated_from: String::new(),
            failed_to: String::new(),
            failure: String::new(),
        }
    }

    #[test]
    fn each_state_is_shown() {
        let mut failed = worker(2, pb::UpdateState::Failed);
        failed.failure = "no worker release for x86_64-unknown-linux-gnu".to_owned();
        let ws = [worker(1, pb::UpdateState::TooOld), failed];
        let t = text(&ws, "0.2.0");
        assert!(t.contains("required 0.2.0"), "{t}");
        assert!(t.contains("too old (requires 0.2.0)"), "{t}");
        assert!(
            t.contains("update to 0.2.0 failed: no worker release"),
            "{t}"
        );
        let j = json(&ws, "0.2.0");
        assert_eq!(j[1]["update"], "failed");
        assert_eq!(j[0]["failure"], Value::Null);
    }
}
