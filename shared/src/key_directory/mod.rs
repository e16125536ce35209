//! The in-memory key directory every service authenticates against, and the one task that keeps
//! it in line with the key bucket ([`DirectorySync`]).
//!
//! Ingest and query-api both read keys from here, so a key the bucket no longer holds is refused
//! by both the same way: a delete reaches the watch within milliseconds, and every time the
//! watch (or the NATS connection under it) comes back, the bucket is read again from the start
//! and whatever it no longer holds leaves the directory.

mod sync;

pub use sync::{DirectorySync, KeyEndings};

use crate::keys::{AuthError, Caller, KeyEntry, KeyKind, bearer_token};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use subtle::ConstantTimeEq;
use uuid::Uuid;

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
    /// Returns the entry the hash held before.
    pub fn apply(&self, hash: &str, entry: Option<KeyEntry>) -> Option<KeyEntry> {
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        match entry {
            Some(entry) => keys.insert(hash.to_owned(), entry),
            None => keys.remove(hash),
        }
    }

    /// The hashes of every live key.
    pub fn hashes(&self) -> HashSet<String> {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        keys.keys().cloned().collect()
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
    use crate::keys::hash_secret;
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
        let removed = dir.apply(&hash_secret("wdn_plugin_abc"), None);
        assert_eq!(removed.map(|e| e.kind), Some(KeyKind::Plugin));
        assert!(dir.hashes().is_empty());
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
}
