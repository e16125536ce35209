//! The players rows a rebuild's bulk load keeps between its chunks ([`Kept`]), so that a chunk
//! reads back from the copy only the players it has not kept.
//!
//! A kept row is the row as stored: every time in it as PostgreSQL keeps it (microseconds,
//! [`as_stored`]), so the fold compares it and folds into it exactly as into the row read
//! back. A chunk takes its players' rows out while it applies and puts them back only once
//! its statements succeeded: a chunk PostgreSQL refuses keeps nothing of it, and its players
//! are read back at the next attempt.
//!
//! An erasure in a chunk scrubs the player's row in the erasure model's own transaction,
//! after this one, and the players fold may apply the next chunks before the scrub commits (it
//! runs ahead of the erasure model): an erased player is never kept again, so every later
//! chunk reads back whatever is stored, as the live projector's fold does.
//!
//! The copy starts empty and only the rebuild writes it, so while every row stored there is
//! kept, a player neither kept nor erased has no row to read back: the chunk's `SELECT` skips
//! such players (new to the log; on the benchmark's backlog about 7,700 of a chunk's 100,000
//! players, 1.4-1.6 s of the players fold's second transaction, the load's slowest). That
//! holds until a row is stored and not kept (past [`MAX_PLAYERS`]) or the kept rows are
//! [forgotten](Kept::forget); from then on every player not kept is read back, as before.

use super::{PlayerKey, PlayerRow};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// Players kept at most: about 0.5 KB each, so about 125 MB. Past it, a chunk reads back
/// the players it cannot keep, as without [`Kept`] (slower, never different).
pub(crate) const MAX_PLAYERS: usize = 250_000;

/// The players rows a rebuild wrote and committed to its copy, by player.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    rows: Mutex<Rows>,
}

#[derive(Debug, Default)]
struct Rows {
    kept: HashMap<PlayerKey, PlayerRow>,
    /// Players erased so far: never kept again.
    erased: HashSet<PlayerKey>,
    /// A row stored in the copy may not be kept: every player not kept is read back.
    partial: bool,
}

impl Kept {
    /// Takes out the kept rows of `keys`; returns them and the keys whose row the copy may
    /// store without it being kept (to read back): none of those it knows have no row.
    pub(super) fn take(
        &self,
        keys: Vec<PlayerKey>,
    ) -> (BTreeMap<PlayerKey, PlayerRow>, Vec<PlayerKey>) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found = BTreeMap::new();
        let mut missing = Vec::new();
        for key in keys {
            match rows.kept.remove(&key) {
                Some(row) => {
                    found.insert(key, row);
                }
                None if rows.partial || rows.erased.contains(&key) => missing.push(key),
                // Never stored: nothing to read back.
                None => {}
            }
        }
        (found, missing)
    }

    /// Puts back as they were the rows [`take`](Kept::take) took out (with those read back)
    /// for a chunk whose statements failed: PostgreSQL rolled back whatever they wrote, so the
    /// copy still stores these rows.
    pub(super) fn restore(&self, stored: BTreeMap<PlayerKey, PlayerRow>) {
        self.put_back(stored, Vec::new(), &HashSet::new());
    }

    /// Keeps the rows of a chunk's players as its statements stored them: `stored` (what the
    /// copy held) with `changed` (what the chunk wrote) over it; forgets the players `erased`
    /// names (kept from this chunk or an earlier one), and keeps none of them again.
    pub(super) fn put_back(
        &self,
        mut stored: BTreeMap<PlayerKey, PlayerRow>,
        changed: Vec<PlayerRow>,
        erased: &HashSet<PlayerKey>,
    ) {
        for row in changed {
            stored.insert((row.account_id, row.uuid), row.into_stored());
        }
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let Rows {
            kept,
            erased: ever,
            partial,
        } = &mut *rows;
        for key in erased {
            kept.remove(key);
            ever.insert(*key);
        }
        for (key, row) in stored {
            if ever.contains(&key) {
                continue;
            }
            if kept.len() >= MAX_PLAYERS && !kept.contains_key(&key) {
                *partial = true;
                continue;
            }
            kept.insert(key, row);
        }
    }

    /// Forgets every row kept (the players erased stay unkept): every player is read back
    /// from then on.
    pub(crate) fn forget(&self) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        rows.kept.clear();
        rows.partial = true;
    }

    /// How many rows are kept.
    pub(crate) fn len(&self) -> usize {
        self.rows.lock().map_or(0, |rows| rows.kept.len())
    }
}

impl PlayerRow {
    /// The row as PostgreSQL stores it: its times to the microsecond.
    fn into_stored(mut self) -> PlayerRow {
        self.first_seen = as_stored(self.first_seen);
        self.last_seen = as_stored(self.last_seen);
        for time in [
            &mut self.username_at,
            &mut self.rank_expires_at,
            &mut self.rank_changed_at,
            &mut self.linked_at,
        ] {
            *time = time.map(as_stored);
        }
        self
    }
}

