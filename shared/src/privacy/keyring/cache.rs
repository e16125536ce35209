//! What a process holds in memory: players' keys with the field keys derived from them,
//! period keys, and policies.
//!
//! Sealing looks a player up once per field, so an entry is kept small and flat: the player's
//! key and its last few field keys sit inline in the map's slot (no pointer to follow), and
//! the maps hash with foldhash rather than SipHash (the keys are UUIDs we chose, not input an
//! attacker picks to collide).

use crate::privacy::keys::{DataKey, FieldKey};
use crate::privacy::{FieldClass, PrivacyPolicy};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Field keys kept per player: one per class for the current day, plus room for the day
/// before while a day turns (older ones are derived again when needed).
const FIELD_KEYS_PER_PLAYER: usize = 6;

#[derive(Debug, Clone, Copy)]
struct Derived {
    class: FieldClass,
    day: u32,
    key: FieldKey,
}

#[derive(Debug, Default)]
pub(super) struct PlayerEntry {
    /// The player's key; `None` when the bucket has none (never made, or destroyed).
    pub(super) key: Option<DataKey>,
    /// Field keys derived from it, by class and day; replaced in turn when full.
    derived: [Option<Derived>; FIELD_KEYS_PER_PLAYER],
    /// The slot of `derived` the next new field key takes.
    next: usize,
}

impl PlayerEntry {
    pub(super) fn new(key: Option<DataKey>) -> PlayerEntry {
        PlayerEntry {
            key,
            ..PlayerEntry::default()
        }
    }

    fn field_key(&self, class: FieldClass, day: u32) -> Option<FieldKey> {
        self.derived
            .iter()
            .flatten()
            .find(|d| d.class == class && d.day == day)
            .map(|d| d.key)
    }

    fn remember(&mut self, class: FieldClass, day: u32, key: FieldKey) {
        self.derived[self.next] = Some(Derived { class, day, key });
        self.next = (self.next + 1) % FIELD_KEYS_PER_PLAYER;
    }

    fn forget(&mut self, class: FieldClass, day: u32) {
        for slot in &mut self.derived {
            if slot.is_some_and(|d| d.class == class && d.day == day) {
                *slot = None;
            }
        }
    }
}

#[derive(Default)]
pub(super) struct Cache {
    pub(super) players: Map<(Uuid, Uuid), PlayerEntry>,
    pub(super) periods: Map<(Uuid, FieldClass, u32), Option<DataKey>>,
    pub(super) policies: Map<Uuid, Arc<PrivacyPolicy>>,
}

/// Drops a period key and every field key derived from it.
pub(super) fn forget_period(cache: &mut Cache, account: Uuid, class: FieldClass, day: u32) {
    cache.periods.remove(&(account, class, day));
    for ((a, _), entry) in cache.players.iter_mut() {
        if *a == account {
            entry.forget(class, day);
        }
    }
}

/// The key of a field, from cached keys; `None` when a key it needs is gone.
pub(super) fn field_key(
    cache: &mut Cache,
    account: Uuid,
    subject: Uuid,
    class: FieldClass,
    day: u32,
) -> Option<FieldKey> {
    let entry = cache.players.get_mut(&(account, subject))?;
    if let Some(key) = entry.field_key(class, day) {
        return Some(key);
    }
    let player = entry.key.as_ref()?;
    let period = match class.retention() {
        Some(_) => Some(cache.periods.get(&(account, class, day))?.as_ref()?),
        None => None,
    };
    let key = player.field_key(class, day, period);
    entry.remember(class, day, key);
    Some(key)
}
