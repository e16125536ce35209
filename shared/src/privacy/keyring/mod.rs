//! The keys every replica seals and opens personal fields with: kept in two key-value buckets,
//! cached per process, and dropped from every cache when destroyed.
//!
//! - players bucket: `p.<account>.<player>` -> the player's data key (wrapped);
//! - accounts bucket: `d.<account>.<class>.<day>` -> a period key (wrapped), and
//!   `policy.<account>` -> the account's [`PrivacyPolicy`] (JSON).
//!
//! Ingest creates keys as it first needs them (`create` is atomic, so two replicas agree on one
//! key) and waits for the bucket's ack before appending anything sealed with them. Destroying
//! a key purges its entry; [`Keyring::spawn_watch`] then drops it from this process's caches,
//! and every other process's watch does the same.

mod cache;
mod codec;
mod store;
mod watch;

use super::keys::{DataKey, MasterKey, MasterKeyError};
use super::{FieldClass, PrivacyPolicy, Slot, day_of};
use crate::envelope::LogMessage;
use async_nats::jetstream::kv;
use cache::{Cache, Cipher, PlayerEntry, cipher};
use codec::{erase, for_each_sealed, has_clear_value, open_field, seal_properties, seal_text};
use futures::{StreamExt, TryStreamExt};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use store::{period_name, player_name};
use uuid::Uuid;

/// Players whose keys a process caches at most; past it the cache starts again empty.
const MAX_CACHED_PLAYERS: usize = 500_000;
/// Key fetches in flight at once.
const FETCH_CONCURRENCY: usize = 64;

/// Why keys could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    /// The privacy buckets could not be reached: try again.
    #[error("the privacy key bucket is unavailable: {0}")]
    Unavailable(String),
    /// A stored key does not open with this master key.
    #[error(transparent)]
    MasterKey(#[from] MasterKeyError),
}

fn unavailable(error: impl std::fmt::Display) -> KeyringError {
    KeyringError::Unavailable(error.to_string())
}

struct Inner {
    players: kv::Store,
    accounts: kv::Store,
    master: MasterKey,
    seal: bool,
    cache: Mutex<Cache>,
}

/// Seals and opens personal fields; cheap to clone (one cache per process).
#[derive(Clone)]
pub struct Keyring {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("seal", &self.inner.seal)
            .finish_non_exhaustive()
    }
}

/// A key a sealed value needs: a player's, or a period's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Need {
    Player(Uuid, Uuid),
    Period(Uuid, FieldClass, u32),
}

impl Keyring {
    /// A keyring over the two privacy buckets; `seal` false leaves new writes in clear
    /// (`PRIVACY_ENCRYPTION=off`) while still opening what was sealed.
    pub fn new(players: kv::Store, accounts: kv::Store, master: MasterKey, seal: bool) -> Keyring {
        Keyring {
            inner: Arc::new(Inner {
                players,
                accounts,
                master,
                seal,
                cache: Mutex::new(Cache::default()),
            }),
        }
    }

