//! Reading, creating and destroying keys in the buckets, and the accounts' policies.

use super::cache::forget_period;
use super::{DataKey, Keyring, KeyringError, unavailable};
use crate::privacy::{FieldClass, PrivacyPolicy, RetentionKind};
use async_nats::jetstream::kv::{self, CreateErrorKind};
use bytes::Bytes;
use futures::TryStreamExt;
use std::sync::Arc;
use uuid::Uuid;

pub(super) fn player_name(account: Uuid, player: Uuid) -> String {
    format!("p.{account}.{player}")
}

pub(super) fn period_name(account: Uuid, class: FieldClass, day: u32) -> String {
    format!("d.{account}.{}.{day}", class.as_str())
}

fn policy_name(account: Uuid) -> String {
    format!("policy.{account}")
}

impl Keyring {
    /// The names of every entry of the accounts bucket (period keys and policies: a few per
    /// account and day, never per player).
    async fn account_entries(&self) -> Result<Vec<String>, KeyringError> {
        let keys = self.inner.accounts.keys().await.map_err(unavailable)?;
        keys.try_collect().await.map_err(unavailable)
    }

    /// The key stored under `name`; when there is none and `create`, a new one, stored first.
    pub(super) async fn load_key(
        &self,
        store: &kv::Store,
        name: &str,
        create: bool,
    ) -> Result<Option<DataKey>, KeyringError> {
        let master = &self.inner.master;
        // Two rounds at most: a concurrent create wins, and its key is read back.
        for _ in 0..3 {
            if let Some(wrapped) = store.get(name).await.map_err(unavailable)? {
                return Ok(Some(master.unwrap_key(name, &wrapped)?));
            }
            if !create {
                return Ok(None);
            }
            let key = DataKey::random();
            match store
                .create(name, Bytes::from(master.wrap(name, &key)))
                .await
            {
                Ok(_) => return Ok(Some(key)),
                Err(e) if e.kind() == CreateErrorKind::AlreadyExists => continue,
                Err(e) => return Err(unavailable(e)),
            }
        }
        Err(unavailable(format!(
            "the key {name} changed during three reads"
        )))
    }

    // ---- destroying ----

    /// Destroys a player's key: everything sealed with it, in the log and anywhere else, can
    /// no longer be opened. Idempotent.
    pub async fn destroy_player(&self, account: Uuid, player: Uuid) -> Result<(), KeyringError> {
        self.inner
            .players
            .purge(player_name(account, player))
            .await
            .map_err(unavailable)?;
        self.cache().players.remove(&(account, player));
        Ok(())
    }

    /// Drops a player's key from this process's cache (after another process destroyed it).
    pub fn forget_player(&self, account: Uuid, player: Uuid) {
        self.cache().players.remove(&(account, player));
    }

    /// Destroys the account's period keys of `kind` for every day before `before_day`; returns
    /// how many were destroyed.
    pub async fn destroy_periods_before(
        &self,
        account: Uuid,
        kind: RetentionKind,
        before_day: u32,
    ) -> Result<usize, KeyringError> {
        let Some(class) = kind.class() else {
            return Ok(0);
        };
        let prefix = format!("d.{account}.{}.", class.as_str());
        let names = self.account_entries().await?;
        let mut destroyed = 0;
        for name in names {
            let Some(day) = name
                .strip_prefix(&prefix)
                .and_then(|d| d.parse::<u32>().ok())
            else {
                continue;
            };
            if day < before_day {
                self.inner
                    .accounts
                    .purge(&name)
                    .await
                    .map_err(unavailable)?;
                forget_period(&mut self.cache(), account, class, day);
                destroyed += 1;
            }
        }
        Ok(destroyed)
    }

    // ---- policies ----

    /// The account's privacy policy (the default, keeping everything, when none was set).
    pub async fn policy(&self, account: Uuid) -> Result<Arc<PrivacyPolicy>, KeyringError> {
        if let Some(policy) = self.cache().policies.get(&account) {
            return Ok(policy.clone());
        }
        let stored = self
            .inner
            .accounts
            .get(policy_name(account))
            .await
            .map_err(unavailable)?;
        // A policy this build cannot read (written by a newer one) keeps everything.
        let policy = Arc::new(
            stored
                .and_then(|bytes| serde_json::from_slice::<PrivacyPolicy>(&bytes).ok())
                .unwrap_or_default(),
        );
        self.cache().policies.insert(account, policy.clone());
        Ok(policy)
    }

    /// Stores the account's policy (validated by the caller).
    pub async fn set_policy(
        &self,
        account: Uuid,
        policy: &PrivacyPolicy,
    ) -> Result<(), KeyringError> {
        let json = serde_json::to_vec(policy).unwrap_or_default();
        self.inner
            .accounts
            .put(policy_name(account), Bytes::from(json))
            .await
            .map_err(unavailable)?;
        self.cache()
            .policies
            .insert(account, Arc::new(policy.clone()));
        Ok(())
    }

    /// Every account that has set a policy, with it.
    pub async fn policies(&self) -> Result<Vec<(Uuid, PrivacyPolicy)>, KeyringError> {
        let names = self.account_entries().await?;
        let mut policies = Vec::new();
        for name in names {
            let Some(account) = name.strip_prefix("policy.").and_then(|a| a.parse().ok()) else {
                continue;
            };
            policies.push((account, (*self.policy(account).await?).clone()));
        }
        Ok(policies)
    }
}
