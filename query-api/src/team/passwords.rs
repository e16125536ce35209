//! Passwords: Argon2id (RustCrypto `argon2`, its default parameters: 19 MiB, 2 passes), hashed
//! and checked on the blocking pool so a sign-in never stalls the async workers.

use super::TeamError;
use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use shared::validation::FieldError;
use std::sync::LazyLock;

/// The shortest password accepted. Length is what makes a password strong; no composition rules.
pub const MIN_PASSWORD_CHARS: usize = 12;
/// The longest: a bound on the work one sign-in can ask for.
pub const MAX_PASSWORD_CHARS: usize = 256;

/// A hash of a password nobody knows, checked when the login is unknown so that an unknown
/// login and a wrong password take the same time (same algorithm, same parameters).
static DUMMY_HASH: LazyLock<Option<String>> = LazyLock::new(|| {
    let secret: [u8; 32] = rand::random();
    hash_blocking(&hex::encode(secret)).ok()
});

/// Checks a new password's length.
pub fn check_password(field: &str, password: &str) -> Result<(), FieldError> {
    let chars = password.chars().count();
    if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
        Ok(())
    } else {
        Err(FieldError {
            field: field.to_owned(),
            code: "bad_length".to_owned(),
            message: format!(
                "must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters long"
            ),
        })
    }
}

fn hash_blocking(password: &str) -> Result<String, TeamError> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| TeamError::Hashing(error.to_string()))
}

/// The PHC string (`$argon2id$v=19$...`) of `password`, with a fresh random salt.
pub async fn hash(password: String) -> Result<String, TeamError> {
    tokio::task::spawn_blocking(move || hash_blocking(&password))
        .await
        .map_err(|error| TeamError::Hashing(error.to_string()))?
}

/// Whether `password` matches `stored`; with no stored hash (unknown login) the same work is
/// done against a dummy hash and the answer is `false`.
pub async fn verify(password: String, stored: Option<String>) -> bool {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let Some(hash) = stored.or_else(|| DUMMY_HASH.clone()) else {
            return false;
        };
        let matches = Argon2::default()
            .verify_password(password.as_bytes(), hash.as_str())
            .is_ok();
        matches && known
    })
    .await
    .unwrap_or(false)
}

/// Computes the dummy hash now (at start-up), so the first unknown login is not slower.
pub async fn warm_up() {
    let _ = tokio::task::spawn_blocking(|| DUMMY_HASH.is_some()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse battery".into()).await.expect("hashes");
        assert!(stored.starts_with("$argon2id$v=19$"));
        assert!(verify("correct horse battery".into(), Some(stored.clone())).await);
        assert!(!verify("correct horse battery!".into(), Some(stored)).await);
        assert!(!verify("anything".into(), None).await);
    }

    #[test]
    fn length_is_checked_in_characters() {
        assert!(check_password("password", &"é".repeat(12)).is_ok());
        assert!(check_password("password", &"x".repeat(11)).is_err());
        assert!(check_password("password", &"x".repeat(257)).is_err());
    }
}
