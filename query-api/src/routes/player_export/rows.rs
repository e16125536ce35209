//! The rows of a player export, one struct per section, each read by one query of
//! [`super::stream`] and serialized as it arrives. Every query binds `$1` the account and `$2`
//! the player (the player section also `$3`, the offline-after seconds of the account's
//! servers), and lists its rows oldest first.
//!
//! Columns are exported as the read models store them: what erasure blanked is blank here, what
//! retention removed is absent.

use crate::routes::liveness::{EFFECTIVE_END, EFFECTIVE_RANK};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

/// `player`: the player's row (one element).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedPlayer {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen.
    pub username: Option<String>,
    /// Every name seen.
    pub names: Vec<String>,
    /// First record about them.
    pub first_seen: DateTime<Utc>,
    /// Latest record about them.
    pub last_seen: DateTime<Utc>,
    /// Permission group as last recorded.
    pub rank: Option<String>,
    /// The group before it (a temporary group falls back to it).
    pub previous_rank: Option<String>,
    /// When a temporary group ends.
    pub rank_expires_at: Option<DateTime<Utc>>,
    /// When the group last changed.
    pub rank_changed_at: Option<DateTime<Utc>>,
    /// The group in force now.
    pub effective_rank: Option<String>,
    /// Seconds played over every session (open ones up to now), as the profile counts them.
    pub total_playtime_seconds: i64,
}

/// The player section's query: `$3` is the servers' offline-after seconds (the profile's rule
/// for a session left open on a server that went down).
pub(super) fn player_sql() -> String {
    format!(
        "WITH server_status AS ( \
           SELECT s.id, s.last_heartbeat_at, \
             (s.online_flag AND s.last_heartbeat_at > now() - make_interval(secs => $3::float8)) \
               AS is_online \
           FROM servers s WHERE s.account_id = $1) \
         SELECT p.uuid, p.username, p.names, p.first_seen, p.last_seen, p.rank, p.previous_rank, \
           p.rank_expires_at, p.rank_changed_at, {EFFECTIVE_RANK} AS effective_rank, \
           (SELECT COALESCE(floor(SUM(EXTRACT(EPOCH FROM \
               GREATEST(COALESCE({EFFECTIVE_END}, now()), se.joined_at) - se.joined_at))), 0) \
             FROM sessions se LEFT JOIN server_status ss ON ss.id = se.server_id \
             WHERE se.account_id = $1 AND se.player_uuid = $2)::bigint AS total_playtime_seconds \
         FROM players p WHERE p.account_id = $1 AND p.uuid = $2"
    )
}

/// `names`: every name the player was seen with, and when.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedName {
    /// The name.
    pub name: String,
    /// First seen with it.
    pub first_seen: DateTime<Utc>,
    /// Last seen with it.
    pub last_seen: DateTime<Utc>,
}

pub(super) const NAMES_SQL: &str = "SELECT name, first_seen, last_seen FROM player_names \
    WHERE account_id = $1 AND player_uuid = $2 ORDER BY first_seen, name";

/// `sessions`: every session, with the IP hash as stored (null once retention removed it).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedSession {
    /// The session's id.
    pub id: Uuid,
    /// The server.
    pub server_id: Uuid,
    /// When they joined.
    pub joined_at: DateTime<Utc>,
    /// When they left; null while open.
    pub left_at: Option<DateTime<Utc>>,
    /// `quit`, `switched` or `server_offline`.
    pub closed_by: Option<String>,
    /// The client's version.
    pub client_version: Option<String>,
    /// The keyed hash of their IP address.
    pub ip_hash: Option<String>,
}

pub(super) const SESSIONS_SQL: &str = "SELECT id, server_id, joined_at, left_at, closed_by, \
    client_version, ip_hash FROM sessions WHERE account_id = $1 AND player_uuid = $2 \
    ORDER BY joined_at, id";

/// `chat`: every chat line and command they sent.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedChat {
    /// The line's id.
    pub id: Uuid,
    /// The server.
    pub server_id: Uuid,
    /// `chat` or `command`.
    pub entry_type: String,
    /// The text.
    pub message: String,
    /// The channel, when the plugin names one.
    pub channel: Option<String>,
    /// When it was sent.
    pub sent_at: DateTime<Utc>,
}

