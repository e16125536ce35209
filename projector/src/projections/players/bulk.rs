//! The players fold in a rebuild's copy ([`apply_bulk`]): the rows kept between chunks
//! ([`KeptRows`]) instead of read back and, during the load, the rows and name spans written
//! once at its end ([`write_kept`]) rather than at every chunk.
//!
//! Each chunk names most of a busy network's players, so the fold's statements rewrote most
//! `players` rows and their `player_names` spans at every chunk: on the benchmark's million
//! records, 50,000-77,000 rows and as many spans per transaction, 85-90% of the fold's time,
//! and the load's slowest model. Deferred, a chunk only folds in memory, and each row and span
//! is written once.
//!
//! What stays as with the statements:
//!
//! - *What PostgreSQL refuses.* A chunk writes its rows at once when one of them may not be
//!   storable ([`PlayerRow::surely_storable`]: text with a NUL, more text than the copy's
//!   index guards surely take, a time outside four-digit years), so PostgreSQL refuses it in
//!   the chunk's own transaction and the message is isolated and parked as on the live
//!   projector. Rows and spans left for the end are always storable.
//! - *Erasures.* The erasure scrub reads and blanks the erased player's row and spans after
//!   the players fold's transaction of the same chunk: that transaction writes them (and the
//!   player's spans kept so far) at once, and an erased player's are never kept again.
//! - *Room.* Past the rows' bound ([`Kept::with_most`]) or the spans' bound, chunks write
//!   theirs at once.
//! - *Failures.* A chunk whose statements fail puts back what it took. A rolled-back chunk
//!   that had left rows unwritten loses them: [`write_kept`] then fails, and so does the
//!   rebuild (the live tables are untouched; the next one starts clean).

use super::kept::{KeptRows, Taken};
use super::kept_names::{self, KeptNames, Unwritten};
use super::{
    PlayerKey, PlayerRow, Positioned, erased_in, fold, names, read_back, sightings, write,
    write_names,
};
use crate::projections::BulkState;
use chrono::{DateTime, Datelike, Utc};
use sqlx::PgConnection;
use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};

/// What a rebuild keeps of the players fold between its chunks.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub(super) rows: KeptRows,
    pub(super) names: KeptNames,
}

impl Kept {
    /// Keeps at most `players` rows, and name spans while fewer than twice as many are kept.
    pub(crate) fn with_most(players: usize) -> Self {
        Kept {
            rows: KeptRows::with_most(players),
            names: KeptNames::with_most(players.saturating_mul(2)),
        }
    }

    /// The most rows, and the most name spans, kept at once so far.
    pub(crate) fn peaks(&self) -> (usize, usize) {
        (self.rows.peak(), self.names.peak())
    }

    /// From now on chunks leave their rows and spans for [`write_kept`] (the load).
    pub(crate) fn defer(&self) {
        self.rows.defer();
    }

    /// Whether chunks leave their rows for [`write_kept`].
    pub(crate) fn deferring(&self) -> bool {
        self.rows.deferring()
    }

    /// Forgets what is kept: every player is read back from then on; unwritten rows and
    /// spans are lost.
    pub(crate) fn forget(&self) {
        self.rows.forget();
        self.names.forget();
    }

    /// How many rows are kept.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// How many rows and spans are kept to write.
    pub(crate) fn unwritten(&self) -> usize {
        self.rows.unwritten_len() + self.names.len()
    }
}

