//! The pure part of the players model: what each record says about a player, and how a
//! player's row changes with it. No I/O, so every rule is unit-tested here.

use chrono::{DateTime, Utc};
use shared::envelope::{LogMessage, Logged, RecordBatch, event_seq};
use shared::records::{AccountLink, LinkAction, RankAction, RankChange};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A player's identity: (account, player uuid).
pub type PlayerKey = (Uuid, Uuid);

/// "Newer" for names, ranks and links: record time first, then log position, so among
/// records with the same time the later one in the log wins, and a record already applied
/// (or any earlier one) never wins again.
type Stamp = (DateTime<Utc>, i64);

/// One row of `players`.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct PlayerRow {
    /// Owning account.
    pub account_id: Uuid,
    /// The player.
    pub uuid: Uuid,
    /// Latest name seen.
    pub username: Option<String>,
    /// Time of the record that carried it.
    pub username_at: Option<DateTime<Utc>>,
    /// Log position of that record.
    pub username_seq: Option<i64>,
    /// Every name ever seen, current and past, in byte order without repeats: a set, so it
    /// folds the same in any order. It repeats `player_names` inside the row so that search
    /// can match past names of the newest-seen players without a lookup per player.
    pub names: Vec<String>,
    /// Earliest record time.
    pub first_seen: DateTime<Utc>,
    /// Latest record time.
    pub last_seen: DateTime<Utc>,
    /// Current group.
    pub rank: Option<String>,
    /// The group before it (a temporary group falls back to it).
    pub previous_rank: Option<String>,
    /// When a temporary group ends.
    pub rank_expires_at: Option<DateTime<Utc>>,
    /// Time of the last rank change applied.
    pub rank_changed_at: Option<DateTime<Utc>>,
    /// Log position of that rank change.
    pub rank_changed_seq: Option<i64>,
    /// Linked platform, NULL when unlinked.
    pub linked_platform: Option<String>,
    /// The player's id there.
    pub linked_external_id: Option<String>,
    /// The player's name there.
    pub linked_external_name: Option<String>,
    /// Time of the last link or unlink applied.
    pub linked_at: Option<DateTime<Utc>>,
    /// Log position of that link or unlink.
    pub linked_seq: Option<i64>,
}

/// What one record says about one player.
#[derive(Debug, Clone, Copy)]
pub struct Sighting<'a> {
    /// Owning account.
    pub account_id: Uuid,
    /// The player.
    pub player: Uuid,
    /// The record's own time (the time of receipt when it had none).
    pub at: DateTime<Utc>,
    /// The record's place in the log ([`event_seq`]).
    pub seq: i64,
    /// The name the record carries, if any.
    pub name: Option<&'a str>,
    /// A rank change or account link, for the records that are one.
    pub change: Change<'a>,
}

/// The part of a record beyond "seen at, named".
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// Only a sighting.
    Seen,
    /// A permission-group change.
    Rank(&'a RankChange),
    /// A chat-platform link or unlink.
    Link(&'a AccountLink),
}

/// The sightings of one log message, in log order. Heartbeats name no player, and custom
/// events do not create players; punishments count for the punished player only.
///
/// Erased values (a destroyed key's fields read as empty) say nothing: an empty
/// name is no name, so it never overwrites a stored one nor joins `names`; a link whose
/// external id is erased is only a sighting, so no link without its id is stored.
pub fn sightings_of(stream_sequence: u64, message: &LogMessage) -> Vec<Sighting<'_>> {
    let received_at = message.received_at;
    let each = |index: usize, player: Uuid, at: Option<DateTime<Utc>>, name, change| Sighting {
        account_id: message.account_id,
        player,
        at: at.unwrap_or(received_at),
        seq: event_seq(stream_sequence, index),
        name: Option::filter(name, |name: &&str| !name.is_empty()),
        change,
    };
    fn map<'a, T>(
        records: &'a [Logged<T>],
        f: impl Fn(usize, &'a T) -> Sighting<'a>,
    ) -> Vec<Sighting<'a>> {
        records
            .iter()
            .enumerate()
            .map(|(i, l)| f(i, &l.record))
            .collect()
    }
    match &message.batch {
        RecordBatch::Session(r) => map(r, |i, s| {
            each(i, s.player_uuid, s.at, Some(&s.player_name), Change::Seen)
        }),
        RecordBatch::Chat(r) => map(r, |i, c| {
            let name = c.player_name.as_deref();
            each(i, c.player_uuid, c.sent_at, name, Change::Seen)
        }),
        RecordBatch::Punishment(r) => map(r, |i, p| {
            let name = p.player_name.as_deref();
            each(i, p.player_uuid, p.issued_at, name, Change::Seen)
        }),
        RecordBatch::AnticheatFlag(r) => map(r, |i, f| {
            let name = f.player_name.as_deref();
            each(i, f.player_uuid, f.flagged_at, name, Change::Seen)
        }),
        RecordBatch::RankChange(r) => map(r, |i, c| {
            let name = c.player_name.as_deref();
            each(i, c.player_uuid, c.changed_at, name, Change::Rank(c))
        }),
        RecordBatch::AccountLink(r) => map(r, |i, l| {
            let change = match l.action {
                LinkAction::Link if l.external_id.is_empty() => Change::Seen,
                _ => Change::Link(l),
            };
            each(i, l.player_uuid, l.at, None, change)
        }),
        // A note is about a player, but writing one is no sighting of them; an erasure scrubs
        // the player's row in its own projection (`erasure`).
        RecordBatch::Heartbeat(_)
        | RecordBatch::Custom(_)
        | RecordBatch::Note(_)
        | RecordBatch::Erasure(_)
        | RecordBatch::Action(_)
        | RecordBatch::ActionAck(_)
        | RecordBatch::Appeal(_) => Vec::new(),
    }
}

