//! The key each account's signed links are signed with (`links.<account>` in the accounts
//! bucket): made on first use, wrapped by the master key like every data key, and the same
//! for every replica. Purging the entry invalidates every link the account has handed out.

use super::{Keyring, KeyringError};
use crate::privacy::keys::DataKey;
use uuid::Uuid;

fn links_name(account: Uuid) -> String {
    format!("links.{account}")
}

/// An account's link-signing key; formatting never shows it.
#[derive(Clone)]
pub struct LinkKey(DataKey);

impl std::fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKey([redacted])")
    }
}

impl LinkKey {
    /// HMAC-SHA256 of `parts`, in order, under this key.
    pub fn tag(&self, parts: &[&[u8]]) -> [u8; 32] {
        self.0.mac(parts)
    }

    /// A key from fixed bytes (tests of what signs with it).
    pub fn from_bytes(bytes: [u8; 32]) -> LinkKey {
        LinkKey(DataKey::from_bytes(bytes))
    }
}

impl Keyring {
    /// The account's link-signing key, made (and stored) on first use.
    pub async fn link_key(&self, account: Uuid) -> Result<LinkKey, KeyringError> {
        if let Some(key) = self.cache().links.get(&account) {
            return Ok(LinkKey(key.clone()));
        }
        let accounts = self.inner.accounts.clone();
        let key = self
            .load_key(&accounts, &links_name(account), true)
            .await?
            .ok_or_else(|| KeyringError::Unavailable("the link key was not made".into()))?;
        self.cache().links.insert(account, key.clone());
        Ok(LinkKey(key))
    }
}