/// [`super::apply`] into a rebuild's copy, with what `state` keeps of the players (see the
/// module docs); returns the rows written or left to write.
pub(crate) async fn apply_bulk(
    conn: &mut PgConnection,
    messages: &[&Positioned],
    state: &BulkState,
) -> Result<u64, sqlx::Error> {
    let kept = &state.players;
    let sightings = sightings(messages);
    let erased = erased_in(messages);
    if sightings.is_empty() && erased.is_empty() {
        return Ok(0);
    }
    let keys: BTreeSet<PlayerKey> = sightings
        .iter()
        .map(|s| (s.account_id, s.player))
        .chain(erased.iter().copied())
        .collect();
    let (mut taken, missing) = kept.rows.take(keys);
    taken.defer = taken.defer && kept.names.has_room();
    // Written in this transaction: the erasure scrub comes next.
    let at_once: HashSet<PlayerKey> = taken.erased.union(&erased).copied().collect();
    let spans_at_once = kept.names.take(&at_once);
    let mut chunk = Chunk {
        sightings: &sightings,
        taken: &mut taken,
        at_once: &at_once,
        spans_at_once: &spans_at_once,
    };
    match chunk.store(conn, &missing).await {
        Ok(stored) => {
            kept.names.keep(stored.spans_left);
            kept.rows
                .put_back(taken, stored.changed, &erased, &stored.written);
            Ok(stored.rows)
        }
        Err(error) => {
            kept.rows.restore(taken);
            kept.names.restore(&spans_at_once);
            Err(error)
        }
    }
}

/// One chunk's fold into the copy.
struct Chunk<'c, 's> {
    sightings: &'c [super::Sighting<'s>],
    taken: &'c mut Taken,
    /// The players whose rows and spans are written in this transaction whatever it defers.
    at_once: &'c HashSet<PlayerKey>,
    /// Their spans kept from earlier chunks.
    spans_at_once: &'c [Unwritten],
}

/// What a chunk stored and left.
struct Stored<'s> {
    /// Rows written, or left to write.
    rows: u64,
    /// The rows the chunk changed.
    changed: Vec<PlayerRow>,
    /// The players whose row it wrote.
    written: HashSet<PlayerKey>,
    /// The spans it left to write.
    spans_left: Vec<(names::NameKey<'s>, names::Span)>,
}

impl<'s> Chunk<'_, 's> {
    /// Reads back the `missing` players, folds the sightings and writes what must be written
    /// now.
    async fn store(
        &mut self,
        conn: &mut PgConnection,
        missing: &[PlayerKey],
    ) -> Result<Stored<'s>, sqlx::Error> {
        read_back(conn, missing, &mut self.taken.rows).await?;
        let changed = fold(&self.taken.rows, self.sightings);
        let spans: Vec<_> = names::spans(self.sightings).into_iter().collect();
        let defer = self.taken.defer
            && changed.iter().all(PlayerRow::surely_storable)
            && spans.iter().all(|((_, _, name), (first, last))| {
                surely_storable_text(name)
                    && surely_storable_time(*first)
                    && surely_storable_time(*last)
            });
        let due_now = |key: &PlayerKey| !defer || self.at_once.contains(key);
        // The changed rows due now (all of them unless the chunk defers: no copy), and the
        // unwritten ones of the players written at once that the chunk did not change.
        let rows_now: Cow<'_, [PlayerRow]> = if defer {
            Cow::Owned(
                changed
                    .iter()
                    .filter(|row| self.at_once.contains(&(row.account_id, row.uuid)))
                    .cloned()
                    .collect(),
            )
        } else {
            Cow::Borrowed(&changed)
        };
        let changed_keys: HashSet<PlayerKey> =
            changed.iter().map(|r| (r.account_id, r.uuid)).collect();
        let unwritten_now: Vec<PlayerRow> = self
            .taken
            .rows
            .iter()
            .filter(|(key, _)| {
                self.at_once.contains(key)
                    && self.taken.unwritten.contains(key)
                    && !changed_keys.contains(key)
            })
            .map(|(_, row)| row.clone())
            .collect();
        let (spans_now, spans_left): (Vec<_>, Vec<_>) = spans
            .into_iter()
            .partition(|((account, player, _), _)| due_now(&(*account, *player)));
        let written = write(conn, &rows_now).await?
            + write(conn, &unwritten_now).await?
            + write_names(conn, &spans_now).await?
            + write_names(conn, &kept_names::borrowed(self.spans_at_once)).await?;
        let left = (changed.len() - rows_now.len() + spans_left.len()) as u64;
        let written_keys = rows_now
            .iter()
            .chain(&unwritten_now)
            .map(|r| (r.account_id, r.uuid))
            .collect();
        drop(rows_now);
        Ok(Stored {
            rows: written + left,
            written: written_keys,
            changed,
            spans_left,
        })
    }
}

