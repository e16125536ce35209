//! API keys: kinds, secrets, hashes, and the in-memory directory services authenticate against.
//!
//! A secret is `wdn_<kind>_` followed by 64 hex characters (256 random bits). Only its SHA-256
//! is stored: secrets are high-entropy, so a fast hash is safe and lets a lookup be one map
//! probe. The directory is filled from the key bucket in JetStream KV, so authentication needs
//! no database round trip and sees a revocation as soon as the bucket changes.

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use subtle::ConstantTimeEq;
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

/// The live keys, by hash, plus the operator's admin key.
pub struct KeyDirectory {
    admin_hash: [u8; 32],
    keys: RwLock<HashMap<String, KeyEntry>>,
    loaded: AtomicBool,
}

impl KeyDirectory {
    /// An empty directory that knows the admin secret.
    pub fn new(admin_secret: &str) -> Self {
        Self {
            admin_hash: Sha256::digest(admin_secret.as_bytes()).into(),
            keys: RwLock::new(HashMap::new()),
            loaded: AtomicBool::new(false),
        }
    }

    /// Applies one change from the key bucket: `Some(entry)` for a put, `None` for a delete.
    pub fn apply(&self, hash: &str, entry: Option<KeyEntry>) {
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        match entry {
            Some(entry) => keys.insert(hash.to_owned(), entry),
            None => keys.remove(hash),
        };
    }

    /// Marks the initial load from the bucket as complete.
    pub fn mark_loaded(&self) {
        self.loaded.store(true, Ordering::Release);
    }

    /// Whether the initial load is complete.
    pub fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// How many keys are live.
    pub fn len(&self) -> usize {
        self.keys.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// True when no key is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Identifies the caller behind an `Authorization` header value, whatever its kind.
    pub fn identify(
        &self,
        authorization: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Caller, AuthError> {
        let token = authorization
            .and_then(bearer_token)
            .ok_or(AuthError::Missing)?;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if bool::from(digest.ct_eq(&self.admin_hash)) {
            return Ok(Caller {
                key_id: Uuid::nil(),
                account_id: Uuid::nil(),
                kind: KeyKind::Admin,
            });
        }
        if !self.is_loaded() {
            return Err(AuthError::NotReady);
        }
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let entry = keys.get(&hex::encode(digest)).ok_or(AuthError::Invalid)?;
        if entry.expires_at.is_some_and(|at| at <= now) {
            return Err(AuthError::Invalid);
        }
        Ok(Caller {
            key_id: entry.key_id,
            account_id: entry.account_id,
            kind: entry.kind,
        })
    }

    /// Like [`Self::identify`], and the key must be of `kind`.
    pub fn authenticate(
        &self,
        authorization: Option<&str>,
        kind: KeyKind,
        now: DateTime<Utc>,
    ) -> Result<Caller, AuthError> {
        let caller = self.identify(authorization, now)?;
        if caller.kind == kind {
            Ok(caller)
        } else {
            Err(AuthError::WrongKind {
                presented: caller.kind,
            })
        }
    }
}

impl std::fmt::Debug for KeyDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyDirectory")
            .field("keys", &self.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn directory_with(
        secret: &str,
        kind: KeyKind,
        expires_at: Option<DateTime<Utc>>,
    ) -> KeyDirectory {
        let dir = KeyDirectory::new("wdn_admin_root");
        let entry = KeyEntry {
            key_id: Uuid::now_v7(),
            account_id: Uuid::now_v7(),
            kind,
            expires_at,
        };
        dir.apply(&hash_secret(secret), Some(entry));
        dir.mark_loaded();
        dir
    }

    #[test]
    fn secrets_are_prefixed_and_long() {
        let s = generate_secret(KeyKind::Plugin);
        assert!(s.starts_with("wdn_plugin_"));
        assert_eq!(s.len(), "wdn_plugin_".len() + 64);
        assert_ne!(s, generate_secret(KeyKind::Plugin));
    }

    #[test]
    fn kinds_missing_wrong_and_revoked() {
        let now = Utc::now();
        let dir = directory_with("wdn_plugin_abc", KeyKind::Plugin, None);
        assert!(
            dir.authenticate(Some("Bearer wdn_plugin_abc"), KeyKind::Plugin, now)
                .is_ok()
        );
        assert_eq!(
            dir.authenticate(None, KeyKind::Plugin, now),
            Err(AuthError::Missing)
        );
        assert_eq!(
            dir.authenticate(Some("Basic x"), KeyKind::Plugin, now),
            Err(AuthError::Missing)
        );
        assert_eq!(
            dir.authenticate(Some("Bearer nope"), KeyKind::Plugin, now),
            Err(AuthError::Invalid)
        );
        assert_eq!(
            dir.authenticate(Some("Bearer wdn_plugin_abc"), KeyKind::Dashboard, now),
            Err(AuthError::WrongKind {
                presented: KeyKind::Plugin
            })
        );
        assert_eq!(
            dir.authenticate(Some("Bearer wdn_admin_root"), KeyKind::Plugin, now),
            Err(AuthError::WrongKind {
                presented: KeyKind::Admin
            })
        );
        dir.apply(&hash_secret("wdn_plugin_abc"), None);
        assert_eq!(
            dir.authenticate(Some("Bearer wdn_plugin_abc"), KeyKind::Plugin, now),
            Err(AuthError::Invalid)
        );
    }

    #[test]
    fn a_grace_period_ends() {
        let now = Utc::now();
        let dir = directory_with("k", KeyKind::Dashboard, Some(now + Duration::seconds(5)));
        assert!(
            dir.authenticate(Some("Bearer k"), KeyKind::Dashboard, now)
                .is_ok()
        );
        assert_eq!(
            dir.authenticate(
                Some("Bearer k"),
                KeyKind::Dashboard,
                now + Duration::seconds(6)
            ),
            Err(AuthError::Invalid)
        );
    }

    #[test]
    fn nothing_but_admin_before_the_directory_loads() {
        let dir = KeyDirectory::new("wdn_admin_root");
        assert_eq!(
            dir.identify(Some("Bearer x"), Utc::now()),
            Err(AuthError::NotReady)
        );
        assert!(
            dir.identify(Some("Bearer wdn_admin_root"), Utc::now())
                .is_ok()
        );
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