/// Folds `sightings` (in log order) into the stored rows; returns the rows that are new or
/// differ from what is stored, ordered by key. A row that would not change is not returned,
/// so re-applying records rewrites nothing.
pub fn fold(stored: &BTreeMap<PlayerKey, PlayerRow>, sightings: &[Sighting<'_>]) -> Vec<PlayerRow> {
    let mut rows: BTreeMap<PlayerKey, PlayerRow> = BTreeMap::new();
    for sighting in sightings {
        let key = (sighting.account_id, sighting.player);
        let row = rows.entry(key).or_insert_with(|| {
            stored
                .get(&key)
                .cloned()
                .unwrap_or_else(|| PlayerRow::first(sighting))
        });
        row.see(sighting);
    }
    rows.into_iter()
        .filter(|(key, row)| stored.get(key) != Some(row))
        .map(|(_, row)| row)
        .collect()
}

/// True when a record stamped `this` is newer than what `than` set (always, when unset).
fn newer(this: Stamp, than: Option<Stamp>) -> bool {
    than.is_none_or(|than| this > than)
}

/// The stamp of what is stored: a time and the log position that goes with it.
fn stamp(at: Option<DateTime<Utc>>, seq: Option<i64>) -> Option<Stamp> {
    at.map(|at| (at, seq.unwrap_or(i64::MIN)))
}

impl PlayerRow {
    /// The row of a player never seen before, as of `sighting` (not yet applied).
    pub(super) fn first(sighting: &Sighting<'_>) -> PlayerRow {
        PlayerRow {
            account_id: sighting.account_id,
            uuid: sighting.player,
            username: None,
            username_at: None,
            username_seq: None,
            names: Vec::new(),
            first_seen: sighting.at,
            last_seen: sighting.at,
            rank: None,
            previous_rank: None,
            rank_expires_at: None,
            rank_changed_at: None,
            rank_changed_seq: None,
            linked_platform: None,
            linked_external_id: None,
            linked_external_name: None,
            linked_at: None,
            linked_seq: None,
        }
    }

    /// Applies one sighting. Every branch is guarded by the stored state, so applying a
    /// sighting twice, or an older one after a newer one, changes nothing.
    fn see(&mut self, s: &Sighting<'_>) {
        self.first_seen = self.first_seen.min(s.at);
        self.last_seen = self.last_seen.max(s.at);
        if let Some(name) = s.name
            && let Err(at) = self
                .names
                .binary_search_by(|known| known.as_str().cmp(name))
        {
            self.names.insert(at, name.to_owned());
        }
        if let Some(name) = s.name
            && newer((s.at, s.seq), stamp(self.username_at, self.username_seq))
        {
            self.username = Some(name.to_owned());
            self.username_at = Some(s.at);
            self.username_seq = Some(s.seq);
        }
        match s.change {
            Change::Seen => {}
            Change::Rank(change) => {
                if newer(
                    (s.at, s.seq),
                    stamp(self.rank_changed_at, self.rank_changed_seq),
                ) {
                    self.change_rank(change);
                    self.rank_changed_at = Some(s.at);
                    self.rank_changed_seq = Some(s.seq);
                }
            }
            Change::Link(link) => {
                if newer((s.at, s.seq), stamp(self.linked_at, self.linked_seq)) {
                    self.link(link);
                    self.linked_at = Some(s.at);
                    self.linked_seq = Some(s.seq);
                }
            }
        }
    }

    fn change_rank(&mut self, change: &RankChange) {
        match change.action {
            RankAction::Set | RankAction::Add => {
                let previous = match &change.previous_group {
                    Some(group) => Some(group.clone()),
                    // Getting the group one already has (a temporary group renewed) keeps
                    // what it falls back to.
                    None if self.rank.as_deref() == Some(change.group.as_str()) => {
                        self.previous_rank.take()
                    }
                    None => self.rank.take(),
                };
                self.previous_rank = previous;
                self.rank = Some(change.group.clone());
                self.rank_expires_at = change.expires_at;
            }
            RankAction::Remove => {
                if self.rank.as_deref() == Some(change.group.as_str()) {
                    self.rank = change
                        .previous_group
                        .clone()
                        .or_else(|| self.previous_rank.clone());
                    // Whatever the player falls back to, it is not known to be temporary.
                    self.rank_expires_at = None;
                }
            }
        }
    }

    fn link(&mut self, link: &AccountLink) {
        match link.action {
            LinkAction::Link => {
                self.linked_platform = Some(link.platform.clone());
                self.linked_external_id = Some(link.external_id.clone());
                self.linked_external_name = link.external_name.clone();
            }
            LinkAction::Unlink => {
                self.linked_platform = None;
                self.linked_external_id = None;
                self.linked_external_name = None;
            }
        }
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
