//! What a process holds in memory: players' keys and the ciphers derived from them, period
//! keys, and policies.

use crate::privacy::keys::DataKey;
use crate::privacy::{FieldClass, PrivacyPolicy};
use ring::aead::LessSafeKey;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

pub(super) type Cipher = Arc<LessSafeKey>;

#[derive(Default)]
pub(super) struct PlayerEntry {
    /// The player's key; `None` when the bucket has none (never made, or destroyed).
    pub(super) key: Option<Arc<DataKey>>,
    /// Field ciphers derived from it, by class and day.
    pub(super) ciphers: HashMap<(FieldClass, u32), Cipher>,
}

#[derive(Default)]
pub(super) struct Cache {
    pub(super) players: HashMap<(Uuid, Uuid), PlayerEntry>,
    pub(super) periods: HashMap<(Uuid, FieldClass, u32), Option<Arc<DataKey>>>,
    pub(super) policies: HashMap<Uuid, Arc<PrivacyPolicy>>,
}

/// Drops a period key and every field cipher derived from it.
pub(super) fn forget_period(cache: &mut Cache, account: Uuid, class: FieldClass, day: u32) {
    cache.periods.remove(&(account, class, day));
    for ((a, _), entry) in cache.players.iter_mut() {
        if *a == account {
            entry.ciphers.remove(&(class, day));
        }
    }
}

/// The cipher for a field, from cached keys; `None` when a key it needs is gone.
pub(super) fn cipher(
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
