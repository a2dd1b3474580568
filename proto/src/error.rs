//! The contract's one error type: a field of a message, or of a domain value
//! built from one, that is missing or breaks a rule. [`From<Invalid> for
//! Status`](#impl-From<Invalid>-for-Status) is the one place it becomes a gRPC
//! status (`INVALID_ARGUMENT`).

use std::fmt::Display;

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

impl Invalid {
    /// `field` is wrong because of `reason`.
    pub fn new(field: impl Into<String>, reason: impl Display) -> Invalid {
        Invalid {
            field: field.into(),
            reason: reason.to_string(),
        }
    }

    /// The same error with `prefix.` in front of its field.
    pub fn within(self, prefix: &str) -> Invalid {
        Invalid {
            field: format!("{prefix}.{}", self.field),
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

impl From<Invalid> for Status {
    fn from(e: Invalid) -> Status {
        Status::invalid_argument(e.to_string())
    }
}
