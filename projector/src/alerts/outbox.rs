//! Writing notifications to the outbox (`alert_deliveries`): one row per notification and
//! destination, in the caller's transaction, so they commit exactly with the checkpoint (or the
//! state change) that produced them.

use super::rules::ActiveRule;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use shared::alerts::EventType;
use sqlx::PgConnection;
use uuid::Uuid;

/// The channel the delivery workers `LISTEN` on.
pub(crate) const CHANNEL: &str = "alert_deliveries";

/// One notification a rule produced, before it is fanned out to the rule's destinations.
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    pub(crate) rule_id: Uuid,
    pub(crate) account_id: Uuid,
    pub(crate) destinations: Vec<Uuid>,
    /// `punishment.issued`, `server.offline`, ...
    pub(crate) event_type: EventType,
    /// The body's `data`: `rule_id`, `rule_name` and `account_id`, then the event's fields.
    pub(crate) data: Value,
    /// When what it reports happened.
    pub(crate) occurred_at: DateTime<Utc>,
    /// The log message that caused it (None for the clock's rules).
    pub(crate) source_sequence: Option<u64>,
}

impl Notification {
    /// A notification of `rule` with `fields` after the common ones.
    pub(crate) fn of(
        rule: &ActiveRule,
        event_type: EventType,
        occurred_at: DateTime<Utc>,
        source_sequence: Option<u64>,
        fields: Value,
    ) -> Notification {
        let mut data = Map::new();
        data.insert("rule_id".into(), Value::String(rule.id.to_string()));
        data.insert(
            "rule_name".into(),
            rule.name.clone().map_or(Value::Null, Value::String),
        );
        data.insert(
            "account_id".into(),
            Value::String(rule.account_id.to_string()),
        );
        if let Value::Object(fields) = fields {
            data.extend(fields);
        }
        Notification {
            rule_id: rule.id,
            account_id: rule.account_id,
            destinations: rule.destinations.clone(),
            event_type,
            data: Value::Object(data),
            occurred_at,
            source_sequence,
        }
    }
}

/// Inserts one outbox row per notification and destination; returns how many. The caller
/// wakes the workers ([`wake`]) in the same transaction.
pub(crate) async fn insert(
    conn: &mut PgConnection,
    notifications: &[Notification],
) -> Result<u64, sqlx::Error> {
    let mut ids = Vec::new();
    let mut accounts = Vec::new();
    let mut destinations = Vec::new();
    let mut rules = Vec::new();
    let mut types = Vec::new();
    let mut payloads = Vec::new();
    let mut occurred = Vec::new();
    let mut sequences = Vec::new();
    for n in notifications {
        for destination in &n.destinations {
            // Time-ordered ids: the message ids a receiver sees grow with the outbox.
            ids.push(Uuid::now_v7());
            accounts.push(n.account_id);
            destinations.push(*destination);
            rules.push(n.rule_id);
            types.push(n.event_type.as_str());
            payloads.push(n.data.clone());
            occurred.push(n.occurred_at);
            sequences.push(n.source_sequence.map(crate::checkpoint::to_column));
        }
    }
    if ids.is_empty() {
        return Ok(0);
    }
    let inserted = sqlx::query(
        "INSERT INTO alert_deliveries
             (id, account_id, destination_id, rule_id, event_type, payload, occurred_at,
              source_sequence)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[],
                              $6::jsonb[], $7::timestamptz[], $8::bigint[])",
    )
    .bind(ids)
    .bind(accounts)
    .bind(destinations)
    .bind(rules)
    .bind(types)
    .bind(payloads)
    .bind(occurred)
    .bind(sequences)
    .execute(conn)
    .await?;
    Ok(inserted.rows_affected())
}

/// Wakes the delivery workers when the transaction commits (PostgreSQL delivers a NOTIFY only
/// then, and folds repeats within one transaction into one).
pub(crate) async fn wake(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(CHANNEL)
        .execute(conn)
        .await?;
    Ok(())
}
