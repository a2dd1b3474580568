//! The contract's one error type: a field of a message, or of a domain value
//! built from one, that is missing or breaks a rule. [`From<Invalid> for
//! Status`](#impl-From<Invalid>-for-Status) is the one place it becomes a gRPC
//! status (`INVALID_ARGUMENT`).
//!
//! A refusal never echoes unbounded input: a refused value is quoted by
//! [`quote`] (a short escaped prefix and its length), and every error text
//! that becomes a status is cut by [`bounded`], so an answer's `grpc-message`
//! stays far below the 16 KiB of metadata standard clients accept.

use std::fmt::{Display, Write};

use tonic::Status;

/// A missing or invalid field, named by its path in the message
/// (`work.players`, `results.variant.captured`, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {reason}")]
pub struct Invalid {
    /// The field's path.
    pub field: String,
    /// What is wrong with it, in lowercase.
    pub reason: String,
}

/// Most characters of a refused value that [`quote`] shows.
pub const QUOTE_CHARS: usize = 32;
/// Longest error text, in bytes, that becomes a status message ([`bounded`]).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `value` as a refusal quotes it: in double quotes, escaped as Rust escapes
/// a string's debug form (control characters, quotes, backslashes), at most
/// [`QUOTE_CHARS`] characters of it; a longer value is cut with `…` and
/// followed by its length, `"abc…" (100000 bytes)`.
pub fn quote(value: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = value.char_indices();
    for (_, c) in chars.by_ref().take(QUOTE_CHARS) {
        let _ = write!(out, "{}", c.escape_debug());
    }
    match chars.next() {
        None => out.push('"'),
        Some(_) => {
            let _ = write!(out, "…\" ({} bytes)", value.len());
        }
    }
    out
}

/// `text` cut to at most [`MAX_MESSAGE_BYTES`] bytes at a character
/// boundary, with `…` and the full length when cut.
pub fn bounded(text: String) -> String {
    if text.len() <= MAX_MESSAGE_BYTES {
        return text;
    }
    let mut end = MAX_MESSAGE_BYTES - 32;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

impl Invalid {
    /// `field` is wrong because of `reason`; both are [`bounded`].
    pub fn new(field: impl Into<String>, reason: impl Display) -> Invalid {
        Invalid {
            field: bounded(field.into()),
            reason: bounded(reason.to_string()),
        }
    }

    /// The same error with `prefix.` in front of its field.
    pub fn within(self, prefix: &str) -> Invalid {
        Invalid {
            field: bounded(format!("{prefix}.{}", self.field)),
            reason: self.reason,
        }
    }
}

/// `Err(Invalid)` naming `field`.
pub fn invalid<T>(field: impl Into<String>, reason: impl Display) -> Result<T, Invalid> {
    Err(Invalid::new(field, reason))
}

/// Unwraps a message field that must be present.
pub fn required<T>(field: &str, value: Option<T>) -> Result<T, Invalid> {
    value.ok_or_else(|| Invalid::new(field, "missing"))
}

/// Checks a name sent on the wire (a run's, a worker's): 1 to 128 bytes.
pub fn named(field: &str, value: &str) -> Result<(), Invalid> {
    if value.is_empty() || value.len() > 128 {
        return invalid(field, format!("{} must be 1 to 128 bytes", quote(value)));
    }
    Ok(())
}

impl From<Invalid> for Status {
    fn from(e: Invalid) -> Status {
        Status::invalid_argument(bounded(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_value_is_quoted_whole_and_escaped() {
        assert_eq!(quote("w1"), "\"w1\"");
        assert_eq!(quote("a\"b\nc"), "\"a\\\"b\\nc\"");
        assert_eq!(quote("炮二平五"), "\"炮二平五\"");
    }

    #[test]
    fn a_long_value_is_cut_and_its_length_given() {
        let long = "x".repeat(100_000);
        let q = quote(&long);
        assert_eq!(
            q,
            format!("\"{}…\" (100000 bytes)", "x".repeat(QUOTE_CHARS))
        );
        let wide = "炮".repeat(1000);
        assert!(quote(&wide).ends_with("…\" (3000 bytes)"));
    }

    #[test]
    fn every_status_message_is_bounded() {
        let e = Invalid::new("name".repeat(10_000), "y".repeat(100_000));
        let status = Status::from(e);
        assert!(
            status.message().len() <= MAX_MESSAGE_BYTES,
            "{}",
            status.message().len()
        );
        let cut = bounded("é".repeat(5000));
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
        assert!(cut.ends_with("(10000 bytes in all)"), "{cut}");
    }
}