/// `time` as a `timestamptz` stores it when the driver sends it: whole microseconds from
/// PostgreSQL's epoch (2000-01-01), the rest cut off towards the epoch, as sqlx encodes it.
fn as_stored(time: DateTime<Utc>) -> DateTime<Utc> {
    let epoch = DateTime::<Utc>::UNIX_EPOCH
        + TimeDelta::microseconds(crate::projections::bulk::PG_EPOCH_MICROS);
    match (time - epoch).num_microseconds() {
        Some(micros) => epoch + TimeDelta::microseconds(micros),
        None => time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).map_or(DateTime::UNIX_EPOCH, |t| t.to_utc())
    }

    fn row(player: u128, seen: &str) -> PlayerRow {
        let mut row = PlayerRow::first(&super::super::Sighting {
            account_id: Uuid::nil(),
            player: Uuid::from_u128(player),
            at: at(seen),
            seq: 1,
            name: None,
            change: super::super::Change::Seen,
        });
        row.username = Some("Alex".to_owned());
        row.username_at = Some(at(seen));
        row.username_seq = Some(1);
        row.names = vec!["Alex".to_owned()];
        row
    }

    #[test]
    fn times_are_kept_to_the_microsecond_cut_towards_postgresqls_epoch() {
        assert_eq!(
            as_stored(at("2026-11-01T10:00:00.0000009Z")),
            at("2026-11-01T10:00:00Z")
        );
        assert_eq!(
            as_stored(at("2026-11-01T10:00:00.123456Z")),
            at("2026-11-01T10:00:00.123456Z")
        );
        // Before 2000 the cut goes up, towards the epoch, as the driver's.
        assert_eq!(
            as_stored(at("1999-12-31T23:59:59.0000005Z")),
            at("1999-12-31T23:59:59.000001Z")
        );
        let kept = row(1, "2026-11-01T10:00:00.0000004Z").into_stored();
        assert_eq!(kept.username_at, Some(at("2026-11-01T10:00:00Z")));
        assert_eq!(kept.last_seen, at("2026-11-01T10:00:00Z"));
    }

    #[test]
    fn a_chunk_takes_its_players_out_and_puts_back_what_it_stored_less_the_erased() {
        let kept = Kept::default();
        let (a, b) = (
            (Uuid::nil(), Uuid::from_u128(1)),
            (Uuid::nil(), Uuid::from_u128(2)),
        );
        kept.put_back(
            BTreeMap::new(),
            vec![
                row(1, "2026-11-01T10:00:00Z"),
                row(2, "2026-11-01T10:00:00Z"),
            ],
            &HashSet::new(),
        );
        assert_eq!(kept.len(), 2);
        let (found, missing) = kept.take(vec![a, (Uuid::nil(), Uuid::from_u128(3))]);
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), [a]);
        assert_eq!(missing, [], "3 was never stored: nothing to read back");
        assert_eq!(kept.len(), 1, "taken out while the chunk applies");
        // Erased: b (kept from an earlier chunk) and a (this chunk's).
        kept.put_back(found, Vec::new(), &HashSet::from([a, b]));
        assert_eq!(kept.len(), 0);
        // Read back by a later chunk (maybe before the scrub committed): not kept again.
        kept.put_back(
            BTreeMap::new(),
            vec![
                row(1, "2026-11-01T12:00:00Z"),
                row(3, "2026-11-01T12:00:00Z"),
            ],
            &HashSet::new(),
        );
        assert_eq!(kept.len(), 1, "only the player never erased is kept");
        assert_eq!(kept.take(vec![a]).1, [a], "an erased player is read back");
    }

    #[test]
    fn once_a_stored_row_may_not_be_kept_every_player_not_kept_is_read_back() {
        let key = |p: u128| (Uuid::nil(), Uuid::from_u128(p));
        // Past the bound: the last row is stored, not kept.
        let kept = Kept::default();
        let rows: Vec<PlayerRow> = (0..MAX_PLAYERS as u128 + 1)
            .map(|p| row(p, "2026-11-01T10:00:00Z"))
            .collect();
        kept.put_back(BTreeMap::new(), rows, &HashSet::new());
        let (found, missing) = kept.take(vec![key(0), key(MAX_PLAYERS as u128 + 7)]);
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), [key(0)]);
        assert_eq!(missing, [key(MAX_PLAYERS as u128 + 7)]);

        // Forgotten (a rolled-back chunk kept rows it no longer stores).
        let kept = Kept::default();
        kept.put_back(
            BTreeMap::new(),
            vec![row(1, "2026-11-01T10:00:00Z")],
            &HashSet::new(),
        );
        assert_eq!(kept.take(vec![key(2)]).1, []);
        kept.forget();
        assert_eq!(kept.take(vec![key(1), key(2)]).1, [key(1), key(2)]);
    }

    #[test]
    fn a_chunk_that_failed_puts_back_the_rows_it_took_as_they_were() {
        let kept = Kept::default();
        let key = (Uuid::nil(), Uuid::from_u128(1));
        kept.put_back(
            BTreeMap::new(),
            vec![row(1, "2026-11-01T10:00:00Z")],
            &HashSet::new(),
        );
        let (found, _) = kept.take(vec![key]);
        assert_eq!(kept.len(), 0);
        kept.restore(found);
        let (found, missing) = kept.take(vec![key, (Uuid::nil(), Uuid::from_u128(2))]);
        assert_eq!(missing, [], "still every stored row kept");
        assert_eq!(
            found[&key].last_seen,
            at("2026-11-01T10:00:00Z"),
            "the row as it was stored"
        );
    }

    #[test]
    fn past_its_bound_it_keeps_no_new_player_yet_updates_those_it_keeps() {
        let kept = Kept::default();
        let rows: Vec<PlayerRow> = (0..MAX_PLAYERS as u128 + 1)
            .map(|p| row(p, "2026-11-01T10:00:00Z"))
            .collect();
        kept.put_back(BTreeMap::new(), rows, &HashSet::new());
        assert_eq!(kept.len(), MAX_PLAYERS);
        let key = (Uuid::nil(), Uuid::from_u128(0));
        let (found, _) = kept.take(vec![key]);
        let mut renamed = row(0, "2026-11-01T11:00:00Z");
        renamed.username = Some("Alexa".to_owned());
        kept.put_back(found, vec![renamed], &HashSet::new());
        let (found, _) = kept.take(vec![key]);
        assert_eq!(found[&key].username.as_deref(), Some("Alexa"));
    }
}
