//! `anticheat_threshold`: N flags for one player within a window (of any check, or of one),
//! once per burst.
//!
//! Every flag of an account with such a rule is kept in `alert_recent_flags` (pruned by the
//! sweep past the longest window). Flags are timed by their receipt, so a plugin's clock
//! cannot move them out of (or into) a window. A rule's state row per player holds `since`,
//! the last time the player was at or over the threshold: it fires when the threshold is
//! reached and `since` is a full window old (or absent), so a burst fires once.

use super::evaluate::Scope;
use super::outbox::Notification;
use super::rules::ActiveRule;
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use shared::alerts::EventType;
use shared::alerts::RuleSpec;
use shared::envelope::{Logged, event_seq};
use shared::records::AnticheatFlag;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The longest window a rule may have: flags older than this are of no use.
pub(crate) const LONGEST_WINDOW: Duration = Duration::seconds(3600);

/// Records the flags and evaluates the account's `anticheat_threshold` rules.
pub(crate) async fn flags(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    records: &[Logged<AnticheatFlag>],
) -> Result<Vec<Notification>, sqlx::Error> {
    let rules: Vec<&ActiveRule> = scope
        .rules()
        .filter(|r| matches!(r.spec, RuleSpec::AnticheatThreshold { .. }))
        .collect();
    let mut out = Vec::new();
    if rules.is_empty() || records.is_empty() {
        return Ok(out);
    }
    remember(conn, scope, records).await?;
    // Every flag of a message has the same time of receipt, so the message's last flag of a
    // player decides for all of them.
    let mut last_of_player: BTreeMap<Uuid, (usize, &AnticheatFlag)> = BTreeMap::new();
    for (index, logged) in records.iter().enumerate() {
        last_of_player.insert(logged.record.player_uuid, (index, &logged.record));
    }
    for (player, (index, flag)) in last_of_player {
        let seq = event_seq(scope.stream_sequence, index);
        for rule in &rules {
            if let Some(fields) = crossed(conn, scope, rule, player, seq, flag).await? {
                out.push(scope.notify(
                    rule,
                    EventType::AnticheatThreshold,
                    scope.received_at,
                    fields,
                ));
            }
        }
    }
    Ok(out)
}

/// Stores the message's flags (a second copy of the message stores nothing again).
async fn remember(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    records: &[Logged<AnticheatFlag>],
) -> Result<(), sqlx::Error> {
    let players: Vec<Uuid> = records.iter().map(|l| l.record.player_uuid).collect();
    let checks: Vec<&str> = records
        .iter()
        .map(|l| l.record.check_name.as_str())
        .collect();
    let seqs: Vec<i64> = (0..records.len())
        .map(|i| event_seq(scope.stream_sequence, i))
        .collect();
    sqlx::query(
        "INSERT INTO alert_recent_flags (account_id, player_uuid, flagged_at, check_name, seq)
         SELECT $1, p, $2, c, s FROM UNNEST($3::uuid[], $4::text[], $5::bigint[]) AS t(p, c, s)
         ON CONFLICT DO NOTHING",
    )
    .bind(scope.account_id)
    .bind(scope.received_at)
    .bind(players)
    .bind(checks)
    .bind(seqs)
    .execute(conn)
    .await?;
    Ok(())
}

/// The notification's fields when `rule` fires for `player` at flag `seq`.
async fn crossed(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    rule: &ActiveRule,
    player: Uuid,
    seq: i64,
    flag: &AnticheatFlag,
) -> Result<Option<serde_json::Value>, sqlx::Error> {
    let RuleSpec::AnticheatThreshold {
        flags,
        window_seconds,
        check,
    } = &rule.spec
    else {
        return Ok(None);
    };
    let window = Duration::seconds(i64::from(*window_seconds));
    let at = scope.received_at;
    // Only flags in the window and received since the rule exists count.
    let from = (at - window).max(rule.created_at - Duration::microseconds(1));
    let (count, checks): (i64, Vec<String>) = sqlx::query_as(
        "SELECT count(*), coalesce(array_agg(DISTINCT check_name), '{}')
         FROM alert_recent_flags
         WHERE account_id = $1 AND player_uuid = $2 AND seq <= $3 AND flagged_at > $4
           AND ($5::text IS NULL OR check_name = $5)",
    )
    .bind(scope.account_id)
    .bind(player)
    .bind(seq)
    .bind(from)
    .bind(check.as_deref())
    .fetch_one(&mut *conn)
    .await?;
    if count < i64::from(*flags) {
        return Ok(None);
    }
    // At or over the threshold: a new burst unless it was also so within the last window.
    let since: Option<DateTime<Utc>> = sqlx::query_scalar(
        "SELECT since FROM alert_rule_state WHERE rule_id = $1 AND subject = $2 FOR UPDATE",
    )
    .bind(rule.id)
    .bind(player.to_string())
    .fetch_optional(&mut *conn)
    .await?;
    let fires = since.is_none_or(|since| at - since >= window);
    sqlx::query(
        "INSERT INTO alert_rule_state (rule_id, subject, since, fired_at)
         VALUES ($1, $2, $3, CASE WHEN $4 THEN $3 END)
         ON CONFLICT (rule_id, subject) DO UPDATE
         SET since = excluded.since,
             fired_at = coalesce(excluded.fired_at, alert_rule_state.fired_at)",
    )
    .bind(rule.id)
    .bind(player.to_string())
    .bind(at)
    .bind(fires)
    .execute(&mut *conn)
    .await?;
    Ok(fires.then(|| {
        json!({
            "player_uuid": player,
            "player_name": flag.player_name,
            "server_id": flag.server_id,
            "flags": count,
            "window_seconds": window_seconds,
            "checks": checks,
        })
    }))
}

/// Forgets flags older than any window (the sweep's housekeeping).
pub(crate) async fn prune(conn: &mut PgConnection) -> Result<u64, sqlx::Error> {
    let pruned = sqlx::query("DELETE FROM alert_recent_flags WHERE flagged_at < now() - $1")
        .bind(LONGEST_WINDOW)
        .execute(conn)
        .await?;
    Ok(pruned.rows_affected())
}
