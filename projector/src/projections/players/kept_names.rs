//! The `player_names` spans a rebuild's load keeps to write at its end ([`KeptNames`]): each
//! chunk's spans (when a player was first and last seen with a name) merged in memory, as the
//! upsert would merge them into the stored rows ([`super::names`]: the earliest first, the
//! latest last, in any order), and written once by [`super::bulk::write_kept`].
//!
//! Spans kept here are those the copy does not store yet: a chunk that writes its spans at
//! once (an erased player's, or any chunk once the load is over) leaves these as they are, and
//! the merge at the end widens what it wrote. An erasure takes out the erased player's spans
//! and writes them in its own chunk, so the erasure scrub that follows finds and deletes them.

use super::PlayerKey;
use super::kept::Lost;
use super::names::{NameKey, Span};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError};
use uuid::Uuid;

/// Spans kept before chunks write theirs at once, unless told otherwise (twice the players
/// kept: [`super::bulk::Kept::with_most`]); a chunk that finds room keeps all of its own, so
/// the last one may pass it by its own spans.
const MAX_SPANS: usize = 2 * super::kept::MAX_PLAYERS;

/// A span the copy does not store yet: (account, player, name) and when.
pub(super) type Unwritten = ((Uuid, Uuid, String), Span);

/// The name spans a rebuild's load keeps to write at its end, by player.
#[derive(Debug)]
pub(crate) struct KeptNames {
    spans: Mutex<Spans>,
    most: usize,
}

impl Default for KeptNames {
    fn default() -> Self {
        KeptNames::with_most(MAX_SPANS)
    }
}

#[derive(Debug, Default)]
struct Spans {
    by_player: HashMap<PlayerKey, BTreeMap<String, Span>>,
    count: usize,
    /// The most spans kept at once so far.
    peak: usize,
    /// Spans were forgotten: the copy misses them.
    lost: bool,
}

impl KeptNames {
    /// Keeps spans while fewer than `most` are kept.
    pub(crate) fn with_most(most: usize) -> Self {
        KeptNames {
            spans: Mutex::default(),
            most,
        }
    }

    /// Whether a chunk may keep its spans here: there is room.
    pub(super) fn has_room(&self) -> bool {
        self.lock().count < self.most
    }

    /// The most spans kept at once so far.
    pub(crate) fn peak(&self) -> usize {
        self.lock().peak
    }

    /// Keeps `spans`, each widening the one kept for the same name, if any.
    pub(super) fn keep<'a>(&self, spans: impl IntoIterator<Item = (NameKey<'a>, Span)>) {
        let mut kept = self.lock();
        let Spans {
            by_player,
            count,
            peak,
            ..
        } = &mut *kept;
        for ((account, player, name), (first, last)) in spans {
            let names = by_player.entry((account, player)).or_default();
            match names.get_mut(name) {
                Some((kept_first, kept_last)) => {
                    *kept_first = (*kept_first).min(first);
                    *kept_last = (*kept_last).max(last);
                }
                None => {
                    names.insert(name.to_owned(), (first, last));
                    *count += 1;
                }
            }
        }
        *peak = (*peak).max(*count);
    }

    /// Takes out the spans kept of `players`.
    pub(super) fn take(&self, players: &HashSet<PlayerKey>) -> Vec<Unwritten> {
        let mut kept = self.lock();
        let mut taken = Vec::new();
        for &(account, player) in players {
            if let Some(names) = kept.by_player.remove(&(account, player)) {
                kept.count -= names.len();
                taken.extend(
                    names
                        .into_iter()
                        .map(|(name, span)| ((account, player, name), span)),
                );
            }
        }
        taken
    }

    /// Puts back spans [`take`](KeptNames::take) took, for a chunk that failed.
    pub(super) fn restore(&self, spans: &[Unwritten]) {
        self.keep(
            spans
                .iter()
                .map(|((a, p, name), span)| ((*a, *p, name.as_str()), *span)),
        );
    }

    /// Forgets every span kept: lost for good if there was any.
    pub(crate) fn forget(&self) {
        let mut kept = self.lock();
        if kept.count > 0 {
            kept.lost = true;
        }
        kept.by_player.clear();
        kept.count = 0;
    }

    /// Every span kept, or [`Lost`] when some were forgotten; they stay kept until
    /// [`written`](KeptNames::written).
    pub(super) fn unwritten(&self) -> Result<Vec<Unwritten>, Lost> {
        let kept = self.lock();
        if kept.lost {
            return Err(Lost);
        }
        let mut spans: Vec<Unwritten> = kept
            .by_player
            .iter()
            .flat_map(|(&(account, player), names)| {
                names
                    .iter()
                    .map(move |(name, span)| ((account, player, name.clone()), *span))
            })
            .collect();
        spans.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(spans)
    }

    /// Every span kept is stored now.
    pub(super) fn written(&self) {
        let mut kept = self.lock();
        kept.by_player.clear();
        kept.count = 0;
    }

    /// How many spans are kept.
    pub(crate) fn len(&self) -> usize {
        self.lock().count
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spans> {
        self.spans.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Borrows `spans` as the upsert takes them.
pub(super) fn borrowed(spans: &[Unwritten]) -> Vec<(NameKey<'_>, Span)> {
    spans
        .iter()
        .map(|((account, player, name), span)| ((*account, *player, name.as_str()), *span))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(minute * 60, 0).unwrap_or_default()
    }

    #[test]
    fn spans_of_one_name_widen_and_an_erased_players_are_taken_out_whole() {
        let names = KeptNames::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let acct = Uuid::nil();
        names.keep([
            ((acct, a, "Alex"), (at(5), at(6))),
            ((acct, a, "Alexa"), (at(7), at(7))),
            ((acct, b, "Bo"), (at(1), at(1))),
        ]);
        names.keep([((acct, a, "Alex"), (at(2), at(3)))]);
        assert_eq!(names.len(), 3);
        let taken = names.take(&HashSet::from([(acct, a)]));
        assert_eq!(
            taken,
            [
                ((acct, a, "Alex".to_owned()), (at(2), at(6))),
                ((acct, a, "Alexa".to_owned()), (at(7), at(7))),
            ]
        );
        assert_eq!(names.len(), 1);
        names.restore(&taken);
        assert_eq!(names.unwritten().map(|s| s.len()).ok(), Some(3));
        names.written();
        assert_eq!(names.len(), 0);
        names.keep([((acct, b, "Bo"), (at(1), at(1)))]);
        names.forget();
        assert!(names.unwritten().is_err(), "a forgotten span is lost");
    }
}
