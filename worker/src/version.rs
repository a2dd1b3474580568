//! This worker's version and target triple, as `xq-worker --version` prints
//! them and registration reports them.
//!
//! The version is not a constant folded into the code: it lives in a
//! fixed-size slot of the executable, [`VERSION_SLOT`] bytes that start
//! with [`MARK`], read at run time up to the first NUL. A copy of the
//! executable whose slot is patched (same length) is another worker version
//! with another SHA-256, without a rebuild: [`patched`] makes one, for
//! `xq-worker make-test-release` and the self-update test.

/// What the slot starts with; the version follows it.
pub const MARK: &[u8] = b"XQ-WORKER-VERSION=";

/// The slot's size in bytes: the mark, the version, NUL padding.
pub const VERSION_SLOT: usize = 48;

/// The target triple cargo built this worker for (from `build.rs`).
pub const TARGET: &str = env!("XQ_WORKER_TARGET");

/// The slot of `version`: [`MARK`], the version, NULs.
const fn slot(version: &str) -> [u8; VERSION_SLOT] {
    let version = version.as_bytes();
    assert!(
        MARK.len() + version.len() < VERSION_SLOT,
        "the version does not fit its slot"
    );
    let mut out = [0u8; VERSION_SLOT];
    let mut i = 0;
    while i < MARK.len() {
        out[i] = MARK[i];
        i += 1;
    }
    let mut j = 0;
    while j < version.len() {
        out[MARK.len() + j] = version[j];
        j += 1;
    }
    out
}

/// The slot in the executable, kept by `#[used]` even though only
/// [`version`] reads it.
#[used]
static VERSION_MARK: [u8; VERSION_SLOT] = slot(env!("CARGO_PKG_VERSION"));

/// This executable's version: its slot's text after [`MARK`] up to the first
/// NUL (`black_box` keeps the optimiser from reading the slot at compile
/// time, so a patched copy reports its own). A slot that is not UTF-8 reads
/// as `?`.
pub fn version() -> &'static str {
    let slot: &'static [u8; VERSION_SLOT] = std::hint::black_box(&VERSION_MARK);
    let text = &slot[MARK.len()..];
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    std::str::from_utf8(&text[..end]).unwrap_or("?")
}

/// What `xq-worker --version` prints after the program's name: the version,
/// then a line `target TRIPLE`.
pub fn long_version() -> String {
    format!("{}\ntarget {TARGET}", version())
}

/// Why an executable cannot be given another version.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("version {given}: {reason}")]
    Version { given: String, reason: String },
    #[error("the executable holds no version slot of xq-worker {0}")]
    NoSlot(String),
}

/// A copy of `executable`, a worker whose version is `from`, whose every
/// version slot says `to` instead: the same program, another version and
/// SHA-256. `to` must be a version (dot-separated numbers) that fits the
/// slot.
pub fn patched(executable: &[u8], from: &str, to: &str) -> Result<Vec<u8>, PatchError> {
    let refuse = |reason: String| PatchError::Version {
        given: xq_proto::quote(to),
        reason,
    };
    to.parse::<xq_proto::WorkerVersion>()
        .map_err(|e| refuse(e.to_string()))?;
    if MARK.len() + to.len() >= VERSION_SLOT {
        return Err(refuse(format!(
            "longer than the {} bytes the slot holds",
            VERSION_SLOT - MARK.len() - 1
        )));
    }
    let mut old = MARK.to_vec();
    old.extend_from_slice(from.as_bytes());
    old.push(0);
    let mut new = [0u8; VERSION_SLOT];
    new[..MARK.len()].copy_from_slice(MARK);
    new[MARK.len()..MARK.len() + to.len()].copy_from_slice(to.as_bytes());
    let mut out = executable.to_vec();
    let mut found = 0;
    let mut i = 0;
    while i + VERSION_SLOT <= out.len() {
        if out[i..].starts_with(&old) {
            out[i..i + VERSION_SLOT].copy_from_slice(&new);
            found += 1;
            i += VERSION_SLOT;
        } else {
            i += 1;
        }
    }
    if found == 0 {
        return Err(PatchError::NoSlot(from.to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patched_copy_carries_the_new_version_in_every_slot() {
        let mut exe = b"head".to_vec();
        exe.extend_from_slice(&slot("0.1.0"));
        exe.extend_from_slice(b"middle");
        exe.extend_from_slice(&slot("0.1.0"));
        let copy = patched(&exe, "0.1.0", "0.2.0").unwrap();
        assert_eq!(copy.len(), exe.len());
        let mut expected = b"head".to_vec();
        expected.extend_from_slice(&slot("0.2.0"));
        expected.extend_from_slice(b"middle");
        expected.extend_from_slice(&slot("0.2.0"));
        assert_eq!(copy, expected);
        let bad = patched(&exe, "0.1.0", "0.2.0-rc1").unwrap_err().to_string();
        assert!(bad.starts_with("version \"0.2.0-rc1\""), "{bad}");
        let long = "1.".repeat(20) + "1";
        assert!(patched(&exe, "0.1.0", &long).is_err());
        let none = patched(b"no slot here", "0.1.0", "0.2.0").unwrap_err();
        assert!(none.to_string().contains("no version slot"), "{none}");
    }

    #[test]
    fn the_slot_holds_the_crate_version() {
        assert_eq!(version(), env!("CARGO_PKG_VERSION"));
        assert!(version().parse::<xq_proto::WorkerVersion>().is_ok());
        let text = format!("{} {}", xq_proto::worker_version::PROGRAM, long_version());
        assert_eq!(
            xq_proto::worker_version::target_from_version_output(&text),
            Some(TARGET)
        );
    }
}
