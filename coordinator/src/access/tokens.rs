//! Token text, hashing and comparison.
//!
//! A token is `xqt_` + 64 lowercase hex digits of 32 bytes from the OS
//! random source. It is shown once when made and stored only as its
//! SHA-256 hash.

use rand::TryRngCore;
use rand::rngs::OsRng;
use sha2::{Digest, Sha256};

use super::Role;

/// The prefix that marks xq tokens (so a leaked one is easy to grep for).
pub const PREFIX: &str = "xqt_";

/// SHA-256 of a token's text.
pub type TokenHash = [u8; 32];

/// Errors making a token.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the OS random source failed: {0}")]
    Random(String),
}

/// A new random token.
pub fn generate() -> Result<String, TokenError> {
    generate_secret(PREFIX)
}

/// `prefix` and 64 lowercase hex digits of 32 bytes from the OS random
/// source (tokens, the web view's session and CSRF secrets).
pub fn generate_secret(prefix: &str) -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| TokenError::Random(e.to_string()))?;
    let mut text = String::with_capacity(prefix.len() + 64);
    text.push_str(prefix);
    for b in bytes {
        text.push_str(&format!("{b:02x}"));
    }
    Ok(text)
}

/// The stored form of a token.
pub fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// Compares two hashes in time independent of where they differ.
pub fn hashes_equal(a: &TokenHash, b: &TokenHash) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A token that lives only in the server's memory (local mode, tests).
#[derive(Clone, PartialEq, Eq)]
pub struct EphemeralToken {
    pub name: String,
    pub role: Role,
    pub hash: TokenHash,
    /// The user its calls act as (local mode's own admin); `None`: no user.
    pub user: Option<u64>,
}

impl std::fmt::Debug for EphemeralToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EphemeralToken")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl EphemeralToken {
    /// Accepts `token` (kept only as its hash) with `role`.
    pub fn new(name: impl Into<String>, role: Role, token: &str) -> Self {
        EphemeralToken {
            name: name.into(),
            role,
            hash: hash(token),
            user: None,
        }
    }

    /// The same token, acting as the user `user` (`users.id`).
    pub fn for_user(self, user: u64) -> Self {
        EphemeralToken {
            user: Some(user),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_prefixed_hex_and_distinct() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 64);
        assert!(a.starts_with(PREFIX));
        assert!(a[4..].bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn hashes_compare_by_content() {
        let h = hash("xqt_a");
        assert!(hashes_equal(&h, &hash("xqt_a")));
        assert!(!hashes_equal(&h, &hash("xqt_b")));
    }
}
