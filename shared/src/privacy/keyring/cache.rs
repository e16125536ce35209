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
    /// Looked up since the cache last made room (see [`Cache::make_room`]).
    used: bool,
}

impl PlayerEntry {
    pub(super) fn new(key: Option<DataKey>) -> PlayerEntry {
        PlayerEntry {
            key,
            // Fetched because a call needs it now.
            used: true,
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
    pub(super) links: Map<Uuid, DataKey>,
}

impl Cache {
    /// Makes room for `incoming` more players under a bound of `bound` players: when they
    /// would not fit, the players not looked up since the last time room was made go, then
    /// (if the rest still fills more than half the bound) any others, down to half of it. A
    /// second chance rather than an order of use: sealing looks players up under one lock, and
    /// a flag is all it sets. Half, so room is made once per `bound / 2` new players, each
    /// time in one pass over the map.
    pub(super) fn make_room(&mut self, bound: usize, incoming: usize) {
        if self.players.len() + incoming <= bound {
            return;
        }
        self.players
            .retain(|_, entry| std::mem::take(&mut entry.used));
        let mut keep = (bound / 2).min(bound.saturating_sub(incoming));
        if self.players.len() > keep {
            self.players.retain(|_, _| {
                let kept = keep > 0;
                keep = keep.saturating_sub(1);
                kept
            });
        }
    }
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
    entry.used = true;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_of(players: &[Uuid]) -> Cache {
        let mut cache = Cache::default();
        for &p in players {
            cache
                .players
                .insert((Uuid::nil(), p), PlayerEntry::new(Some(DataKey::random())));
        }
        cache
    }

    fn look_up(cache: &mut Cache, player: Uuid) -> bool {
        field_key(cache, Uuid::nil(), player, FieldClass::Identity, 1).is_some()
    }

    #[test]
    fn room_is_made_only_when_the_newcomers_would_not_fit() {
        let players: Vec<Uuid> = (0..10).map(|_| Uuid::new_v4()).collect();
        let mut cache = cache_of(&players);
        cache.make_room(12, 2);
        assert_eq!(cache.players.len(), 10);
        cache.make_room(12, 3);
        assert_eq!(cache.players.len(), 6, "down to half the bound");
    }

    #[test]
    fn players_looked_up_since_room_was_last_made_stay() {
        let players: Vec<Uuid> = (0..100).map(|_| Uuid::new_v4()).collect();
        let mut cache = cache_of(&players);
        // Everyone starts needed; the first pass clears that, and halves the cache.
        cache.make_room(100, 1);
        assert_eq!(cache.players.len(), 50);
        let kept: Vec<Uuid> = cache.players.keys().map(|k| k.1).collect();
        for &p in &kept[..10] {
            assert!(look_up(&mut cache, p));
        }
        cache.make_room(50, 1);
        for &p in &kept[..10] {
            assert!(
                cache.players.contains_key(&(Uuid::nil(), p)),
                "a needed player went"
            );
        }
        assert_eq!(
            cache.players.len(),
            10,
            "only the needed ones fit under half"
        );
    }

    #[test]
    fn more_newcomers_than_the_bound_empty_the_cache() {
        let players: Vec<Uuid> = (0..8).map(|_| Uuid::new_v4()).collect();
        let mut cache = cache_of(&players);
        cache.make_room(8, 9);
        assert!(cache.players.is_empty());
    }
}