pub(super) const CHAT_SQL: &str = "SELECT id, server_id, entry_type, message, channel, sent_at \
    FROM chat_messages WHERE account_id = $1 AND player_uuid = $2 ORDER BY sent_at, id";

/// `punishments_received` and `punishments_issued`: a punishment row as stored.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedPunishment {
    /// The punishment's id.
    pub id: Uuid,
    /// Who was punished.
    pub player_uuid: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    #[sqlx(rename = "type")]
    pub kind: String,
    /// Why.
    pub reason: Option<String>,
    /// Who issued it.
    pub staff_uuid: Option<Uuid>,
    /// Their name.
    pub staff_name: Option<String>,
    /// Where.
    pub server_id: Option<Uuid>,
    /// When.
    pub issued_at: DateTime<Utc>,
    /// When it ends; null for permanent ones.
    pub expires_at: Option<DateTime<Utc>>,
    /// Whether it applies to an IP.
    pub ip_based: bool,
    /// Its scope, as the plugin names it.
    pub scope: Option<String>,
    /// The plugin it came from.
    pub source_plugin: Option<String>,
    /// The plugin's own id for it.
    pub external_id: Option<String>,
    /// When it was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Who revoked it.
    pub revoked_by: Option<Uuid>,
    /// Their name.
    pub revoked_by_name: Option<String>,
    /// Why.
    pub revoke_reason: Option<String>,
}

const PUNISHMENT_COLUMNS: &str = "id, player_uuid, type, reason, staff_uuid, staff_name, \
    server_id, issued_at, expires_at, ip_based, scope, source_plugin, external_id, revoked_at, \
    revoked_by, revoked_by_name, revoke_reason";

pub(super) fn punishments_received_sql() -> String {
    format!(
        "SELECT {PUNISHMENT_COLUMNS} FROM punishments WHERE account_id = $1 AND player_uuid = $2 \
         ORDER BY issued_at, id"
    )
}

/// Issued or revoked by the player as staff (to others or, rarely, to themselves).
pub(super) fn punishments_issued_sql() -> String {
    format!(
        "SELECT {PUNISHMENT_COLUMNS} FROM punishments \
         WHERE account_id = $1 AND (staff_uuid = $2 OR revoked_by = $2) ORDER BY issued_at, id"
    )
}

/// `revokes_issued`: revoke records the player made as staff, as the log carried them.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedRevoke {
    /// The record's id.
    pub id: Uuid,
    /// The punishment revoked, when the record names it by id.
    pub punishment_id: Option<Uuid>,
    /// The plugin it came from.
    pub source_plugin: Option<String>,
    /// The punishment's type.
    #[serde(rename = "type")]
    #[sqlx(rename = "type")]
    pub kind: String,
    /// The plugin's id of the punishment.
    pub external_id: Option<String>,
    /// When.
    pub revoked_at: DateTime<Utc>,
    /// The player (as staff).
    pub revoked_by: Option<Uuid>,
    /// Their name.
    pub revoked_by_name: Option<String>,
    /// Why.
    pub revoke_reason: Option<String>,
}

pub(super) const REVOKES_SQL: &str = "SELECT id, punishment_id, source_plugin, type, \
    external_id, revoked_at, revoked_by, revoked_by_name, revoke_reason FROM punishment_revokes \
    WHERE account_id = $1 AND revoked_by = $2 ORDER BY revoked_at, id";

/// `anticheat_flags`: every flag raised about them.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedFlag {
    /// The flag's id.
    pub id: Uuid,
    /// The server.
    pub server_id: Uuid,
    /// The check.
    pub check_name: String,
    /// Its sub-type.
    pub check_type: Option<String>,
    /// The violation level.
    pub violation_level: f64,
    /// The plugin's detail.
    pub detail: Option<String>,
    /// The anti-cheat plugin.
    pub source_plugin: Option<String>,
    /// Whether the check is experimental.
    pub is_experimental: bool,
    /// Their ping then.
    pub ping_ms: Option<f64>,
    /// The server's TPS then.
    pub tps: Option<f64>,
    /// When.
    pub flagged_at: DateTime<Utc>,
}

