//! Personal data in an append-only log: crypto-shredding.
//!
//! The event log denies delete and purge (a replay rebuilds every view), so personal fields
//! cannot be deleted from it. Instead ingest seals them ([`Keyring::seal`]) before the append,
//! each with a key derived from
//!
//! - the **player's data key** (one per account and player), destroyed to erase the player;
//! - for fields kept for a limited time, the **period key** of the account, the field's class
//!   and the UTC day ingest received it, destroyed when that day leaves the account's retention.
//!
//! Every reader of the log (projector, rebuild, notifier, query-api's live stream and its
//! backfill) opens messages with [`Keyring::open`]: a field whose key is gone reads as erased
//! (an empty string, `None`, or `null` for a custom-event property), so no replay brings it back.
//!
//! Keys live in two JetStream key-value buckets every replica can read ([`PrivacyBuckets`]),
//! wrapped by the master key from `PRIVACY_MASTER_KEY`; each process caches them and drops
//! what it cached when a key is destroyed (a watch on both buckets).
//!
//! | Class | Fields | Key |
//! |---|---|---|
//! | [`FieldClass::Identity`] | player and staff names, punishment reasons, account-link ids and names, note text and links | player key |
//! | [`FieldClass::Chat`] | chat message and command text | player key + chat period key |
//! | [`FieldClass::IpHash`] | session IP hashes | player key + IP-hash period key |
//! | [`FieldClass::EventProperties`] | custom-event property values, but those the account keeps in clear | player key + custom-event period key |
//!
//! UUIDs (players, servers, punishments) stay clear: every read model joins on them.

mod class;
mod config;
mod fields;
mod keyring;
mod keys;
mod policy;
mod properties;
mod sealed;
#[cfg(test)]
mod tests;

pub use class::{FieldClass, RetentionKind, day_of, day_start};
pub use config::{PrivacyBuckets, PrivacyConfig};
pub use fields::{Field, Personal, Slot};
pub use keyring::{DEFAULT_CACHED_PLAYERS, Keyring, KeyringError, LinkKey};
pub use keys::{MIN_MASTER_KEY_LEN, MasterKey, MasterKeyError};
pub use policy::{MAX_PERSONAL_PROPERTIES, MAX_RETENTION_DAYS, PrivacyPolicy, RetentionDays};
pub use sealed::{ERASED, is_sealed};
