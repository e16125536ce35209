//! Heartbeats as the server rules see them: `alert_servers` (last heartbeat, TPS, offline
//! since) for accounts with a server rule, `server_offline` on a heartbeat saying
//! `online: false`, `server_online` on the first heartbeat after being offline, and
//! `tps_low` / `server.tps_recovered` per rule and server (`alert_rule_state`). Silence is the
//! clock's business ([`super::sweep`]).

use super::evaluate::Scope;
use super::outbox::Notification;
use super::rules::ActiveRule;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use shared::alerts::EventType;
use shared::alerts::RuleSpec;
use shared::envelope::Logged;
use shared::records::Heartbeat;
use sqlx::PgConnection;
use uuid::Uuid;

/// Whether `rule` is about servers.
fn is_server_rule(rule: &ActiveRule) -> bool {
    matches!(
        rule.spec,
        RuleSpec::ServerOffline { .. } | RuleSpec::ServerOnline { .. } | RuleSpec::TpsLow { .. }
    )
}

/// Folds the heartbeats into `alert_servers` and evaluates the account's server rules.
pub(crate) async fn heartbeats(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    records: &[Logged<Heartbeat>],
) -> Result<Vec<Notification>, sqlx::Error> {
    let rules: Vec<&ActiveRule> = scope.rules().filter(|r| is_server_rule(r)).collect();
    let mut out = Vec::new();
    if rules.is_empty() {
        return Ok(out);
    }
    let at = scope.received_at;
    for logged in records {
        let beat = &logged.record;
        let says_offline = beat.online == Some(false);
        // Offline since when, as it was before this heartbeat.
        let offline_since: Option<DateTime<Utc>> = sqlx::query_scalar(
            "SELECT offline_since FROM alert_servers
             WHERE account_id = $1 AND server_id = $2 FOR UPDATE",
        )
        .bind(scope.account_id)
        .bind(beat.server_id)
        .fetch_optional(&mut *conn)
        .await?
        .flatten();
        let name: Option<String> = sqlx::query_scalar(
            "INSERT INTO alert_servers
                 (account_id, server_id, name, last_heartbeat_at, last_tps, offline_since)
             VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN $4 END)
             ON CONFLICT (account_id, server_id) DO UPDATE
             SET name = coalesce(excluded.name, alert_servers.name),
                 last_heartbeat_at =
                     GREATEST(alert_servers.last_heartbeat_at, excluded.last_heartbeat_at),
                 last_tps = excluded.last_tps,
                 offline_since = CASE WHEN $6
                     THEN coalesce(alert_servers.offline_since, excluded.last_heartbeat_at)
                 END
             RETURNING name",
        )
        .bind(scope.account_id)
        .bind(beat.server_id)
        .bind(beat.name.as_deref())
        .bind(at)
        .bind(beat.tps)
        .bind(says_offline)
        .fetch_one(&mut *conn)
        .await?;
        let watching = rules.iter().filter(|r| r.watches(beat.server_id));
        for rule in watching {
            let fields = match &rule.spec {
                RuleSpec::ServerOffline { .. } if says_offline && offline_since.is_none() => {
                    Some((
                        EventType::ServerOffline,
                        json!({
                            "server_id": beat.server_id,
                            "server_name": name,
                            "last_heartbeat_at": at,
                        }),
                    ))
                }
                RuleSpec::ServerOnline { .. } if !says_offline => offline_since.map(|since| {
                    (
                        EventType::ServerOnline,
                        json!({
                            "server_id": beat.server_id,
                            "server_name": name,
                            "offline_since": since,
                        }),
                    )
                }),
                RuleSpec::TpsLow { below, minutes, .. } if !says_offline => {
                    let spell = Spell {
                        rule,
                        server_id: beat.server_id,
                        server_name: name.as_deref(),
                        below: *below,
                        minutes: *minutes,
                    };
                    spell.heartbeat(conn, beat.tps, at).await?
                }
                _ => None,
            };
            if let Some((event_type, fields)) = fields {
                out.push(scope.notify(rule, event_type, at, fields));
            }
        }
    }
    Ok(out)
}

/// One `tps_low` rule's view of one server.
pub(crate) struct Spell<'a> {
    pub(crate) rule: &'a ActiveRule,
    pub(crate) server_id: Uuid,
    pub(crate) server_name: Option<&'a str>,
    pub(crate) below: f64,
    pub(crate) minutes: u32,
}

impl Spell<'_> {
    /// A heartbeat with `tps` at `at`: starts, fires or ends the low spell.
    async fn heartbeat(
        &self,
        conn: &mut PgConnection,
        tps: f64,
        at: DateTime<Utc>,
    ) -> Result<Option<(EventType, Value)>, sqlx::Error> {
        let subject = self.server_id.to_string();
        if tps >= self.below {
            let ended: Option<(DateTime<Utc>, Option<DateTime<Utc>>)> = sqlx::query_as(
                "DELETE FROM alert_rule_state WHERE rule_id = $1 AND subject = $2
                 RETURNING since, fired_at",
            )
            .bind(self.rule.id)
            .bind(&subject)
            .fetch_optional(&mut *conn)
            .await?;
            return Ok(match ended {
                Some((since, Some(_))) => Some((
                    EventType::ServerTpsRecovered,
                    json!({
                        "server_id": self.server_id,
                        "server_name": self.server_name,
                        "tps": tps,
                        "below": self.below,
                        "since": since,
                    }),
                )),
                _ => None,
            });
        }
        let (since, fired_at): (DateTime<Utc>, Option<DateTime<Utc>>) = sqlx::query_as(
            "INSERT INTO alert_rule_state (rule_id, subject, since) VALUES ($1, $2, $3)
             ON CONFLICT (rule_id, subject) DO UPDATE SET since = alert_rule_state.since
             RETURNING since, fired_at",
        )
        .bind(self.rule.id)
        .bind(&subject)
        .bind(at)
        .fetch_one(&mut *conn)
        .await?;
        self.fire_if_long(conn, tps, since, fired_at, at).await
    }

    /// Fires `server.tps_low` once the spell that began at `since` has lasted its minutes.
    pub(crate) async fn fire_if_long(
        &self,
        conn: &mut PgConnection,
        tps: f64,
        since: DateTime<Utc>,
        fired_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Option<(EventType, Value)>, sqlx::Error> {
        if fired_at.is_some() || now - since < Duration::minutes(i64::from(self.minutes)) {
            return Ok(None);
        }
        sqlx::query(
            "UPDATE alert_rule_state SET fired_at = $3 WHERE rule_id = $1 AND subject = $2",
        )
        .bind(self.rule.id)
        .bind(self.server_id.to_string())
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(Some((
            EventType::ServerTpsLow,
            json!({
                "server_id": self.server_id,
                "server_name": self.server_name,
                "tps": tps,
                "below": self.below,
                "minutes": self.minutes,
                "since": since,
            }),
        )))
    }
}