    /// Whether [`seal`](Keyring::seal) seals (`PRIVACY_ENCRYPTION`).
    pub fn seals(&self) -> bool {
        self.inner.seal
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // A panic while holding the lock leaves plain maps behind: still usable.
        self.inner.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    // ---- sealing (ingest) ----

    /// Seals every personal field of `message` under keys of its account and the day it was
    /// received, creating keys it needs first. `policy` names the personal custom-event
    /// properties. Does nothing when sealing is off.
    pub async fn seal(
        &self,
        message: &mut LogMessage,
        policy: &PrivacyPolicy,
    ) -> Result<(), KeyringError> {
        if !self.inner.seal {
            return Ok(());
        }
        let account = message.account_id;
        let day = day_of(message.received_at);
        let mut wanted: HashSet<(Uuid, FieldClass)> = HashSet::new();
        for field in message.batch.personal_fields() {
            if has_clear_value(&field.slot, policy) {
                wanted.insert((field.subject, field.class));
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let mut needs: HashSet<Need> = HashSet::new();
        for &(subject, class) in &wanted {
            needs.insert(Need::Player(account, subject));
            if class.retention().is_some() {
                needs.insert(Need::Period(account, class, day));
            }
        }
        self.fetch(needs, true).await?;
        let ciphers: HashMap<(Uuid, FieldClass), Cipher> = {
            let mut cache = self.cache();
            wanted
                .into_iter()
                .filter_map(|(subject, class)| {
                    cipher(&mut cache, account, subject, class, day).map(|c| ((subject, class), c))
                })
                .collect()
        };
        for field in message.batch.personal_fields() {
            let Some(cipher) = ciphers.get(&(field.subject, field.class)) else {
                // Only a key destroyed between the fetch and here: the field reads as erased.
                erase(field.slot);
                continue;
            };
            let seal =
                |text: &str| seal_text(cipher, account, field.subject, field.class, day, text);
            match field.slot {
                Slot::Text(text) => *text = seal(text),
                Slot::OptionalText(text) => {
                    if let Some(text) = text {
                        *text = seal(text);
                    }
                }
                Slot::Texts(texts) => texts.iter_mut().for_each(|t| *t = seal(t)),
                Slot::Properties(props) => seal_properties(props, policy, &seal),
            }
        }
        Ok(())
    }

    // ---- opening (every reader of the log) ----

    /// Opens every sealed field of `messages` in place; a field whose key is gone reads as
    /// erased ([`ERASED`], `None`, an empty list, or `null`). Clear fields are left as they
    /// are (messages written before sealing, or with `PRIVACY_ENCRYPTION=off`).
    pub async fn open(&self, messages: &mut [LogMessage]) -> Result<(), KeyringError> {
        let mut needs: HashSet<Need> = HashSet::new();
        for message in messages.iter_mut() {
            let account = message.account_id;
            for field in message.batch.personal_fields() {
                for_each_sealed(&field.slot, |sealed| {
                    needs.insert(Need::Player(account, field.subject));
                    if sealed.class.retention().is_some() {
                        needs.insert(Need::Period(account, sealed.class, sealed.day));
                    }
                });
            }
        }
        if needs.is_empty() {
            return Ok(());
        }
        self.fetch(needs, false).await?;
        let mut cache = self.cache();
        for message in messages.iter_mut() {
            let account = message.account_id;
            for field in message.batch.personal_fields() {
                open_field(&mut cache, account, field);
            }
        }
        Ok(())
    }

    /// Loads the keys `needs` names into the cache, creating missing ones when `create`.
    async fn fetch(&self, needs: HashSet<Need>, create: bool) -> Result<(), KeyringError> {
        let missing: Vec<Need> = {
            let cache = self.cache();
            needs
                .into_iter()
                .filter(|need| match *need {
                    Need::Player(a, p) => match cache.players.get(&(a, p)) {
                        Some(entry) => create && entry.key.is_none(),
                        None => true,
                    },
                    Need::Period(a, c, d) => match cache.periods.get(&(a, c, d)) {
                        Some(key) => create && key.is_none(),
                        None => true,
                    },
                })
                .collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let loaded: Vec<(Need, Option<Arc<DataKey>>)> = futures::stream::iter(missing)
            .map(|need| async move {
                let (store, name) = match need {
                    Need::Player(a, p) => (&self.inner.players, player_name(a, p)),
                    Need::Period(a, c, d) => (&self.inner.accounts, period_name(a, c, d)),
                };
                let key = self.load_key(store, &name, create).await?;
                Ok::<_, KeyringError>((need, key.map(Arc::new)))
            })
            .buffer_unordered(FETCH_CONCURRENCY)
            .try_collect()
            .await?;
        let mut cache = self.cache();
        if cache.players.len() > MAX_CACHED_PLAYERS {
            cache.players.clear();
        }
        for (need, key) in loaded {
            match need {
                Need::Player(a, p) => {
                    cache.players.insert(
                        (a, p),
                        PlayerEntry {
                            key,
                            ..Default::default()
                        },
                    );
                }
                Need::Period(a, c, d) => {
                    cache.periods.insert((a, c, d), key);
                }
            }
        }
        Ok(())
    }
}
