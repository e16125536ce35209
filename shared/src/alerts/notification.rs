//! What a notification says: its event type and the message body a webhook receives,
//! `{"type": "punishment.issued", "timestamp": "<RFC 3339>", "data": {...}}` (the Standard
//! Webhooks specification's recommended shape). `data` is written by the notifier's evaluator
//! (`projector/src/alerts/`; every type carries `rule_id`, `rule_name` and `account_id`) and
//! stored in `alert_deliveries.payload`, so every attempt sends the same body.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

/// The kinds of notification, as sent in `type` and stored in `alert_deliveries.event_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// A punishment was issued.
    #[serde(rename = "punishment.issued")]
    PunishmentIssued,
    /// A punishment was revoked.
    #[serde(rename = "punishment.revoked")]
    PunishmentRevoked,
    /// A player reached an anti-cheat rule's flag threshold.
    #[serde(rename = "anticheat.threshold")]
    AnticheatThreshold,
    /// A server went offline.
    #[serde(rename = "server.offline")]
    ServerOffline,
    /// A server came back online.
    #[serde(rename = "server.online")]
    ServerOnline,
    /// A server's TPS stayed low.
    #[serde(rename = "server.tps_low")]
    ServerTpsLow,
    /// A server's TPS recovered.
    #[serde(rename = "server.tps_recovered")]
    ServerTpsRecovered,
    /// A banned player's alt joined.
    #[serde(rename = "player.banned_alt_joined")]
    PlayerBannedAltJoined,
    /// A player's rank moved into a staff group.
    #[serde(rename = "rank.staff_joined")]
    RankStaffJoined,
    /// A player's rank moved out of a staff group.
    #[serde(rename = "rank.staff_left")]
    RankStaffLeft,
    /// A custom event the rule names.
    #[serde(rename = "event.custom")]
    EventCustom,
    /// A test sent from the dashboard or the API.
    #[serde(rename = "test")]
    Test,
}

impl EventType {
    /// Every event type.
    pub const ALL: [EventType; 12] = [
        EventType::PunishmentIssued,
        EventType::PunishmentRevoked,
        EventType::AnticheatThreshold,
        EventType::ServerOffline,
        EventType::ServerOnline,
        EventType::ServerTpsLow,
        EventType::ServerTpsRecovered,
        EventType::PlayerBannedAltJoined,
        EventType::RankStaffJoined,
        EventType::RankStaffLeft,
        EventType::EventCustom,
        EventType::Test,
    ];

    /// The type as sent (`punishment.issued`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::PunishmentIssued => "punishment.issued",
            EventType::PunishmentRevoked => "punishment.revoked",
            EventType::AnticheatThreshold => "anticheat.threshold",
            EventType::ServerOffline => "server.offline",
            EventType::ServerOnline => "server.online",
            EventType::ServerTpsLow => "server.tps_low",
            EventType::ServerTpsRecovered => "server.tps_recovered",
            EventType::PlayerBannedAltJoined => "player.banned_alt_joined",
            EventType::RankStaffJoined => "rank.staff_joined",
            EventType::RankStaffLeft => "rank.staff_left",
            EventType::EventCustom => "event.custom",
            EventType::Test => "test",
        }
    }

    /// The type named `text`, if there is one.
    pub fn parse(text: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The message text of a test event.
pub const TEST_MESSAGE: &str = "A test event from Warden";

/// The `data` of a test event sent to `destination_id`.
pub fn test_data(account_id: Uuid, destination_id: Uuid) -> Value {
    json!({
        "rule_id": null,
        "rule_name": null,
        "account_id": account_id,
        "destination_id": destination_id,
        "message": TEST_MESSAGE,
    })
}

/// The body sent to a webhook: `{"type", "timestamp", "data"}`, `timestamp` being when what it
/// reports happened (RFC 3339, UTC, milliseconds).
pub fn body(event_type: &str, occurred_at: DateTime<Utc>, data: &Value) -> Vec<u8> {
    json!({
        "type": event_type,
        "timestamp": occurred_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        "data": data,
    })
    .to_string()
    .into_bytes()
}

#[cfg(test)]
#[path = "notification_tests.rs"]
mod tests;
