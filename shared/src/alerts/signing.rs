//! Standard Webhooks signatures (<https://www.standardwebhooks.com>): what a generic webhook
//! receiver verifies with the specification's reference libraries.
//!
//! Each message carries `webhook-id` (the same on every attempt, so receivers drop repeats),
//! `webhook-timestamp` (unix seconds of this attempt, so receivers refuse stale replays) and
//! `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the
//! base64-decoded secret, one per valid secret, space-separated while a rotated secret is
//! still honoured.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use uuid::Uuid;

/// The prefix of every signing secret (the specification's convention).
pub const SECRET_PREFIX: &str = "whsec_";

/// The prefix of every message id.
pub const MESSAGE_ID_PREFIX: &str = "msg_";

/// A secret that cannot sign.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningError {
    /// Not `whsec_` + base64 (or plain base64).
    #[error("the signing secret is not base64")]
    InvalidSecret,
    /// No secret given to [`signature_header`].
    #[error("no signing secret")]
    NoSecret,
}

/// A new signing secret: `whsec_` + base64 of 32 random bytes.
pub fn generate_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The `webhook-id` of a delivery: `msg_` + the outbox row's id in simple form.
pub fn message_id(delivery_id: Uuid) -> String {
    format!("{MESSAGE_ID_PREFIX}{}", delivery_id.simple())
}

/// One signature, `v1,<base64>`, for `body` sent as message `msg_id` at `timestamp` (unix
/// seconds). The secret may carry the `whsec_` prefix.
pub fn sign(
    secret: &str,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    let key = STANDARD
        .decode(secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret))
        .map_err(|_| SigningError::InvalidSecret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SigningError::InvalidSecret)?;
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The `webhook-signature` header: one signature per secret (the current one first, then a
/// rotated one still honoured), separated by spaces.
pub fn signature_header(
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    if secrets.is_empty() {
        return Err(SigningError::NoSecret);
    }
    let signatures = secrets
        .iter()
        .map(|secret| sign(secret, msg_id, timestamp, body))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(signatures.join(" "))
}

#[cfg(test)]
#[path = "signing_tests.rs"]
mod tests;
