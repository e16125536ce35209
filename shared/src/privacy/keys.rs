//! The master key (from configuration) and the data keys it wraps.
//!
//! A data key is 32 random bytes, stored in a bucket wrapped with XChaCha20-Poly1305 under a
//! key derived from `PRIVACY_MASTER_KEY`, with the bucket entry's name as associated data (a
//! wrapped key copied to another player's entry does not open). A field's key is
//! HMAC-SHA256(player key, label || class || day || period key): destroying either input key
//! makes every field sealed with it unreadable. Fields are sealed with ring's ChaCha20-Poly1305
//! (assembly; about 9 times faster on short fields than the portable implementation, which
//! still wraps the data keys).

use super::FieldClass;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use ring::aead::{CHACHA20_POLY1305, LessSafeKey, UnboundKey};
use sha2::{Digest, Sha256};

/// The shortest `PRIVACY_MASTER_KEY` accepted, in characters.
pub const MIN_MASTER_KEY_LEN: usize = 32;

const MASTER_LABEL: &[u8] = b"warden privacy master v1\0";
const FIELD_LABEL: &[u8] = b"warden privacy field v1\0";
const WRAP_NONCE_LEN: usize = 24;

/// Why the master key or a wrapped data key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MasterKeyError {
    /// `PRIVACY_MASTER_KEY` is shorter than [`MIN_MASTER_KEY_LEN`].
    #[error("PRIVACY_MASTER_KEY must be at least {MIN_MASTER_KEY_LEN} characters")]
    TooShort,
    /// A wrapped key did not open: wrong master key, wrong entry, or damaged data.
    #[error(
        "a data key in the privacy bucket does not open with this PRIVACY_MASTER_KEY \
         (was the master key changed?)"
    )]
    Unwrap,
}

/// The key that wraps every data key; formatting never shows it.
#[derive(Clone)]
pub struct MasterKey {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey([redacted])")
    }
}

/// A player's or a period's data key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct DataKey([u8; 32]);

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey([redacted])")
    }
}

impl DataKey {
    /// A key of fixed bytes.
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> DataKey {
        DataKey(bytes)
    }

    /// A new random key.
    pub(crate) fn random() -> DataKey {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        DataKey(key)
    }

    /// HMAC-SHA256 of `parts` under this key (a signed link's tag).
    pub(crate) fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// The key of fields of `class` received on `day`, sealed with this player key and, for
    /// classes with retention, the period key.
    pub(crate) fn field_key(
        &self,
        class: FieldClass,
        day: u32,
        period: Option<&DataKey>,
    ) -> FieldKey {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        mac.update(FIELD_LABEL);
        mac.update(&[class.code()]);
        mac.update(&day.to_be_bytes());
        if let Some(period) = period {
            mac.update(&period.0);
        }
        FieldKey(mac.finalize().into_bytes().into())
    }
}

/// The key one class of a player's fields of one day is sealed with: 32 bytes, kept inline in
/// the cache (a cipher is made from it on the stack per message, which costs less than
/// following a pointer to a cached one).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldKey([u8; 32]);

impl std::fmt::Debug for FieldKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FieldKey([redacted])")
    }
}

impl FieldKey {
    /// The ChaCha20-Poly1305 cipher under this key.
    pub(crate) fn cipher(&self) -> LessSafeKey {
        // A 32-byte key is what CHACHA20_POLY1305 takes, so this cannot fail.
        let key = UnboundKey::new(&CHACHA20_POLY1305, &self.0)
            .unwrap_or_else(|_| unreachable!("ChaCha20-Poly1305 takes a 32-byte key"));
        LessSafeKey::new(key)
    }
}

impl MasterKey {
    /// Derives the key from `PRIVACY_MASTER_KEY` (at least 32 characters).
    pub fn new(secret: &str) -> Result<MasterKey, MasterKeyError> {
        if secret.chars().count() < MIN_MASTER_KEY_LEN {
            return Err(MasterKeyError::TooShort);
        }
        let digest = Sha256::new()
            .chain_update(MASTER_LABEL)
            .chain_update(secret.as_bytes())
            .finalize();
        Ok(MasterKey {
            cipher: XChaCha20Poly1305::new(Key::from_slice(&digest)),
        })
    }

    /// `key` wrapped for the bucket entry `name`.
    pub(crate) fn wrap(&self, name: &str, key: &DataKey) -> Vec<u8> {
        let mut nonce = [0u8; WRAP_NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let payload = Payload {
            msg: &key.0,
            aad: name.as_bytes(),
        };
        #[allow(clippy::expect_used)]
        let sealed = self
            .cipher
            .encrypt(XNonce::from_slice(&nonce), payload)
            // Fails only for messages over 256 GiB; a data key is 32 bytes.
            .expect("XChaCha20-Poly1305 seals any message shorter than 256 GiB");
        let mut out = Vec::with_capacity(WRAP_NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// Opens what [`wrap`](MasterKey::wrap) produced for the same `name`.
    pub(crate) fn unwrap_key(&self, name: &str, wrapped: &[u8]) -> Result<DataKey, MasterKeyError> {
        if wrapped.len() < WRAP_NONCE_LEN {
            return Err(MasterKeyError::Unwrap);
        }
        let (nonce, ciphertext) = wrapped.split_at(WRAP_NONCE_LEN);
        let key = self
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: name.as_bytes(),
                },
            )
            .map_err(|_| MasterKeyError::Unwrap)?;
        let key: [u8; 32] = key.try_into().map_err(|_| MasterKeyError::Unwrap)?;
        Ok(DataKey(key))
    }
}
