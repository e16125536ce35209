//! The players rows a rebuild's bulk load keeps between its chunks ([`KeptRows`]), so that a
//! chunk reads back from the copy only the players it has not kept, and, during the load,
//! writes most of them once, at its end, rather than at every chunk ([`super::bulk`]).
//!
//! A kept row is the row as stored (or as it will be): every time in it as PostgreSQL keeps it
//! (microseconds, [`as_stored`]), so the fold compares it and folds into it exactly as into the
//! row read back. A chunk takes its players' rows out while it applies, puts them back once its
//! statements succeeded, and puts back those it took as they were when they failed (the
//! statements' rollback left the copy as it was).
//!
//! An erasure in a chunk scrubs the player's row in the erasure model's own transaction,
//! after this one, and the players fold may apply the next chunks before the scrub commits (it
//! runs ahead of the erasure model): an erased player is never kept again, so every later
//! chunk reads back whatever is stored, as the live projector's fold does.
//!
//! The copy starts empty and only the rebuild writes it, so while every row stored there is
//! kept, a player neither kept nor erased has no row to read back: the chunk's `SELECT` skips
//! such players (new to the log). That holds until a row is stored and not kept (past the
//! bound) or the kept rows are [forgotten](KeptRows::forget); from then on every
//! player not kept is read back, as before.
//!
//! While the load [defers](KeptRows::defer) its writes, a kept row may be *unwritten*: the copy
//! does not store it yet (or stores an older version), and [`super::bulk::write_kept`] writes
//! it before anything else reads the copy's `players` table. A chunk leaves its rows unwritten
//! only when room for every one of its players is reserved first, so unwritten rows never take
//! the kept rows past the bound either, and forgetting one loses it for good
//! ([`KeptRows::unwritten`] then refuses).

use super::{PlayerKey, PlayerRow};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// Players kept at most unless told otherwise (`PROJECTOR_REBUILD_KEPT_PLAYERS`). Past the
/// bound, a chunk reads back the players it cannot keep, as without [`KeptRows`] (slower,
/// never different), and writes its rows at once.
pub(crate) const MAX_PLAYERS: usize = 100_000;

/// The players rows a rebuild wrote and committed to its copy (or keeps to write at the
/// load's end), by player; never more than its bound ([`KeptRows::with_most`]).
#[derive(Debug)]
pub(crate) struct KeptRows {
    rows: Mutex<Rows>,
    most: usize,
}

impl Default for KeptRows {
    fn default() -> Self {
        KeptRows::with_most(MAX_PLAYERS)
    }
}

/// A kept row, and whether the copy stores it yet.
#[derive(Debug)]
struct Entry {
    row: PlayerRow,
    unwritten: bool,
}

#[derive(Debug, Default)]
struct Rows {
    kept: HashMap<PlayerKey, Entry>,
    /// Players erased so far: never kept again.
    erased: HashSet<PlayerKey>,
    /// A row stored in the copy may not be kept: every player not kept is read back.
    partial: bool,
    /// Chunks may leave their rows unwritten (the load).
    deferring: bool,
    /// Unwritten rows were forgotten: the copy misses them.
    lost: bool,
    /// Room promised to chunks applying now that may leave their rows unwritten (one per
    /// player each names): what they keep never takes the kept rows past the bound.
    reserved: usize,
    /// The most rows kept at once so far.
    peak: usize,
}

/// What a chunk took out of [`KeptRows`] for its players.
#[derive(Debug, Default)]
pub(super) struct Taken {
    /// Their rows: the kept ones, then those read back.
    pub(super) rows: BTreeMap<PlayerKey, PlayerRow>,
    /// Those the copy does not store yet.
    pub(super) unwritten: HashSet<PlayerKey>,
    /// Those erased by an earlier chunk: their rows are written at once, never kept.
    pub(super) erased: HashSet<PlayerKey>,
    /// Whether the chunk may leave its rows unwritten: the load defers its writes, and there
    /// is room to keep them.
    pub(super) defer: bool,
    /// The room reserved for it in [`KeptRows`] (its players, when it may defer).
    reserved: usize,
}

/// Unwritten rows were forgotten (a transaction that left them so was rolled back): the copy
/// misses them, and the rebuild must start again.
#[derive(Debug, thiserror::Error)]
#[error(
    "rows the rebuild kept in memory to write at the load's end were lost (a transaction \
     that kept them was rolled back); the copy is incomplete and the rebuild must start again"
)]
pub(crate) struct Lost;

impl KeptRows {
    /// Keeps at most `most` rows at once (at least one).
    pub(crate) fn with_most(most: usize) -> Self {
        KeptRows {
            rows: Mutex::default(),
            most: most.max(1),
        }
    }

    /// From now on a chunk may leave its rows unwritten, until [`written`](KeptRows::written).
    pub(crate) fn defer(&self) {
        self.lock().deferring = true;
    }

    /// Whether chunks may leave their rows unwritten.
    pub(crate) fn deferring(&self) -> bool {
        self.lock().deferring
    }

