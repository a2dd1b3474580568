//! Worker versions and target triples: what a worker reports at
//! registration, what a worker release is registered under, and how the
//! coordinator tells a worker that it is too old.
//!
//! A version is 1 to [`MAX_PARTS`] dot-separated decimal numbers; two are
//! compared number by number, a missing number counting as 0 (`0.10.0` is
//! newer than `0.9.0`, `0.2` equals `0.2.0`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::{Invalid, quote};

/// Most numbers in a version.
pub const MAX_PARTS: usize = 4;

/// The metadata key of a too-old refusal that carries the required version.
pub const REQUIRED_VERSION_KEY: &str = "xq-required-version";

/// The metadata key of a too-old refusal that carries the id the refused
/// worker is registered under.
pub const WORKER_ID_KEY: &str = "xq-worker-id";

/// What `xq-worker --version` prints first: `xq-worker VERSION`.
pub const PROGRAM: &str = "xq-worker";

/// A worker version, e.g. `0.2.0`.
#[derive(Debug, Clone)]
pub struct WorkerVersion {
    /// The numbers, padded with zeros to [`MAX_PARTS`].
    parts: [u32; MAX_PARTS],
    /// How many were written.
    written: usize,
}

/// Why a text is not a version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} is not a version: {reason}", quote(.text))]
pub struct VersionError {
    pub text: String,
    pub reason: &'static str,
}

impl FromStr for WorkerVersion {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, VersionError> {
        let refuse = |reason| VersionError {
            text: text.to_owned(),
            reason,
        };
        let mut parts = [0u32; MAX_PARTS];
        let mut written = 0;
        for part in text.split('.') {
            if written == MAX_PARTS {
                return Err(refuse("more than 4 numbers"));
            }
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(refuse("expected dot-separated decimal numbers, e.g. 0.2.0"));
            }
            parts[written] = part.parse().map_err(|_| refuse("a number is too large"))?;
            written += 1;
        }
        Ok(WorkerVersion { parts, written })
    }
}

impl WorkerVersion {
    /// `text` as a version, or why not as the refusal of `field`.
    pub fn parse_field(field: &str, text: &str) -> Result<WorkerVersion, Invalid> {
        text.parse()
            .map_err(|e: VersionError| Invalid::new(field, e.to_string()))
    }
}

impl fmt::Display for WorkerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, n) in self.parts[..self.written].iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{n}")?;
        }
        Ok(())
    }
}

impl PartialEq for WorkerVersion {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for WorkerVersion {}

impl PartialOrd for WorkerVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for WorkerVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts.cmp(&other.parts)
    }
}

/// Why `target` cannot name a target triple, as the refusal of `field`:
/// 1 to 64 bytes of `[a-z0-9_.-]`.
pub fn check_target(field: &str, target: &str) -> Result<(), Invalid> {
    let ok = !target.is_empty()
        && target.len() <= 64
        && target
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Invalid::new(
            field,
            format!(
                "{} is not a target triple (1 to 64 bytes of a-z, 0-9, '_', '.', '-', \
                 e.g. x86_64-unknown-linux-gnu)",
                quote(target)
            ),
        ))
    }
}

/// The version in what `xq-worker --version` printed: its first line,
/// `xq-worker VERSION`; `None` for any other output.
pub fn from_version_output(output: &str) -> Option<WorkerVersion> {
    let line = output.lines().next()?;
    let version = line.strip_prefix(PROGRAM)?.strip_prefix(' ')?;
    version.trim_end().parse().ok()
}

/// The target triple in what `xq-worker --version` printed: its line
/// `target TRIPLE`, if any.
pub fn target_from_version_output(output: &str) -> Option<&str> {
    output
        .lines()
        .find_map(|l| l.strip_prefix("target "))
        .map(str::trim)
        .filter(|t| check_target("target", t).is_ok())
}

/// The message of a too-old refusal: both versions and what to do.
pub fn too_old_message(worker: &str, required: &WorkerVersion, target: &str) -> String {
    let target = if target.is_empty() {
        "TARGET".to_owned()
    } else {
        target.to_owned()
    };
    format!(
        "this worker is {PROGRAM} {worker}; the coordinator requires {required} or newer: \
         start it with --auto-update, or download the new worker from the coordinator's web \
         view (/download/{PROGRAM}/{target}), or rebuild it from source"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> WorkerVersion {
        text.parse().unwrap()
    }

    #[test]
    fn versions_compare_number_by_number() {
        assert!(v("0.10.0") > v("0.9.0"));
        assert!(v("0.2.0") > v("0.1.9"));
        assert!(v("1") > v("0.99.99"));
        assert_eq!(v("0.2"), v("0.2.0"));
        assert_eq!(v("0.2.0").to_string(), "0.2.0");
        assert_eq!(v("0.2").to_string(), "0.2");
    }

    #[test]
    fn malformed_versions_are_refused_by_name() {
        for bad in [
            "",
            "0..1",
            "v0.1",
            "0.1.0-beta",
            "1.2.3.4.5",
            "0.99999999999",
            " 1",
        ] {
            let err = bad.parse::<WorkerVersion>().unwrap_err().to_string();
            assert!(err.contains("is not a version"), "{bad:?}: {err}");
        }
        let err = WorkerVersion::parse_field("version", "latest").unwrap_err();
        assert_eq!(err.field, "version");
    }

    #[test]
    fn the_version_output_names_version_and_target() {
        let out = "xq-worker 0.2.0\ntarget x86_64-unknown-linux-gnu\n";
        assert_eq!(from_version_output(out), Some(v("0.2.0")));
        assert_eq!(
            target_from_version_output(out),
            Some("x86_64-unknown-linux-gnu")
        );
        assert_eq!(from_version_output("xq-engine 0.2.0\n"), None);
        assert_eq!(from_version_output("xq-worker\n"), None);
    }

    #[test]
    fn targets_are_checked() {
        assert!(check_target("t", "aarch64-unknown-linux-musl").is_ok());
        assert!(check_target("t", "").is_err());
        assert!(check_target("t", "X86_64").is_err());
        assert!(check_target("t", &"a".repeat(65)).is_err());
    }

    #[test]
    fn the_refusal_names_both_versions() {
        let m = too_old_message("0.1.0", &v("0.2.0"), "x86_64-unknown-linux-gnu");
        assert!(m.contains("xq-worker 0.1.0"), "{m}");
        assert!(m.contains("requires 0.2.0 or newer"), "{m}");
        assert!(m.contains("--auto-update"), "{m}");
    }
}
