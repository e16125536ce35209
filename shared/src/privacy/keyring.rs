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

use super::keys::{DataKey, MasterKey, MasterKeyError};
use super::properties;
use super::sealed::{ERASED, NONCE_LEN, SealedValue, associated_data, is_sealed};
use super::{Field, FieldClass, PrivacyPolicy, RetentionKind, Slot, day_of};
use crate::envelope::LogMessage;
use async_nats::jetstream::kv::{self, CreateErrorKind, Operation};
use bytes::Bytes;
use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, Payload};
use futures::{StreamExt, TryStreamExt};
use rand::RngCore;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Players whose keys a process caches at most; past it the cache starts again empty.
const MAX_CACHED_PLAYERS: usize = 500_000;
/// Key fetches in flight at once.
const FETCH_CONCURRENCY: usize = 64;
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

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

type Cipher = Arc<ChaCha20Poly1305>;

#[derive(Default)]
struct PlayerEntry {
    /// The player's key; `None` when the bucket has none (never made, or destroyed).
    key: Option<Arc<DataKey>>,
    /// Field ciphers derived from it, by class and day.
    ciphers: HashMap<(FieldClass, u32), Cipher>,
}

#[derive(Default)]
struct Cache {
    players: HashMap<(Uuid, Uuid), PlayerEntry>,
    periods: HashMap<(Uuid, FieldClass, u32), Option<Arc<DataKey>>>,
    policies: HashMap<Uuid, Arc<PrivacyPolicy>>,
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

fn player_name(account: Uuid, player: Uuid) -> String {
    format!("p.{account}.{player}")
}

fn period_name(account: Uuid, class: FieldClass, day: u32) -> String {
    format!("d.{account}.{}.{day}", class.as_str())
}

fn policy_name(account: Uuid) -> String {
    format!("policy.{account}")
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

    /// The key stored under `name`; when there is none and `create`, a new one, stored first.
    async fn load_key(
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
        let names: Vec<String> = self
            .inner
            .accounts
            .keys()
            .await
            .map_err(unavailable)?
            .try_collect()
            .await
            .map_err(unavailable)?;
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
        let names: Vec<String> = self
            .inner
            .accounts
            .keys()
            .await
            .map_err(unavailable)?
            .try_collect()
            .await
            .map_err(unavailable)?;
        let mut policies = Vec::new();
        for name in names {
            let Some(account) = name.strip_prefix("policy.").and_then(|a| a.parse().ok()) else {
                continue;
            };
            policies.push((account, (*self.policy(account).await?).clone()));
        }
        Ok(policies)
    }

    // ---- the watch ----

    /// Keeps this process's caches in line with the buckets until `shutdown`: a destroyed or
    /// new key, or a changed policy, drops what was cached for it. After any watch error the
    /// caches are emptied (they refill on demand) and the watch starts again.
    pub fn spawn_watch(&self, shutdown: CancellationToken) -> JoinHandle<()> {
        let keyring = self.clone();
        tokio::spawn(async move {
            let mut backoff = MIN_BACKOFF;
            loop {
                let result = tokio::select! {
                    () = shutdown.cancelled() => return,
                    result = keyring.watch_once() => result,
                };
                if shutdown.is_cancelled() {
                    return;
                }
                *keyring.cache() = Cache::default();
                match result {
                    Ok(()) => backoff = MIN_BACKOFF,
                    Err(error) => {
                        tracing::warn!(%error, retry_in = ?backoff, "privacy bucket watch failed");
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
            }
        })
    }

    async fn watch_once(&self) -> Result<(), KeyringError> {
        let players = self.inner.players.watch_all().await.map_err(unavailable)?;
        let accounts = self.inner.accounts.watch_all().await.map_err(unavailable)?;
        // Anything cached before the watches started may be stale.
        *self.cache() = Cache::default();
        let mut changes = futures::stream::select(players, accounts);
        while let Some(entry) = changes.next().await {
            let entry = entry.map_err(unavailable)?;
            self.changed(&entry.key, entry.operation);
        }
        Ok(())
    }

    /// Drops what the cache holds for the bucket entry `name`.
    fn changed(&self, name: &str, operation: Operation) {
        let mut cache = self.cache();
        let mut parts = name.split('.');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("p"), Some(account), Some(player), None) => {
                if let (Ok(a), Ok(p)) = (account.parse(), player.parse()) {
                    cache.players.remove(&(a, p));
                }
            }
            (Some("d"), Some(account), Some(class), Some(day)) => {
                if let (Ok(a), Some(c), Ok(d)) =
                    (account.parse(), FieldClass::parse(class), day.parse())
                {
                    forget_period(&mut cache, a, c, d);
                }
            }
            (Some("policy"), Some(account), None, None) => {
                if let Ok(a) = account.parse() {
                    cache.policies.remove(&a);
                }
            }
            _ => tracing::debug!(name, ?operation, "unknown privacy bucket entry"),
        }
    }
}

/// Drops a period key and every field cipher derived from it.
fn forget_period(cache: &mut Cache, account: Uuid, class: FieldClass, day: u32) {
    cache.periods.remove(&(account, class, day));
    for ((a, _), entry) in cache.players.iter_mut() {
        if *a == account {
            entry.ciphers.remove(&(class, day));
        }
    }
}

/// The cipher for a field, from cached keys; `None` when a key it needs is gone.
fn cipher(
    cache: &mut Cache,
    account: Uuid,
    subject: Uuid,
    class: FieldClass,
    day: u32,
) -> Option<Cipher> {
    let period = match class.retention() {
        Some(_) => Some(cache.periods.get(&(account, class, day))?.clone()?),
        None => None,
    };
    let entry = cache.players.get_mut(&(account, subject))?;
    let key = entry.key.clone()?;
    let cipher = entry
        .ciphers
        .entry((class, day))
        .or_insert_with(|| Arc::new(key.field_cipher(class, day, period.as_deref())));
    Some(cipher.clone())
}

fn seal_text(
    cipher: &ChaCha20Poly1305,
    account: Uuid,
    subject: Uuid,
    class: FieldClass,
    day: u32,
    text: &str,
) -> String {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    let aad = associated_data(account, subject, class, day);
    #[allow(clippy::expect_used)]
    let ciphertext = cipher
        .encrypt(
            (&nonce).into(),
            Payload {
                msg: text.as_bytes(),
                aad: &aad,
            },
        )
        // Fails only for messages over 256 GiB; a field is at most 64 KiB.
        .expect("ChaCha20-Poly1305 seals any message shorter than 256 GiB");
    SealedValue {
        class,
        day,
        nonce,
        ciphertext,
    }
    .encode()
}

/// The clear text of a sealed value, or `None` when it cannot be opened (a key is gone).
fn open_text(cache: &mut Cache, account: Uuid, subject: Uuid, text: &str) -> Option<String> {
    let sealed = SealedValue::decode(text)?;
    let cipher = cipher(cache, account, subject, sealed.class, sealed.day)?;
    let aad = associated_data(account, subject, sealed.class, sealed.day);
    let clear = cipher
        .decrypt(
            (&sealed.nonce).into(),
            Payload {
                msg: &sealed.ciphertext,
                aad: &aad,
            },
        )
        .ok()?;
    String::from_utf8(clear).ok()
}

fn open_field(cache: &mut Cache, account: Uuid, field: Field<'_>) {
    let subject = field.subject;
    let mut open = |text: &str| open_text(cache, account, subject, text);
    match field.slot {
        Slot::Text(text) if is_sealed(text) => {
            *text = open(text).unwrap_or_else(|| ERASED.to_owned());
        }
        Slot::OptionalText(slot) => {
            if let Some(text) = slot.as_deref()
                && is_sealed(text)
            {
                *slot = open(text);
            }
        }
        Slot::Texts(texts) => {
            let mut opened = Vec::with_capacity(texts.len());
            for text in texts.iter() {
                if !is_sealed(text) {
                    opened.push(text.clone());
                } else if let Some(clear) = open(text) {
                    opened.push(clear);
                }
            }
            *texts = opened;
        }
        Slot::Properties(props) => {
            let Some(raw) = props.as_deref() else { return };
            if !raw.get().contains("\\u0000w1.") {
                return;
            }
            let Some(mut entries) = properties::split(raw) else {
                return;
            };
            for (_, value) in entries.iter_mut() {
                if let Some(text) = properties::string_of(value)
                    && is_sealed(&text)
                {
                    *value = open(&text)
                        .and_then(|clear| serde_json::value::RawValue::from_string(clear).ok())
                        .unwrap_or_else(properties::null);
                }
            }
            *props = Some(properties::join(&entries));
        }
        Slot::Text(_) => {}
    }
}

/// Calls `f` with the header of every sealed value in `slot`.
fn for_each_sealed(slot: &Slot<'_>, mut f: impl FnMut(&SealedValue)) {
    let mut one = |text: &str| {
        if let Some(sealed) = SealedValue::decode(text) {
            f(&sealed);
        }
    };
    match slot {
        Slot::Text(text) => one(text),
        Slot::OptionalText(text) => text.iter().for_each(|t| one(t)),
        Slot::Texts(texts) => texts.iter().for_each(|t| one(t)),
        Slot::Properties(props) => {
            if let Some(raw) = props.as_deref()
                && raw.get().contains("\\u0000w1.")
                && let Some(entries) = properties::split(raw)
            {
                for (_, value) in &entries {
                    if let Some(text) = properties::string_of(value) {
                        one(&text);
                    }
                }
            }
        }
    }
}

/// True when `slot` holds something to seal.
fn has_clear_value(slot: &Slot<'_>, policy: &PrivacyPolicy) -> bool {
    match slot {
        Slot::Text(text) => !is_sealed(text),
        Slot::OptionalText(text) => text.as_deref().is_some_and(|t| !is_sealed(t)),
        Slot::Texts(texts) => texts.iter().any(|t| !is_sealed(t)),
        Slot::Properties(props) => {
            !policy.personal_properties.is_empty()
                && props
                    .as_deref()
                    .and_then(properties::split)
                    .is_some_and(|entries| {
                        entries.iter().any(|(k, _)| policy.is_personal_property(k))
                    })
        }
    }
}

fn seal_properties(
    props: &mut Option<Box<serde_json::value::RawValue>>,
    policy: &PrivacyPolicy,
    seal: &dyn Fn(&str) -> String,
) {
    let Some(mut entries) = props.as_deref().and_then(properties::split) else {
        return;
    };
    let mut changed = false;
    for (key, value) in entries.iter_mut() {
        if policy.is_personal_property(key) {
            *value = properties::string_value(&seal(value.get()));
            changed = true;
        }
    }
    if changed {
        *props = Some(properties::join(&entries));
    }
}

/// Sets a slot to its erased value.
fn erase(slot: Slot<'_>) {
    match slot {
        Slot::Text(text) => *text = ERASED.to_owned(),
        Slot::OptionalText(text) => *text = None,
        Slot::Texts(texts) => texts.clear(),
        Slot::Properties(_) => {}
    }
}