    /// Takes out the kept rows of `keys`; returns them and the keys whose row the copy may
    /// store without it being kept (to read back): none of those it knows have no row.
    pub(super) fn take(
        &self,
        keys: impl IntoIterator<Item = PlayerKey>,
    ) -> (Taken, Vec<PlayerKey>) {
        let mut rows = self.lock();
        let mut taken = Taken::default();
        let mut missing = Vec::new();
        let mut players = 0;
        for key in keys {
            players += 1;
            if rows.erased.contains(&key) {
                taken.erased.insert(key);
            }
            match rows.kept.remove(&key) {
                Some(Entry { row, unwritten }) => {
                    if unwritten {
                        taken.unwritten.insert(key);
                    }
                    taken.rows.insert(key, row);
                }
                None if rows.partial || rows.erased.contains(&key) => missing.push(key),
                // Never stored: nothing to read back.
                None => {}
            }
        }
        // Every player of the chunk may come back kept and unwritten: defer only when they
        // all fit beside what is kept and promised to other chunks.
        if rows.deferring && rows.kept.len() + rows.reserved + players <= self.most {
            rows.reserved += players;
            taken.reserved = players;
            taken.defer = true;
        }
        (taken, missing)
    }

    /// Puts back as they were the rows [`take`](KeptRows::take) took out (with those read
    /// back) for a chunk whose statements failed: PostgreSQL rolled back whatever they wrote,
    /// so the copy still stores (or still misses) these rows.
    pub(super) fn restore(&self, taken: Taken) {
        let unwritten = taken.unwritten.clone();
        self.keep(taken.rows, taken.reserved, &HashSet::new(), |key| {
            unwritten.contains(key)
        });
    }

    /// Keeps the rows of a chunk's players as its statements left them: `taken` (what the
    /// copy held or was to hold) with `changed` (what the chunk folded) over it, unwritten
    /// unless `written` has them; forgets the players `erased` names (kept from this chunk or
    /// an earlier one), and keeps none of them again.
    pub(super) fn put_back(
        &self,
        taken: Taken,
        changed: Vec<PlayerRow>,
        erased: &HashSet<PlayerKey>,
        written: &HashSet<PlayerKey>,
    ) {
        let Taken {
            mut rows,
            mut unwritten,
            reserved,
            ..
        } = taken;
        for row in changed {
            let key = (row.account_id, row.uuid);
            unwritten.insert(key);
            rows.insert(key, row.into_stored());
        }
        self.keep(rows, reserved, erased, |key| {
            unwritten.contains(key) && !written.contains(key)
        });
    }

    fn keep(
        &self,
        taken: BTreeMap<PlayerKey, PlayerRow>,
        reserved: usize,
        erased: &HashSet<PlayerKey>,
        unwritten: impl Fn(&PlayerKey) -> bool,
    ) {
        let mut rows = self.lock();
        let Rows {
            kept,
            erased: ever,
            partial,
            reserved: promised,
            peak,
            ..
        } = &mut *rows;
        *promised = promised.saturating_sub(reserved);
        for key in erased {
            kept.remove(key);
            ever.insert(*key);
        }
        for (key, row) in taken {
            let unwritten = unwritten(&key);
            // An erased player's row is always written at once (`Taken::erased`).
            if ever.contains(&key) {
                continue;
            }
            if !unwritten && kept.len() + *promised >= self.most && !kept.contains_key(&key) {
                *partial = true;
                continue;
            }
            kept.insert(key, Entry { row, unwritten });
        }
        *peak = (*peak).max(kept.len());
    }

    /// Forgets every row kept (the players erased stay unkept): every player is read back
    /// from then on, and the unwritten rows are lost.
    pub(crate) fn forget(&self) {
        let mut rows = self.lock();
        if rows.kept.values().any(|entry| entry.unwritten) {
            rows.lost = true;
        }
        rows.kept.clear();
        rows.partial = true;
    }

    /// The unwritten rows, in key order (they stay unwritten until
    /// [`written`](KeptRows::written)), or [`Lost`] when some were forgotten.
    pub(super) fn unwritten(&self) -> Result<Vec<PlayerRow>, Lost> {
        let rows = self.lock();
        if rows.lost {
            return Err(Lost);
        }
        let mut unwritten: Vec<PlayerRow> = rows
            .kept
            .values()
            .filter(|entry| entry.unwritten)
            .map(|entry| entry.row.clone())
            .collect();
        unwritten.sort_unstable_by_key(|row| (row.account_id, row.uuid));
        Ok(unwritten)
    }

    /// Every kept row is stored now; chunks write their rows at once from now on.
    pub(super) fn written(&self) {
        let mut rows = self.lock();
        for entry in rows.kept.values_mut() {
            entry.unwritten = false;
        }
        rows.deferring = false;
    }

    /// How many rows are kept unwritten.
    pub(super) fn unwritten_len(&self) -> usize {
        self.lock().kept.values().filter(|e| e.unwritten).count()
    }

    /// How many rows are kept.
    pub(crate) fn len(&self) -> usize {
        self.lock().kept.len()
    }

    /// The most rows kept at once so far: never more than its bound.
    pub(crate) fn peak(&self) -> usize {
        self.lock().peak
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
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
#[path = "kept_tests.rs"]
mod tests;
