//! Users' passwords, kept only as argon2id hashes in the PHC string format
//! (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`: the salt and the cost parameters
//! travel with the hash, so a later change of parameters still verifies old
//! hashes). The password itself is never stored, logged or printed.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::TryRngCore;
use rand::rngs::OsRng;

/// Shortest password accepted, in characters.
pub const MIN_LEN: usize = 8;

/// Longest password accepted, in bytes (hashing cost grows with length).
pub const MAX_BYTES: usize = 1024;

/// Why a password could not be set or checked.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("a password needs {MIN_LEN} characters at least")]
    TooShort,
    #[error("a password may have {MAX_BYTES} bytes at most")]
    TooLong,
    #[error("the OS random source failed: {0}")]
    Random(String),
    #[error("cannot hash the password: {0}")]
    Hash(String),
    #[error("the stored password hash is not a PHC string: {0}")]
    Stored(String),
}

/// The argon2id hash of `password` with a fresh random salt, as a PHC string.
pub fn hash(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_LEN {
        return Err(PasswordError::TooShort);
    }
    if password.len() > MAX_BYTES {
        return Err(PasswordError::TooLong);
    }
    let mut salt = [0u8; 16];
    OsRng
        .try_fill_bytes(&mut salt)
        .map_err(|e| PasswordError::Random(e.to_string()))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| PasswordError::Hash(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

/// Whether `password` matches the stored PHC string `stored`.
pub fn verify(password: &str, stored: &str) -> Result<bool, PasswordError> {
    let parsed = PasswordHash::new(stored).map_err(|e| PasswordError::Stored(e.to_string()))?;
    if password.len() > MAX_BYTES {
        return Ok(false);
    }
    Ok(Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only_and_holds_no_clear_text() {
        let stored = hash("correct horse").unwrap();
        assert!(stored.starts_with("$argon2id$"), "{stored}");
        assert!(!stored.contains("correct horse"));
        assert!(verify("correct horse", &stored).unwrap());
        assert!(!verify("correct hors", &stored).unwrap());
        assert_ne!(
            hash("correct horse").unwrap(),
            stored,
            "a fresh salt each time"
        );
    }

    #[test]
    fn bad_passwords_and_stored_values_are_errors() {
        assert!(matches!(hash("short"), Err(PasswordError::TooShort)));
        assert!(matches!(
            hash(&"x".repeat(MAX_BYTES + 1)),
            Err(PasswordError::TooLong)
        ));
        assert!(matches!(
            verify("whatever1", "plain text"),
            Err(PasswordError::Stored(_))
        ));
    }
}
