//! The clock's rules, checked every `NOTIFIER_SWEEP_MS` in their own transaction (state change
//! and outbox rows together), and only while the evaluator is caught up with the log: a
//! lagging evaluator has not seen the latest heartbeats and would call every server offline.
//!
//! - a server silent for 3 of its account's sync intervals is marked offline
//!   (`server.offline` for the rules watching it; its next heartbeat is `server.online`);
//! - a low-TPS spell that has lasted a rule's minutes fires `server.tps_low` without waiting
//!   for the next heartbeat;
//! - anti-cheat flags older than any window are forgotten.

use super::anticheat;
use super::outbox::{self, Notification};
use super::rules::{self, RuleBook};
use super::servers::Spell;
use chrono::{DateTime, Utc};
use serde_json::json;
use shared::alerts::EventType;
use shared::alerts::RuleSpec;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::projections::sessions::{DEFAULT_SYNC_INTERVAL_SECONDS, MISSED_INTERVALS};

/// One sweep; returns the outbox rows written.
pub(crate) async fn sweep(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let now: DateTime<Utc> = sqlx::query_scalar("SELECT now()")
        .fetch_one(&mut *tx)
        .await?;
    let mut notifications = silent_servers(&mut tx, now).await?;
    notifications.extend(long_low_tps(&mut tx, now).await?);
    anticheat::prune(&mut tx).await?;
    let rows = outbox::insert(&mut tx, &notifications).await?;
    if rows > 0 {
        outbox::wake(&mut tx).await?;
        metrics::counter!("notifier_deliveries_created_total", "kind" => "clock").increment(rows);
    }
    tx.commit().await?;
    Ok(rows)
}

/// Marks the servers silent for 3 sync intervals offline; `server.offline` for their rules.
async fn silent_servers(
    conn: &mut PgConnection,
    now: DateTime<Utc>,
) -> Result<Vec<Notification>, sqlx::Error> {
    let silent: Vec<(Uuid, Uuid, Option<String>, DateTime<Utc>)> = sqlx::query_as(
        "UPDATE alert_servers s SET offline_since = $1
         WHERE s.offline_since IS NULL
           AND s.last_heartbeat_at < $1 - make_interval(secs => $3 * coalesce(
               (SELECT a.sync_interval_seconds FROM account_settings a
                WHERE a.account_id = s.account_id), $2))
         RETURNING s.account_id, s.server_id, s.name, s.last_heartbeat_at",
    )
    .bind(now)
    .bind(DEFAULT_SYNC_INTERVAL_SECONDS)
    .bind(MISSED_INTERVALS)
    .fetch_all(&mut *conn)
    .await?;
    if silent.is_empty() {
        return Ok(Vec::new());
    }
    let book = load(conn, silent.iter().map(|s| s.0)).await?;
    let mut out = Vec::new();
    for (account, server, name, last_heartbeat_at) in silent {
        tracing::info!(%account, %server, %last_heartbeat_at, "a server went silent");
        for rule in book.of(account) {
            if matches!(rule.spec, RuleSpec::ServerOffline { .. }) && rule.watches(server) {
                let fields = json!({
                    "server_id": server,
                    "server_name": name,
                    "last_heartbeat_at": last_heartbeat_at,
                });
                out.push(Notification::of(
                    rule,
                    EventType::ServerOffline,
                    now,
                    None,
                    fields,
                ));
            }
        }
    }
    Ok(out)
}

/// A low-TPS spell not fired yet, with its server's latest TPS.
#[derive(sqlx::FromRow)]
struct LowSpell {
    account_id: Uuid,
    rule_id: Uuid,
    server_id: Uuid,
    name: Option<String>,
    last_tps: f64,
    since: DateTime<Utc>,
}

/// `server.tps_low` for spells that have lasted their rule's minutes while the server still
/// reports low TPS (and is not offline).
async fn long_low_tps(
    conn: &mut PgConnection,
    now: DateTime<Utc>,
) -> Result<Vec<Notification>, sqlx::Error> {
    let spells: Vec<LowSpell> = sqlx::query_as(
        "SELECT r.account_id, st.rule_id, s.server_id, s.name, s.last_tps, st.since
         FROM alert_rule_state st
         JOIN alert_rules r ON r.id = st.rule_id AND r.kind = 'tps_low' AND r.enabled
         JOIN alert_servers s ON s.account_id = r.account_id AND s.server_id::text = st.subject
         WHERE st.fired_at IS NULL AND s.offline_since IS NULL AND s.last_tps IS NOT NULL
         FOR UPDATE OF st",
    )
    .fetch_all(&mut *conn)
    .await?;
    if spells.is_empty() {
        return Ok(Vec::new());
    }
    let book = load(conn, spells.iter().map(|s| s.account_id)).await?;
    let mut out = Vec::new();
    for LowSpell {
        account_id: account,
        rule_id,
        server_id,
        name,
        last_tps: tps,
        since,
    } in spells
    {
        let Some(rule) = book.of(account).iter().find(|r| r.id == rule_id) else {
            continue;
        };
        let RuleSpec::TpsLow { below, minutes, .. } = rule.spec else {
            continue;
        };
        if tps >= below {
            continue;
        }
        let spell = Spell {
            rule,
            server_id,
            server_name: name.as_deref(),
            below,
            minutes,
        };
        if let Some((event_type, fields)) = spell.fire_if_long(conn, tps, since, None, now).await? {
            out.push(Notification::of(rule, event_type, now, None, fields));
        }
    }
    Ok(out)
}

/// The enabled rules of `accounts`.
async fn load(
    conn: &mut PgConnection,
    accounts: impl Iterator<Item = Uuid>,
) -> Result<RuleBook, sqlx::Error> {
    let mut accounts: Vec<Uuid> = accounts.collect();
    accounts.sort_unstable();
    accounts.dedup();
    rules::load(conn, &accounts).await
}
