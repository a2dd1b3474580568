//! A run's source engines (built by workers from a git commit) and their
//! failed builds, as the run page shows them. Every value is text the
//! templates escape: a build log is the author's code's output.

use serde::Serialize;
use xq_coordinator::runs::RunStatus;
use xq_coordinator::service::queries::StoredFailure;

use crate::view;

/// One player's source engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceView {
    /// `dev` or `base`.
    pub side: &'static str,
    pub name: String,
    pub repo: String,
    pub commit: String,
    /// The branch or tag the commit was resolved from.
    pub git_ref: Option<String>,
    pub build: String,
    pub binary: String,
    /// `git` and the other tools a worker needs.
    pub tools: String,
    /// The bench signature its author stated.
    pub bench: String,
}

/// The run's source engines, dev first; empty for a run without one.
pub fn sources(status: &RunStatus) -> Vec<SourceView> {
    let Some(lineup) = status.spec.kind.ops().lineup() else {
        return Vec::new();
    };
    [("dev", &lineup.dev), ("base", &lineup.base)]
        .into_iter()
        .filter_map(|(side, sel)| {
            let sel = sel.as_ref()?;
            let source = sel.source()?;
            let engine = sel.registered.as_ref()?;
            Some(SourceView {
                side,
                name: sel.name.clone(),
                repo: source.repo.clone(),
                commit: source.commit.clone(),
                git_ref: source.git_ref.clone(),
                build: source.build.clone(),
                binary: source.binary.clone(),
                tools: source.tools().into_iter().collect::<Vec<_>>().join(", "),
                bench: engine.signature_text(),
            })
        })
        .collect()
}

/// One failed build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureView {
    pub worker_id: u64,
    pub worker_name: String,
    pub repo: String,
    pub commit: String,
    pub reason: String,
    pub log_tail: String,
    /// When it was reported (UTC).
    pub at: String,
}

impl From<StoredFailure> for FailureView {
    fn from(f: StoredFailure) -> Self {
        FailureView {
            worker_id: f.worker_id,
            worker_name: f.worker_name,
            repo: f.repo,
            commit: f.failed.commit,
            reason: f.failed.reason,
            log_tail: f.failed.log_tail,
            at: view::utc(f.unix_ms),
        }
    }
}
