//! The players who dropped off at a step: their best entry reached step k but not step k + 1.
//! A page of them at a time, in player id order, after a cursor (the last id of the previous
//! page); each slice keeps only the `limit + 1` lowest ids past the cursor, so memory stays
//! bounded however many players dropped off.

use super::DropOffSpec;
use super::scan::from_pg_micros;
use chrono::{DateTime, Utc};
use std::collections::BinaryHeap;
use uuid::Uuid;

/// A player who dropped off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedPlayer {
    /// The player.
    pub player: Uuid,
    /// When the player's best entry (step 1) happened.
    pub entered_at: DateTime<Utc>,
    /// When the player reached the last step they reached (the step they dropped off at).
    pub last_step_at: DateTime<Utc>,
}

/// One page of the players who dropped off.
#[derive(Debug, Clone, PartialEq)]
pub struct DropOffPage {
    /// The step the players reached last (1-based).
    pub step: usize,
    /// The players, by id.
    pub players: Vec<DroppedPlayer>,
    /// The cursor of the next page (the last id on this one), when there are more.
    pub next_after: Option<Uuid>,
}

/// A slice's candidates: `(player, entered, last step)` in microseconds, the highest id on
/// top so that it is the one let go when the heap is over its bound.
#[derive(Debug, Clone)]
pub(crate) struct DropOffs {
    /// How many steps a dropped-off player reached.
    step: usize,
    limit: usize,
    after: Option<Uuid>,
    kept: BinaryHeap<(Uuid, i64, i64)>,
}

impl DropOffs {
    /// An empty list for `spec`.
    pub(crate) fn new(spec: &DropOffSpec) -> DropOffs {
        DropOffs {
            step: spec.step,
            limit: spec.limit,
            after: spec.after,
            kept: BinaryHeap::with_capacity(spec.limit + 2),
        }
    }

    /// Keeps `player` if the times it reached (step 1 first) stop at this list's step.
    pub(crate) fn add(&mut self, player: Uuid, times: &[i64]) {
        if times.len() != self.step || self.after.is_some_and(|after| player <= after) {
            return;
        }
        let (Some(&entered), Some(&last)) = (times.first(), times.last()) else {
            return;
        };
        self.keep((player, entered, last));
    }

    fn keep(&mut self, candidate: (Uuid, i64, i64)) {
        self.kept.push(candidate);
        // One more than a page: whether there is a next page.
        if self.kept.len() > self.limit + 1 {
            self.kept.pop();
        }
    }

    /// Adds another slice's candidates.
    pub(crate) fn merge(&mut self, other: DropOffs) {
        for candidate in other.kept {
            self.keep(candidate);
        }
    }

    /// The page: the `limit` lowest ids, and a cursor when one more was kept.
    pub(crate) fn page(self) -> DropOffPage {
        let (limit, step) = (self.limit, self.step);
        let mut kept = self.kept.into_sorted_vec();
        let more = kept.len() > limit;
        kept.truncate(limit);
        let players: Vec<DroppedPlayer> = kept
            .into_iter()
            .map(|(player, entered, last)| DroppedPlayer {
                player,
                entered_at: from_pg_micros(entered).unwrap_or(DateTime::<Utc>::MIN_UTC),
                last_step_at: from_pg_micros(last).unwrap_or(DateTime::<Utc>::MIN_UTC),
            })
            .collect();
        DropOffPage {
            step,
            next_after: if more {
                players.last().map(|p| p.player)
            } else {
                None
            },
            players,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(step: usize, limit: usize, after: Option<u128>) -> DropOffs {
        DropOffs::new(&DropOffSpec {
            step,
            limit,
            after: after.map(Uuid::from_u128),
        })
    }

    #[test]
    fn only_players_who_stopped_at_the_step_are_listed_in_pages() {
        let ids = |page: &DropOffPage| -> Vec<u128> {
            page.players.iter().map(|p| p.player.as_u128()).collect()
        };
        let mut left = list(2, 2, None);
        let mut right = list(2, 2, None);
        left.add(Uuid::from_u128(5), &[0, 10]);
        left.add(Uuid::from_u128(1), &[0, 10, 20]); // went on to step 3
        left.add(Uuid::from_u128(3), &[0]); // stopped at step 1
        right.add(Uuid::from_u128(4), &[7, 9]);
        right.add(Uuid::from_u128(2), &[0, 1]);
        left.merge(right);
        let page = left.page();
        assert_eq!(ids(&page), [2, 4]);
        assert_eq!(page.next_after, Some(Uuid::from_u128(4)));
        assert_eq!(
            page.players[1].last_step_at - page.players[1].entered_at,
            chrono::Duration::microseconds(2)
        );
        let mut next = list(2, 2, Some(4));
        for (id, times) in [(5, [0, 10]), (4, [7, 9]), (2, [0, 1])] {
            next.add(Uuid::from_u128(id), &times);
        }
        let page = next.page();
        assert_eq!(ids(&page), [5]);
        assert_eq!(page.next_after, None);
    }
}