/// Writes the rows and spans the load left to write ([`Kept::defer`]), in the caller's
/// transaction; from then on chunks write theirs at once. Returns the rows and the spans
/// written. Fails with [`Lost`](super::kept::Lost) when some were lost (the copy cannot be completed).
pub(crate) async fn write_kept(
    conn: &mut PgConnection,
    kept: &Kept,
) -> anyhow::Result<(usize, usize)> {
    let rows = kept.rows.unwritten()?;
    let spans = kept.names.unwritten()?;
    write(conn, &rows).await?;
    write_names(conn, &kept_names::borrowed(&spans)).await?;
    Ok((rows.len(), spans.len()))
}

/// What [`write_kept`] wrote is stored: once its transaction committed.
pub(crate) fn kept_written(kept: &Kept) {
    kept.rows.written();
    kept.names.written();
}

impl PlayerRow {
    /// Whether PostgreSQL surely stores the row, in the table and in the copy's guards of its
    /// indexes ([`crate::rebuild`]'s deferred indexes: a B-tree entry with 1,024 bytes of text
    /// or more is checked while loading): no NUL in its text, its text short
    /// ([`surely_storable_text`]), every time within four-digit years (`timestamptz` reaches far
    /// beyond, so some rows it would store are written at once all the same).
    fn surely_storable(&self) -> bool {
        let texts = [
            self.username.as_deref(),
            self.rank.as_deref(),
            self.previous_rank.as_deref(),
            self.linked_platform.as_deref(),
            self.linked_external_id.as_deref(),
            self.linked_external_name.as_deref(),
        ];
        let times = [
            Some(self.first_seen),
            Some(self.last_seen),
            self.username_at,
            self.rank_expires_at,
            self.rank_changed_at,
            self.linked_at,
        ];
        let all_texts: usize = texts.iter().flatten().map(|t| t.len()).sum();
        all_texts <= TEXT_MAX
            && texts.into_iter().flatten().all(surely_storable_text)
            && self
                .names
                .iter()
                .map(String::as_str)
                .all(surely_storable_text)
            && times.into_iter().flatten().all(surely_storable_time)
    }
}

/// Bytes of text surely stored in any index entry (a row's text fields together): a case
/// change may grow text by half, and an entry's guard checks 1,024 bytes or more.
const TEXT_MAX: usize = 512;

/// Whether `text` is surely stored: no NUL, at most [`TEXT_MAX`] bytes.
fn surely_storable_text(text: &str) -> bool {
    text.len() <= TEXT_MAX && !text.contains('\0')
}

/// Whether `time` is within four-digit years.
fn surely_storable_time(time: DateTime<Utc>) -> bool {
    (1..=9999).contains(&time.year())
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn row() -> PlayerRow {
        PlayerRow::first(&super::super::Sighting {
            account_id: Uuid::nil(),
            player: Uuid::nil(),
            at: DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default(),
            seq: 1,
            name: None,
            change: super::super::Change::Seen,
        })
    }

    #[test]
    fn a_row_is_left_for_later_only_when_postgresql_surely_stores_it() {
        assert!(row().surely_storable());
        let mut named = row();
        named.username = Some("Alex".to_owned());
        named.names = vec!["Alex".to_owned(), "é".repeat(256)];
        assert!(named.surely_storable(), "512 bytes of a name");

        let mut nul = row();
        nul.rank = Some("vip\0".to_owned());
        assert!(!nul.surely_storable(), "a NUL in any text");
        let mut long_name = row();
        long_name.names = vec!["x".repeat(TEXT_MAX + 1)];
        assert!(!long_name.surely_storable());
        let mut long_together = row();
        long_together.linked_external_id = Some("x".repeat(300));
        long_together.linked_external_name = Some("y".repeat(300));
        assert!(
            !long_together.surely_storable(),
            "an index may hold several of its texts"
        );
        let mut far = row();
        far.rank_expires_at = DateTime::from_timestamp(300_000_000_000, 0);
        assert!(!far.surely_storable(), "past four-digit years");
    }
}
