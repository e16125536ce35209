//! Signing secrets sealed at rest: `alert_destinations.secret_sealed` holds the secret
//! encrypted with a key derived from `WEBHOOK_SECRETS_KEY`, so a database dump or backup alone
//! cannot sign messages a receiver would trust.
//!
//! XChaCha20-Poly1305 with a random 24-byte nonce per seal (random nonces of that size never
//! collide in practice), stored as `nonce || ciphertext+tag`. The associated data is the
//! destination's id, so a sealed secret copied onto another destination's row does not open.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// The shortest `WEBHOOK_SECRETS_KEY` accepted, in characters.
pub const MIN_KEY_LEN: usize = 32;

/// Bytes of nonce in front of each sealed value.
const NONCE_LEN: usize = 24;

/// Separates keys derived from the same `WEBHOOK_SECRETS_KEY` for other purposes (none yet).
const KEY_LABEL: &[u8] = b"warden webhook secrets v1\0";

/// Why a key or a sealed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealingError {
    /// `WEBHOOK_SECRETS_KEY` is shorter than [`MIN_KEY_LEN`].
    #[error("WEBHOOK_SECRETS_KEY must be at least {MIN_KEY_LEN} characters")]
    KeyTooShort,
    /// Wrong key, wrong destination, or damaged data.
    #[error("the sealed secret does not open with this key (was WEBHOOK_SECRETS_KEY changed?)")]
    Open,
}

/// The key secrets are sealed with; formatting never shows it.
#[derive(Clone)]
pub struct SealingKey {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey([redacted])")
    }
}

impl SealingKey {
    /// Derives the key from `WEBHOOK_SECRETS_KEY` (at least 32 characters): SHA-256 of a
    /// label and the value, so any long random string works.
    pub fn new(secret: &str) -> Result<SealingKey, SealingError> {
        if secret.chars().count() < MIN_KEY_LEN {
            return Err(SealingError::KeyTooShort);
        }
        let digest = Sha256::new()
            .chain_update(KEY_LABEL)
            .chain_update(secret.as_bytes())
            .finalize();
        Ok(SealingKey {
            cipher: XChaCha20Poly1305::new(Key::from_slice(&digest)),
        })
    }

    /// Seals `plaintext` for the row identified by `aad` (the destination id's bytes).
    pub fn seal(&self, aad: &[u8], plaintext: &str) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let payload = Payload {
            msg: plaintext.as_bytes(),
            aad,
        };
        #[allow(clippy::expect_used)]
        let sealed = self
            .cipher
            .encrypt(XNonce::from_slice(&nonce), payload)
            // Fails only for messages over 256 GiB; a signing secret is 50 bytes.
            .expect("XChaCha20-Poly1305 seals any message shorter than 256 GiB");
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// Opens what [`seal`](SealingKey::seal) produced for the same `aad`.
    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<String, SealingError> {
        if sealed.len() < NONCE_LEN {
            return Err(SealingError::Open);
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let plaintext = self
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad,
                },
            )
            .map_err(|_| SealingError::Open)?;
        String::from_utf8(plaintext).map_err(|_| SealingError::Open)
    }
}

#[cfg(test)]
#[path = "sealing_tests.rs"]
mod tests;
