//! The Overview's activity feed: one item per join, quit, punishment, revoke, rank change or
//! anti-cheat flag, drawn by one template (`partials/activity_item.html`) whether it is on the
//! page as rendered or arrives over the live stream (`activity_stream.rs`), and filtered by the
//! member's role in one place ([`visible_to`]).
//!
//! A join whose player has an alt banned now is marked ("alt of banned <name>", linking to the
//! alt) for members who may open player pages: [`mark_banned_alts`], one query for all the
//! joins of a page or of one log message.

use super::display;
use crate::queries::{Activity, ActivityKind};
use crate::routes::account_reads::alts::{BannedAlt, banned_alts};
use crate::team::visibility::{FLAG, PUNISHMENTS};
use crate::team::{Area, Role, Visibility};
use askama::Template;
use serde_json::Value;
use shared::envelope::{LogMessage, RecordBatch, event_seq};
use shared::records::{RecordKind, SessionEvent};
use shared::timeline::events_of;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// Whether a member with `role` sees activity of `kind`: joins, quits and rank changes are
/// the network's state (every role); punishments and flags are moderation: an item is its
/// values (who, why), so it is shown only to the roles that see those values
/// ([`Visibility::shows`], the rule of every view).
pub fn visible_to(role: Role, kind: ActivityKind) -> bool {
    let visibility = Visibility::member(role);
    match kind {
        ActivityKind::Join | ActivityKind::Quit | ActivityKind::RankChange => {
            visibility.allows(Area::Overview)
        }
        ActivityKind::Punishment | ActivityKind::Revoke => visibility.shows(PUNISHMENTS),
        ActivityKind::Flag => visibility.shows(FLAG),
    }
}

/// The log's record kinds a member with `role` may see activity from: a live stream asks the
/// log for these only, so nothing else leaves NATS for it.
pub fn record_kinds(role: Role) -> Vec<RecordKind> {
    let mut kinds = vec![RecordKind::Session, RecordKind::RankChange];
    if visible_to(role, ActivityKind::Punishment) {
        kinds.push(RecordKind::Punishment);
    }
    if visible_to(role, ActivityKind::Flag) {
        kinds.push(RecordKind::AnticheatFlag);
    }
    kinds
}

/// The activity in one log message (at `stream_sequence`), each with its timeline position:
/// the same position the timeline gives it (`event_seq`), so flags, which have no timeline
/// event, share one order and one `Last-Event-ID` with everything else.
pub fn from_log(stream_sequence: u64, message: &LogMessage) -> Vec<(i64, Activity)> {
    if let RecordBatch::AnticheatFlag(flags) = &message.batch {
        return flags
            .iter()
            .enumerate()
            .map(|(index, logged)| {
                let flag = &logged.record;
                let detail = match &flag.check_type {
                    Some(kind) => format!("{} {kind}", flag.check_name),
                    None => flag.check_name.clone(),
                };
                let activity = Activity {
                    at: flag.flagged_at.unwrap_or(message.received_at),
                    kind: ActivityKind::Flag,
                    name: "anticheat_flag".to_owned(),
                    player_uuid: Some(flag.player_uuid),
                    player_name: flag.player_name.clone(),
                    server_id: Some(flag.server_id),
                    actor: None,
                    detail: Some(detail),
                };
                (event_seq(stream_sequence, index), activity)
            })
            .collect();
    }
    events_of(stream_sequence, message)
        .into_iter()
        .filter_map(|event| {
            let kind = ActivityKind::of(&event.name)?;
            let properties: Value = serde_json::from_str(&event.properties).unwrap_or_default();
            let text = |field: &str| properties[field].as_str().map(str::to_owned);
            let detail = match kind {
                ActivityKind::RankChange => text("group"),
                ActivityKind::Revoke => text("revoke_reason"),
                ActivityKind::Punishment => text("reason"),
                _ => None,
            };
            let activity = Activity {
                at: event.occurred_at,
                kind,
                player_uuid: event.player_uuid,
                player_name: text("player_name"),
                server_id: event.server_id,
                actor: text("staff_name"),
                detail,
                name: event.name,
            };
            Some((event.seq, activity))
        })
        .collect()
}

/// The keyed IP hash of each join in a log message, by player: a live join is checked
/// against it as well as the player's earlier sessions, which may not be projected yet.
pub fn join_hashes(message: &LogMessage) -> HashMap<Uuid, String> {
    let RecordBatch::Session(sessions) = &message.batch else {
        return HashMap::new();
    };
    sessions
        .iter()
        .map(|logged| &logged.record)
        .filter(|session| session.event == SessionEvent::Join)
        .filter_map(|session| Some((session.player_uuid, session.ip_hash.clone()?)))
        .collect()
}

/// Whether a member with `role` is shown banned-alt marks (the alts are on player pages).
pub fn sees_alts(role: Role) -> bool {
    role.allows(Area::Players)
}

