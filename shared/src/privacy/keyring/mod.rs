//! The keys every replica seals and opens personal fields with: kept in two key-value buckets,
//! cached per process, and dropped from every cache when destroyed.
//!
//! - players bucket: `p.<account>.<player>` -> the player's data key (wrapped);
//! - accounts bucket: `d.<account>.<class>.<day>` -> a period key (wrapped),
//!   `policy.<account>` -> the account's [`PrivacyPolicy`] (JSON), and `links.<account>` ->
//!   the key the account's signed links (appeal links) are signed with (wrapped).
//!
//! Ingest creates keys as it first needs them (`create` is atomic, so two replicas agree on one
//! key) and waits for the bucket's ack before appending anything sealed with them. Destroying
//! a key purges its entry; [`Keyring::spawn_watch`] then drops it from this process's caches,
//! and every other process's watch does the same.

mod cache;
mod codec;
mod links;
mod store;
mod watch;

pub use links::LinkKey;

use super::keys::{DataKey, FieldKey, MasterKey, MasterKeyError};
use super::{Field, FieldClass, PrivacyPolicy, Slot, day_of};
use crate::envelope::LogMessage;
use async_nats::jetstream::kv;
use cache::{Cache, PlayerEntry, field_key};
use codec::{Sealer, erase, for_each_sealed, has_clear_value, open_field, seal_properties};
use futures::{StreamExt, TryFutureExt, TryStreamExt};
use std::sync::{Arc, Mutex, MutexGuard};
use store::{period_name, player_name};
use uuid::Uuid;

/// Players whose keys a process caches at most unless told otherwise
/// (`PRIVACY_KEY_CACHE_PLAYERS`): about 330 bytes each, so about 40 MiB when full.
pub const DEFAULT_CACHED_PLAYERS: usize = 100_000;
/// Key fetches in flight at once for one call, and for the whole process: a burst of new
/// players (or a restart under load) queues here instead of holding thousands of bucket
/// requests, and the requests waiting on them, in memory at once.
const FETCH_CONCURRENCY: usize = 64;
const PROCESS_FETCH_CONCURRENCY: usize = 256;

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
    /// Players whose keys [`Inner::cache`] holds at most (see [`Cache::make_room`]).
    cached_players: usize,
    fetch_slots: Arc<tokio::sync::Semaphore>,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Need {
    Player(Uuid, Uuid),
    Period(Uuid, FieldClass, u32),
}

