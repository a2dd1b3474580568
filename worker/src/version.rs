//! This worker's version and target triple, as `xq-worker --version` prints
//! them and registration reports them.
//!
//! The version is not a constant folded into the code: it lives in a
//! fixed-size slot of the executable, [`VERSION_SLOT`] bytes that start
//! with [`MARK`], read at run time up to the first NUL. A copy of the
//! executable whose slot is patched (same length) is another worker version
//! with another SHA-256, without a rebuild: the self-update test makes its
//! "newer" worker so.

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

#[cfg(test)]
mod tests {
    use super::*;

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
