//! API keys: kinds, secrets, hashes, what the key bucket holds, and why a request was refused.
//!
//! A secret is `wdn_<kind>_` followed by 64 hex characters (256 random bits). Only its SHA-256
//! is stored: secrets are high-entropy, so a fast hash is safe and lets a lookup be one map
//! probe. The services authenticate against [`crate::key_directory::KeyDirectory`], filled from
//! the key bucket in JetStream KV.

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use uuid::Uuid;

/// Who a key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// A game-server plugin: writes the plugin endpoints only.
    Plugin,
    /// A chat-bot or integration: reads dashboard data only.
    Dashboard,
    /// The operator: the admin API only.
    Admin,
}

impl KeyKind {
    /// The identifiable prefix of this kind's secrets.
    pub fn secret_prefix(self) -> &'static str {
        match self {
            KeyKind::Plugin => "wdn_plugin_",
            KeyKind::Dashboard => "wdn_dash_",
            KeyKind::Admin => "wdn_admin_",
        }
    }

    /// The kind as text.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Plugin => "plugin",
            KeyKind::Dashboard => "dashboard",
            KeyKind::Admin => "admin",
        }
    }
}

/// A new random secret of `kind`.
pub fn generate_secret(kind: KeyKind) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{}{}", kind.secret_prefix(), hex::encode(bytes))
}

/// The stored form of a secret: lowercase hex SHA-256.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// What the key bucket holds for one live key (under the key's hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyEntry {
    /// The key's id.
    pub key_id: Uuid,
    /// The account it belongs to.
    pub account_id: Uuid,
    /// Plugin or dashboard.
    pub kind: KeyKind,
    /// When it stops working (set by a rotation's grace period); never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
}

/// A caller whose key was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The key's id (the admin key has the nil id).
    pub key_id: Uuid,
    /// The key's account (nil for the admin key).
    pub account_id: Uuid,
    /// The key's kind.
    pub kind: KeyKind,
}

/// Why a request was not authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    Missing,
    /// Unknown, malformed, expired or revoked key.
    Invalid,
    /// A valid key of another kind than the endpoint needs.
    WrongKind {
        /// The kind presented.
        presented: KeyKind,
    },
    /// The key directory has not finished loading yet.
    NotReady,
    /// More than one `Authorization` header: which key is meant would be a guess.
    Duplicate,
}

/// The request's `Authorization` value, read the one way every service reads it: `Ok(None)`
/// when absent, [`AuthError::Duplicate`] when sent more than once (proxies and frameworks
/// disagree on which of two wins, so neither does here), [`AuthError::Invalid`] when it is not
/// visible ASCII.
pub fn authorization_header(headers: &axum::http::HeaderMap) -> Result<Option<&str>, AuthError> {
    let mut values = headers.get_all(axum::http::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(AuthError::Duplicate);
    }
    value.to_str().map(Some).map_err(|_| AuthError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_prefixed_and_long() {
        let s = generate_secret(KeyKind::Plugin);
        assert!(s.starts_with("wdn_plugin_"));
        assert_eq!(s.len(), "wdn_plugin_".len() + 64);
        assert_ne!(s, generate_secret(KeyKind::Plugin));
    }

    #[test]
    fn one_authorization_header_is_read_two_are_refused() {
        use axum::http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
        let mut headers = HeaderMap::new();
        assert_eq!(authorization_header(&headers), Ok(None));
        headers.append(AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        assert_eq!(authorization_header(&headers), Ok(Some("Bearer a")));
        headers.append(AUTHORIZATION, HeaderValue::from_static("Bearer b"));
        assert_eq!(authorization_header(&headers), Err(AuthError::Duplicate));
        let mut opaque = HeaderMap::new();
        let value = HeaderValue::from_bytes(b"Bearer \xff").expect("opaque bytes");
        opaque.insert(AUTHORIZATION, value);
        assert_eq!(authorization_header(&opaque), Err(AuthError::Invalid));
    }
}