/// The keys sealing `fields` of `account` on `day` needs: each player's, and the day's key of
/// each class with a retention, each named once (a chat message's fields name the same few
/// players and one day over and over).
fn needs_of(account: Uuid, fields: &[Field<'_>], day: u32) -> Vec<Need> {
    let mut needs: Vec<Need> = Vec::with_capacity(fields.len() + 1);
    // A class of each of the few a message can have.
    let mut periods: Vec<Need> = Vec::new();
    let mut last_player = None;
    for field in fields {
        if last_player != Some(field.subject) {
            last_player = Some(field.subject);
            needs.push(Need::Player(account, field.subject));
        }
        let period = Need::Period(account, field.class, day);
        if field.class.retention().is_some() && !periods.contains(&period) {
            periods.push(period);
        }
    }
    needs.append(&mut periods);
    needs
}

impl Keyring {
    /// A keyring over the two privacy buckets; `seal` false leaves new writes in clear
    /// (`PRIVACY_ENCRYPTION=off`) while still opening what was sealed. It caches the keys of
    /// at most `cached_players` players (at least 1).
    pub fn new(
        players: kv::Store,
        accounts: kv::Store,
        master: MasterKey,
        seal: bool,
        cached_players: usize,
    ) -> Keyring {
        Keyring {
            inner: Arc::new(Inner {
                players,
                accounts,
                master,
                seal,
                cache: Mutex::new(Cache::default()),
                cached_players: cached_players.max(1),
                fetch_slots: Arc::new(tokio::sync::Semaphore::new(PROCESS_FETCH_CONCURRENCY)),
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
    /// received, creating keys it needs first. `policy` names the custom-event properties
    /// kept in clear (every other property value is sealed). Does nothing when sealing is off.
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
        let mut fields = message.batch.personal_fields();
        fields.retain(|field| has_clear_value(&field.slot, policy));
        if fields.is_empty() {
            return Ok(());
        }
        // Looked up under the lock, sealed after it: requests seal side by side. Keys not
        // cached are fetched (or made) first, and looked up again: one lookup per field when
        // every key is cached, as under a steady load (each player's entry is a likely cache
        // miss of the CPU's, so the lookups are what sealing costs besides the cipher).
        let mut keys = self.field_keys(account, &fields, day);
        if keys.iter().any(Option::is_none) {
            self.fetch(needs_of(account, &fields, day), true).await?;
            keys = self.field_keys(account, &fields, day);
        }
        let mut sealer = Sealer::new(account, day);
        for (field, key) in fields.into_iter().zip(keys) {
            let Some(key) = key else {
                // Only a key destroyed between the fetch and here: the field reads as erased.
                erase(field.slot);
                continue;
            };
            let cipher = key.cipher();
            let (subject, class) = (field.subject, field.class);
            let mut seal = |text: &str| sealer.seal(&cipher, subject, class, text);
            match field.slot {
                Slot::Text(text) => *text = seal(text),
                Slot::OptionalText(text) => {
                    if let Some(text) = text {
                        *text = seal(text);
                    }
                }
                Slot::Texts(texts) => texts.iter_mut().for_each(|t| *t = seal(t)),
                Slot::Properties(props) => seal_properties(props, policy, &mut seal),
            }
        }
        Ok(())
    }

    /// The cached key of each of `fields` (of `account`, sealed on `day`), `None` where one
    /// is not cached.
    fn field_keys(&self, account: Uuid, fields: &[Field<'_>], day: u32) -> Vec<Option<FieldKey>> {
        let mut cache = self.cache();
        fields
            .iter()
            .map(|f| field_key(&mut cache, account, f.subject, f.class, day))
            .collect()
    }

    // ---- opening (every reader of the log) ----

    /// Opens every sealed field of `messages` in place; a field whose key is gone reads as
    /// erased ([`ERASED`], `None`, an empty list, or `null`). Clear fields are left as they
    /// are (messages written before sealing, or with `PRIVACY_ENCRYPTION=off`).
    pub async fn open(&self, messages: &mut [LogMessage]) -> Result<(), KeyringError> {
        let mut needs = Vec::new();
        for message in messages.iter_mut() {
            let account = message.account_id;
            for field in message.batch.personal_fields() {
                for_each_sealed(&field.slot, |sealed| {
                    needs.push(Need::Player(account, field.subject));
                    if sealed.class.retention().is_some() {
                        needs.push(Need::Period(account, sealed.class, sealed.day));
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

    /// Loads the keys `needs` names (repeats allowed) into the cache, creating missing ones
    /// when `create`.
    async fn fetch(&self, mut needs: Vec<Need>, create: bool) -> Result<(), KeyringError> {
        let missing: Vec<Need> = {
            let cache = self.cache();
            let mut missing: Vec<Need> = needs
                .drain(..)
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
                .collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        if missing.is_empty() {
            return Ok(());
        }
        // The process-wide slot is taken (one at a time per call) before a fetch's future is
        // made: a fetch future is a few KiB, and made first, every waiting call held
        // FETCH_CONCURRENCY of them while queued for a slot (256 writes x 64 during a burst
        // of new players: tens of MiB of futures doing nothing).
        let slots = self.inner.fetch_slots.clone();
        let loaded: Vec<(Need, Option<DataKey>)> = futures::stream::iter(missing)
            .then(move |need| {
                slots
                    .clone()
                    .acquire_owned()
                    .map_ok(move |slot| (need, slot))
            })
            .map(|acquired| async move {
                let (need, _slot) = acquired.map_err(unavailable)?;
                let (store, name) = match need {
                    Need::Player(a, p) => (&self.inner.players, player_name(a, p)),
                    Need::Period(a, c, d) => (&self.inner.accounts, period_name(a, c, d)),
                };
                let key = self.load_key(store, &name, create).await?;
                Ok::<_, KeyringError>((need, key))
            })
            .buffer_unordered(FETCH_CONCURRENCY)
            .try_collect()
            .await?;
        let mut cache = self.cache();
        let players = loaded
            .iter()
            .filter(|(need, _)| matches!(need, Need::Player(..)))
            .count();
        cache.make_room(self.inner.cached_players, players);
        for (need, key) in loaded {
            match need {
                Need::Player(a, p) => {
                    cache.players.insert((a, p), PlayerEntry::new(key));
                }
                Need::Period(a, c, d) => {
                    cache.periods.insert((a, c, d), key);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_player_in_a_row_and_each_days_key_is_needed_once() {
        let (account, a, b) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut texts: Vec<String> = (0..6).map(|i| format!("text {i}")).collect();
        let mut slots = texts.iter_mut();
        let mut field = |subject, class| Field {
            subject,
            class,
            slot: Slot::Text(slots.next().expect("a text")),
        };
        // Three chat records: each a name and a message of its player.
        let fields = [
            field(a, FieldClass::Identity),
            field(a, FieldClass::Chat),
            field(b, FieldClass::Identity),
            field(b, FieldClass::Chat),
            field(a, FieldClass::Identity),
            field(a, FieldClass::Chat),
        ];
        assert_eq!(
            needs_of(account, &fields, 7),
            [
                Need::Player(account, a),
                Need::Player(account, b),
                Need::Player(account, a),
                Need::Period(account, FieldClass::Chat, 7),
            ]
        );
    }
}
