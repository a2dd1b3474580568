//! Why a run kind refused a spec or a result, or found its state broken.

use xq_proto::Invalid;

/// A run kind's error. The store maps it to its own error once
/// (`From<RunError> for StoreError`), and the server that to a status.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// A spec or a result refused, naming the field (`INVALID_ARGUMENT`).
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The spec names what does not exist, e.g. an unregistered engine.
    #[error("{0}")]
    NotFound(String),
    /// The stored state contradicts itself (a lease without its variant, an
    /// SPSA run without θ).
    #[error("{0}")]
    Corrupt(String),
}

impl RunError {
    /// Refused content: `field` is wrong because of `reason`.
    pub fn invalid(field: &str, reason: impl std::fmt::Display) -> RunError {
        RunError::Invalid(Invalid::new(field, reason))
    }
}