/// Marks each join item whose player has an alt banned now, with one query for all of them;
/// `hashes` are the joins' own IP hashes when known ([`join_hashes`]).
pub async fn mark_banned_alts(
    pool: &PgPool,
    account: Uuid,
    items: &mut [ActivityItem],
    hashes: &HashMap<Uuid, String>,
) -> Result<(), sqlx::Error> {
    let mut joins: Vec<(Uuid, Option<String>)> = Vec::new();
    for item in items.iter() {
        if let (ActivityKind::Join, Some(player)) = (item.activity.kind, item.activity.player_uuid)
            && !joins.iter().any(|(p, _)| *p == player)
        {
            joins.push((player, hashes.get(&player).cloned()));
        }
    }
    let found = banned_alts(pool, account, &joins).await?;
    for item in items.iter_mut() {
        if item.activity.kind == ActivityKind::Join {
            item.banned_alt = found
                .iter()
                .find(|alt| Some(alt.player) == item.activity.player_uuid)
                .cloned();
        }
    }
    Ok(())
}

/// One item as a page shows it.
#[derive(Debug, Clone)]
pub struct ActivityItem {
    /// What happened.
    pub activity: Activity,
    /// The name of its server, when it names one the account knows.
    pub server_name: Option<String>,
    /// For a join: one of the player's alts banned now ([`mark_banned_alts`]).
    pub banned_alt: Option<BannedAlt>,
}

impl ActivityItem {
    /// An item not (yet) marked.
    pub fn new(activity: Activity, server_name: Option<String>) -> ActivityItem {
        ActivityItem {
            activity,
            server_name,
            banned_alt: None,
        }
    }

    /// The banned alt's name for the mark: their name, else a short form of their UUID.
    pub fn banned_alt_name(&self) -> String {
        match &self.banned_alt {
            Some(BannedAlt {
                username: Some(name),
                ..
            }) => name.clone(),
            Some(alt) => format!("Player {}", &alt.uuid.simple().to_string()[..8]),
            None => String::new(),
        }
    }

    /// The word in the item's tag.
    pub fn tag(&self) -> &'static str {
        match self.activity.kind {
            ActivityKind::Join => "Join",
            ActivityKind::Quit => "Quit",
            ActivityKind::Punishment => "Punishment",
            ActivityKind::Revoke => "Revoke",
            ActivityKind::RankChange => "Rank",
            ActivityKind::Flag => "Flag",
        }
    }

    /// The CSS class of its kind.
    pub fn kind_class(&self) -> &'static str {
        match self.activity.kind {
            ActivityKind::Join => "join",
            ActivityKind::Quit => "quit",
            ActivityKind::Punishment | ActivityKind::Revoke => "punishment",
            ActivityKind::RankChange => "rank",
            ActivityKind::Flag => "flag",
        }
    }

    /// Who it is about: their name, else a short form of their UUID.
    pub fn player(&self) -> String {
        match (&self.activity.player_name, &self.activity.player_uuid) {
            (Some(name), _) => name.clone(),
            (None, Some(uuid)) => format!("Player {}", &uuid.simple().to_string()[..8]),
            (None, None) => "Someone".to_owned(),
        }
    }

    /// What happened to them, in words (escaped by the template like everything else).
    pub fn sentence(&self) -> String {
        let a = &self.activity;
        let by = a
            .actor
            .as_deref()
            .map(|actor| format!(" by {actor}"))
            .unwrap_or_default();
        let reason = a
            .detail
            .as_deref()
            .map(|detail| format!(": {detail}"))
            .unwrap_or_default();
        let on = self
            .server_name
            .as_deref()
            .map(|server| format!(" on {server}"))
            .unwrap_or_default();
        match a.kind {
            ActivityKind::Join => format!("joined{on}"),
            ActivityKind::Quit => format!("left{on}"),
            ActivityKind::Punishment => {
                let verb = match a.name.as_str() {
                    "punish_ban" => "was banned",
                    "punish_mute" => "was muted",
                    "punish_kick" => "was kicked",
                    _ => "was warned",
                };
                format!("{verb}{by}{reason}")
            }
            ActivityKind::Revoke => format!("had a punishment revoked{by}{reason}"),
            ActivityKind::RankChange => match a.detail.as_deref() {
                Some(group) => format!("is now in group {group}{by}"),
                None => format!("changed group{by}"),
            },
            ActivityKind::Flag => format!("was flagged by anti-cheat{reason}{on}"),
        }
    }

    /// When, for the eye.
    pub fn clock(&self) -> String {
        display::clock(&self.activity.at)
    }

    /// When, for `<time datetime>`.
    pub fn iso(&self) -> String {
        display::iso(&self.activity.at)
    }
}

/// One item alone: what the live stream sends.
#[derive(Template)]
#[template(path = "partials/activity_item.html")]
pub struct ActivityItemPartial<'a> {
    /// The item.
    pub item: &'a ActivityItem,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewers_see_the_network_and_moderators_also_moderation() {
        let all = [
            ActivityKind::Join,
            ActivityKind::Quit,
            ActivityKind::RankChange,
            ActivityKind::Punishment,
            ActivityKind::Revoke,
            ActivityKind::Flag,
        ];
        let seen = |role| all.iter().filter(|k| visible_to(role, **k)).count();
        assert_eq!(seen(Role::Viewer), 3);
        assert_eq!(seen(Role::Moderator), 6);
        assert_eq!(seen(Role::Owner), 6);
        assert_eq!(record_kinds(Role::Viewer).len(), 2);
        assert!(record_kinds(Role::Moderator).contains(&RecordKind::AnticheatFlag));
    }
}