pub(super) const FLAGS_SQL: &str = "SELECT id, server_id, check_name, check_type, \
    violation_level, detail, source_plugin, is_experimental, ping_ms, tps, flagged_at \
    FROM anticheat_flags WHERE account_id = $1 AND player_uuid = $2 ORDER BY flagged_at, id";

/// `notes`: staff notes about them.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedNote {
    /// The note's id.
    pub id: Uuid,
    /// The punishment it is attached to.
    pub punishment_id: Option<Uuid>,
    /// The text.
    pub text: String,
    /// Evidence links.
    #[schema(value_type = Vec<String>)]
    pub evidence: Json<Value>,
    /// The team member who wrote it.
    pub author_member_id: Uuid,
    /// Their name.
    pub author_name: String,
    /// When.
    pub written_at: DateTime<Utc>,
}

pub(super) const NOTES_SQL: &str = "SELECT id, punishment_id, text, evidence, author_member_id, \
    author_name, written_at FROM notes WHERE account_id = $1 AND player_uuid = $2 \
    ORDER BY written_at, id";

/// `account_links`: the chat-platform account linked to them (the latest link; at most one).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedLink {
    /// E.g. "discord".
    pub platform: String,
    /// The account's id there.
    pub external_id: Option<String>,
    /// The account's name there.
    pub external_name: Option<String>,
    /// When it was linked.
    pub linked_at: Option<DateTime<Utc>>,
}

pub(super) const LINKS_SQL: &str = "SELECT linked_platform AS platform, \
    linked_external_id AS external_id, linked_external_name AS external_name, linked_at \
    FROM players WHERE account_id = $1 AND uuid = $2 AND linked_platform IS NOT NULL";

/// `events` (every row of their timeline: custom events and the internal ones of sessions,
/// chat, punishments and rank changes) and `rank_changes` (the `rank_change` rows of it).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedEvent {
    /// The event's id.
    pub id: Uuid,
    /// Its position in the log.
    pub seq: i64,
    /// Its name.
    pub name: String,
    /// Whether the service recorded it (sessions, chat, punishments, rank changes).
    pub is_internal: bool,
    /// The server, when there is one.
    pub server_id: Option<Uuid>,
    /// Its properties, as stored.
    #[schema(value_type = Object)]
    pub properties: Json<Box<RawValue>>,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// When it was received.
    pub received_at: DateTime<Utc>,
}

const EVENT_COLUMNS: &str = "id, seq, name, is_internal, server_id, properties, occurred_at, \
    received_at";

pub(super) fn events_sql() -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE account_id = $1 AND player_uuid = $2 \
         ORDER BY occurred_at, seq"
    )
}

pub(super) fn rank_changes_sql() -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE account_id = $1 AND player_uuid = $2 \
         AND name = 'rank_change' ORDER BY occurred_at, seq"
    )
}

/// `active_days`: the UTC days they were seen on (the retention cohorts' input).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedDay {
    /// The day.
    pub day: NaiveDate,
}

pub(super) const ACTIVE_DAYS_SQL: &str = "SELECT day FROM player_active_days \
    WHERE account_id = $1 AND player_uuid = $2 ORDER BY day";

/// `event_days`: the UTC days they did each event on (the trends' input; kept when retention
/// removes the events themselves).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedEventDay {
    /// The event's name.
    pub name: String,
    /// The day.
    pub day: NaiveDate,
}

/// Read through the account-wide key (account, name, day, player): no index leads with the
/// player, and an export is rare enough for the scan.
pub(super) const EVENT_DAYS_SQL: &str = "SELECT name, day FROM event_player_days \
    WHERE account_id = $1 AND player_uuid = $2 ORDER BY day, name";

/// `erasure`: when and by whom the player was erased (one element once they are, else empty).
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ExportedErasure {
    /// When the erasure was asked for.
    pub erased_at: DateTime<Utc>,
    /// `admin` (the admin key) or the id of the team member who asked.
    pub erased_by: String,
}

pub(super) const ERASURE_SQL: &str = "SELECT erased_at, erased_by FROM erased_players \
    WHERE account_id = $1 AND player_uuid = $2";
