//! Self-update (`xq-worker work --auto-update`): a worker the coordinator
//! refuses as too old ([`too_old`]) replaces its own executable with the
//! worker release for its target and runs it in its place.
//!
//! The update, step by step ([`plan`], the client's download, [`install`]):
//!
//! 1. `GetWorkerRelease` for [`TARGET`]: the newest release's version,
//!    SHA-256 and size; it must be newer than this worker.
//! 2. `DownloadBlob` into the executable's own directory (so the rename
//!    below stays on one filesystem): hashed as it is written, kept
//!    executable under its SHA-256 only when size and digest are right.
//! 3. `NEW --version` must print the release's version.
//! 4. The new file is renamed over [`std::env::current_exe`] (atomic: the
//!    path names the old or the new executable, never a part of one).
//! 5. The process re-executes itself with the same arguments and
//!    `XQ_UPDATED_FROM` set to the old version, which the new worker
//!    reports at registration.
//!
//! Any step that fails leaves the old executable in place, and says why
//! ([`Failure`]); the worker reports it (`ReportUpdateFailure`) and tries
//! again later.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::{Code, Status};
use xq_proto::WorkerVersion;
use xq_proto::pb;
use xq_proto::worker_version::{self, REQUIRED_VERSION_KEY, WORKER_ID_KEY};

use crate::version::{TARGET, version};

/// The environment variable through which a re-executed worker learns the
/// version it replaced.
pub const UPDATED_FROM_ENV: &str = "XQ_UPDATED_FROM";

/// How long `NEW --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// A too-old refusal, read from its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooOld {
    /// The coordinator's message, naming both versions.
    pub message: String,
    /// The version required.
    pub required: String,
    /// The id the refused worker is registered under; `None` when the
    /// coordinator did not send one.
    pub worker_id: Option<u64>,
}

/// The too-old refusal `status` is, if it is one: FAILED_PRECONDITION with
/// the required version in its metadata.
pub fn too_old(status: &Status) -> Option<TooOld> {
    if status.code() != Code::FailedPrecondition {
        return None;
    }
    let text = |key| {
        status
            .metadata()
            .get(key)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Some(TooOld {
        message: status.message().to_owned(),
        required: text(REQUIRED_VERSION_KEY)?,
        worker_id: text(WORKER_ID_KEY).and_then(|id| id.parse().ok()),
    })
}

/// Why an update failed: the version it tried (`None`: it found none) and
/// the reason, one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub to: Option<String>,
    pub reason: String,
}

/// Longest reason the coordinator stores, in bytes.
pub const MAX_REASON_BYTES: usize = 256;

impl Failure {
    /// The reason as `ReportUpdateFailure` carries it: its first line, cut
    /// to [`MAX_REASON_BYTES`] at a character boundary.
    pub fn reported_reason(&self) -> String {
        let line = self.reason.lines().next().unwrap_or("").trim();
        let line = if line.is_empty() { "unknown" } else { line };
        let mut end = line.len().min(MAX_REASON_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line[..end].to_owned()
    }

    fn new(to: Option<&WorkerVersion>, reason: impl Into<String>) -> Failure {
        Failure {
            to: to.map(ToString::to_string),
            reason: reason.into(),
        }
    }
}

/// An update decided on: the release to install over this executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// This worker's version and the release's.
    pub from: WorkerVersion,
    pub to: WorkerVersion,
    /// The release's blob.
    pub sha256: String,
    pub size: u64,
    /// This executable, and its directory, where the release is downloaded.
    pub exe: PathBuf,
    pub dir: PathBuf,
}

impl Plan {
    /// What the download is called in messages.
    pub fn what(&self) -> String {
        format!("{} {} for {TARGET}", worker_version::PROGRAM, self.to)
    }

    /// A failure of this plan's update for `reason`.
    pub fn failed(&self, reason: impl Into<String>) -> Failure {
        Failure::new(Some(&self.to), reason)
    }
}

/// Steps 1 and the checks before 2: the plan for the coordinator's `answer`
/// to `GetWorkerRelease` (asked for [`TARGET`]), or why there is none.
pub fn plan(answer: Result<pb::GetWorkerReleaseResponse, tonic::Status>) -> Result<Plan, Failure> {
    let from: WorkerVersion = version()
        .parse()
        .map_err(|e| Failure::new(None, format!("this worker's own version: {e}")))?;
    let answer = answer
        .map_err(|s| Failure::new(None, format!("cannot ask for a release: {}", s.message())))?;
    let release = answer
        .release
        .ok_or_else(|| Failure::new(None, format!("no worker release for {TARGET}")))?;
    let to = WorkerVersion::parse_field("release.version", &release.version)
        .map_err(|e| Failure::new(None, format!("the coordinator's release: {e}")))?;
    if to <= from {
        return Err(Failure::new(
            Some(&to),
            format!("the newest release for {TARGET} is {to}, not newer than this worker's {from}"),
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure::new(Some(&to), format!("cannot find this executable: {e}")))?;
    let dir = exe
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| Failure::new(Some(&to), format!("{} has no directory", exe.display())))?;
    Ok(Plan {
        from,
        to,
        sha256: release.sha256,
        size: release.size,
        exe,
        dir,
    })
}

/// Steps 3 to 5 for the release downloaded to `new` (in `plan.dir`):
/// returns only when one failed (the download is then removed), and why.
pub async fn install(plan: &Plan, new: PathBuf) -> Failure {
    if let Err(reason) = check_runs(new.clone(), plan.to.clone()).await {
        let _ = std::fs::remove_file(&new);
        return plan.failed(reason);
    }
    if let Err(e) = std::fs::rename(&new, &plan.exe) {
        let _ = std::fs::remove_file(&new);
        return plan.failed(format!("cannot replace {}: {e}", plan.exe.display()));
    }
    tracing::info!(from = %plan.from, to = %plan.to, exe = %plan.exe.display(), "replaced this executable; restarting it");
    let error = reexec(&plan.exe, &plan.from);
    plan.failed(format!("cannot restart {}: {error}", plan.exe.display()))
}

/// Whether `path --version` prints `xq-worker VERSION` with `version`.
async fn check_runs(path: PathBuf, version: WorkerVersion) -> Result<(), String> {
    let shown = path.display().to_string();
    let run = tokio::task::spawn_blocking(move || {
        std::process::Command::new(&path)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
    });
    let output = match tokio::time::timeout(VERSION_TIMEOUT, run).await {
        Err(_) => return Err(format!("the new binary {shown} did not answer --version")),
        Ok(Err(e)) => return Err(format!("the check of {shown} failed: {e}")),
        Ok(Ok(Err(e))) => return Err(format!("the new binary does not run: {e}")),
        Ok(Ok(Ok(output))) => output,
    };
    let text = String::from_utf8_lossy(&output.stdout);
    match worker_version::from_version_output(&text) {
        Some(v) if output.status.success() && v == version => Ok(()),
        Some(v) => Err(format!("the new binary says it is {v}, not {version}")),
        None => Err(format!(
            "the new binary does not run as {} {version} ({}): {}",
            worker_version::PROGRAM,
            output.status,
            xq_proto::quote(text.lines().next().unwrap_or(""))
        )),
    }
}

/// Runs `exe` in place of this process with the same arguments and
/// [`UPDATED_FROM_ENV`] set to `from`; returns only if that failed.
#[cfg(unix)]
fn reexec(exe: &Path, from: &WorkerVersion) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(UPDATED_FROM_ENV, from.to_string())
        .exec()
}

#[cfg(not(unix))]
fn reexec(_exe: &Path, _from: &WorkerVersion) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "re-executing is supported on Unix only; start the worker again",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_too_old_refusal_is_told_by_its_metadata() {
        let mut status = Status::failed_precondition("this worker is xq-worker 0.1.0; …");
        status
            .metadata_mut()
            .insert(REQUIRED_VERSION_KEY, "0.2.0".parse().unwrap());
        status
            .metadata_mut()
            .insert(WORKER_ID_KEY, "7".parse().unwrap());
        let old = too_old(&status).unwrap();
        assert_eq!((old.required.as_str(), old.worker_id), ("0.2.0", Some(7)));
        assert_eq!(too_old(&Status::failed_precondition("other")), None);
        assert_eq!(too_old(&Status::invalid_argument("x")), None);
    }
}
