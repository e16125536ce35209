//! Punishments (contract §5, §7): one row per `issue` record in `punishments`, ended by
//! `revoke` records that name it by the plugin's own id (`source_plugin`, `type`,
//! `external_id`) or by its record id (`punishment_id`).
//!
//! Every revoke record is also kept in `punishment_revokes`, and a punishment's `revoked_*`
//! columns are set, only while `revoked_at IS NULL`, from the earliest revoke in the log that
//! names it. So the result does not depend on arrival order or chunking: a revoke logged before
//! its issue still ends it when the issue arrives, a second revoke never overwrites the first,
//! and re-applying any part of the log changes nothing.
//!
//! `is_active` is not stored: it depends on the clock (not revoked, and `expires_at` NULL or
//! later than `now()`), so reads work it out. Kicks never expire (`expires_at` is NULL).

use super::Positioned;
use chrono::{DateTime, Utc};
use shared::envelope::{LogMessage, Logged, RecordBatch, event_seq};
use shared::records::{Action, DASHBOARD_SOURCE, PunishmentAction, PunishmentType};
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per statement: batched, yet bounded so one statement's arrays stay small.
const ROWS_PER_STATEMENT: usize = 1_000;

/// One row of `punishments`, from an `issue` record.
#[derive(Debug, Clone, PartialEq)]
pub struct PunishmentIssued {
    /// Owning account.
    pub account_id: Uuid,
    /// The issue record's event id.
    pub id: Uuid,
    /// Position in the log ([`event_seq`]): the first of two copies wins.
    pub seq: i64,
    /// The punished player.
    pub player_uuid: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    pub punishment_type: &'static str,
    /// Why.
    pub reason: Option<String>,
    /// Who issued it (absent for the console).
    pub staff_uuid: Option<Uuid>,
    /// Their name.
    pub staff_name: Option<String>,
    /// Where; None for a punishment issued on the dashboard.
    pub server_id: Option<Uuid>,
    /// When (the time of receipt when the record had none).
    pub issued_at: DateTime<Utc>,
    /// When it ends; None = permanent, and always None for kicks.
    pub expires_at: Option<DateTime<Utc>>,
    /// Whether it targets the player's IP (false when not said).
    pub ip_based: bool,
    /// Server group, or "global".
    pub scope: Option<String>,
    /// The punishment plugin.
    pub source_plugin: Option<String>,
    /// That plugin's own id.
    pub external_id: Option<String>,
}

/// One row of `punishment_revokes`, from a `revoke` record.
#[derive(Debug, Clone, PartialEq)]
pub struct PunishmentRevoked {
    /// Owning account.
    pub account_id: Uuid,
    /// The revoke record's event id.
    pub id: Uuid,
    /// Position in the log ([`event_seq`]): the earliest revoke of a punishment wins.
    pub seq: i64,
    /// The punishment's record id, when named so.
    pub punishment_id: Option<Uuid>,
    /// The punishment plugin, with `external_id`.
    pub source_plugin: Option<String>,
    /// The type of the punishment it ends.
    pub punishment_type: &'static str,
    /// The plugin's own id of the punishment, when named so.
    pub external_id: Option<String>,
    /// When it was revoked: the revoke record's `issued_at` (or its time of receipt).
    pub revoked_at: DateTime<Utc>,
    /// Who revoked it.
    pub revoked_by: Option<Uuid>,
    /// Their name.
    pub revoked_by_name: Option<String>,
    /// Why.
    pub revoke_reason: Option<String>,
}

/// The issues and revokes of one log message, in log order.
pub fn rows_of(
    stream_sequence: u64,
    message: &LogMessage,
) -> (Vec<PunishmentIssued>, Vec<PunishmentRevoked>) {
    let (mut issued, mut revoked) = (Vec::new(), Vec::new());
    if let RecordBatch::Action(actions) = &message.batch {
        return dashboard_rows_of(stream_sequence, message, actions);
    }
    let RecordBatch::Punishment(records) = &message.batch else {
        return (issued, revoked);
    };
    for (index, logged) in records.iter().enumerate() {
        let record = &logged.record;
        let seq = event_seq(stream_sequence, index);
        let at = record.issued_at.unwrap_or(message.received_at);
        match record.action {
            PunishmentAction::Issue => issued.push(PunishmentIssued {
                account_id: message.account_id,
                id: logged.id,
                seq,
                player_uuid: record.player_uuid,
                punishment_type: record.punishment_type.as_str(),
                reason: record.reason.clone(),
                staff_uuid: record.staff_uuid,
                staff_name: record.staff_name.clone(),
                server_id: Some(record.server_id),
                issued_at: at,
                expires_at: match record.punishment_type {
                    PunishmentType::Kick => None,
                    _ => record.expires_at,
                },
                ip_based: record.ip_based.unwrap_or(false),
                scope: record.scope.clone(),
                source_plugin: record.source_plugin.clone(),
                external_id: record.external_id.clone(),
            }),
            PunishmentAction::Revoke => revoked.push(PunishmentRevoked {
                account_id: message.account_id,
                id: logged.id,
                seq,
                punishment_id: record.punishment_id,
                source_plugin: record.source_plugin.clone(),
                punishment_type: record.punishment_type.as_str(),
                external_id: record.external_id.clone(),
                revoked_at: at,
                revoked_by: record.staff_uuid,
                revoked_by_name: record.staff_name.clone(),
                revoke_reason: record.revoke_reason.clone(),
            }),
        }
    }
    (issued, revoked)
}

/// The issues and revokes of a message of dashboard actions: like a plugin's, with the member
/// as the staff (no player UUID), no server, and `source_plugin` `warden`. A revoke names its
/// punishment by id. An action that breaks the rules (a forged or buggy writer) is skipped.
fn dashboard_rows_of(
    stream_sequence: u64,
    message: &LogMessage,
    actions: &[Logged<Action>],
) -> (Vec<PunishmentIssued>, Vec<PunishmentRevoked>) {
    let (mut issued, mut revoked) = (Vec::new(), Vec::new());
    for (index, logged) in actions.iter().enumerate() {
        let action = &logged.record;
        if action.validate(message.received_at).is_err() {
            tracing::warn!(id = %logged.id, "a dashboard action that breaks the rules was skipped");
            continue;
        }
        let seq = event_seq(stream_sequence, index);
        if let Some(p) = &action.punishment {
            issued.push(PunishmentIssued {
                account_id: message.account_id,
                id: logged.id,
                seq,
                player_uuid: p.player_uuid,
                punishment_type: p.punishment_type.as_str(),
                reason: p.reason.clone(),
                staff_uuid: None,
                staff_name: Some(action.by.name.clone()),
                server_id: None,
                issued_at: action.at,
                expires_at: p.expires_at,
                ip_based: false,
                scope: Some(p.scope.clone()),
                source_plugin: Some(DASHBOARD_SOURCE.to_owned()),
                external_id: None,
            });
        } else if let Some(r) = &action.revoke {
            revoked.push(PunishmentRevoked {
                account_id: message.account_id,
                id: logged.id,
                seq,
                punishment_id: Some(r.punishment_id),
                source_plugin: None,
                punishment_type: r.punishment_type.as_str(),
                external_id: None,
                revoked_at: action.at,
                revoked_by: None,
                revoked_by_name: Some(action.by.name.clone()),
                revoke_reason: r.reason.clone(),
            });
        }
    }
    (issued, revoked)
}

/// Punishments issued, revoked and expiring.
#[derive(Debug, Clone, Copy)]
pub struct Punishments;

read_model! {
    Punishments: "punishments",
    tables: ["punishments", "punishment_revokes"],
    // The stored revokes naming a punishment by id or by external id (`end_revoked`).
    load_indexes: ["punishment_revokes_id_idx", "punishment_revokes_external_idx"],
    fold: apply
}

/// Stores the chunk's issues, then its revokes, then ends every punishment either touched
/// that a stored revoke names. Returns the rows inserted or updated.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let (mut issued, mut revoked) = (Vec::new(), Vec::new());
    for m in messages {
        let (i, r) = rows_of(m.stream_sequence, &m.message);
        issued.extend(i);
        revoked.extend(r);
    }
    let mut written = 0;
    // Issues first: a revoke and its issue often share a chunk.
    for batch in issued.chunks(ROWS_PER_STATEMENT) {
        written += insert_issued(conn, batch).await?;
    }
    for batch in revoked.chunks(ROWS_PER_STATEMENT) {
        written += insert_revoked(conn, batch).await?;
    }
    let issued_keys: Vec<(Uuid, Uuid)> = issued.iter().map(|p| (p.account_id, p.id)).collect();
    let revoke_keys: Vec<(Uuid, Uuid)> = revoked.iter().map(|r| (r.account_id, r.id)).collect();
    for batch in issued_keys.chunks(ROWS_PER_STATEMENT) {
        written += end_revoked(conn, batch, &[]).await?;
    }
    for batch in revoke_keys.chunks(ROWS_PER_STATEMENT) {
        written += end_revoked(conn, &[], batch).await?;
    }
    Ok(written)
}

async fn insert_issued(
    conn: &mut PgConnection,
    rows: &[PunishmentIssued],
) -> Result<u64, sqlx::Error> {
    let text = |f: fn(&PunishmentIssued) -> Option<&str>| rows.iter().map(f).collect::<Vec<_>>();
    // ORDER BY seq: of two copies in one statement (same id, or the same plugin id under two
    // record ids), the first logged is the one kept. No conflict target: both the primary key
    // and punishments_external_idx dedupe.
    let result = sqlx::query(
        "INSERT INTO punishments (account_id, id, player_uuid, type, reason, staff_uuid,
                                  staff_name, server_id, issued_at, expires_at, ip_based, scope,
                                  source_plugin, external_id)
         SELECT account_id, id, player_uuid, type, reason, staff_uuid, staff_name, server_id,
                issued_at, expires_at, ip_based, scope, source_plugin, external_id
         FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::uuid[], $5::text[], $6::text[],
                     $7::uuid[], $8::text[], $9::uuid[], $10::timestamptz[], $11::timestamptz[],
                     $12::boolean[], $13::text[], $14::text[], $15::text[])
              AS t(account_id, id, seq, player_uuid, type, reason, staff_uuid, staff_name,
                   server_id, issued_at, expires_at, ip_based, scope, source_plugin, external_id)
         ORDER BY seq
         ON CONFLICT DO NOTHING",
    )
    .bind(rows.iter().map(|p| p.account_id).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.id).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.player_uuid).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.punishment_type).collect::<Vec<_>>())
    .bind(text(|p| p.reason.as_deref()))
    .bind(rows.iter().map(|p| p.staff_uuid).collect::<Vec<_>>())
    .bind(text(|p| p.staff_name.as_deref()))
    .bind(rows.iter().map(|p| p.server_id).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.issued_at).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.expires_at).collect::<Vec<_>>())
    .bind(rows.iter().map(|p| p.ip_based).collect::<Vec<_>>())
    .bind(text(|p| p.scope.as_deref()))
    .bind(text(|p| p.source_plugin.as_deref()))
    .bind(text(|p| p.external_id.as_deref()))
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

async fn insert_revoked(
    conn: &mut PgConnection,
    rows: &[PunishmentRevoked],
) -> Result<u64, sqlx::Error> {
    let text = |f: fn(&PunishmentRevoked) -> Option<&str>| rows.iter().map(f).collect::<Vec<_>>();
    let result = sqlx::query(
        "INSERT INTO punishment_revokes (account_id, id, seq, punishment_id, source_plugin, type,
                                         external_id, revoked_at, revoked_by, revoked_by_name,
                                         revoke_reason)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::uuid[], $5::text[],
                              $6::text[], $7::text[], $8::timestamptz[], $9::uuid[], $10::text[],
                              $11::text[])
              AS t(account_id, id, seq, punishment_id, source_plugin, type, external_id,
                   revoked_at, revoked_by, revoked_by_name, revoke_reason)
         ORDER BY seq
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(rows.iter().map(|r| r.account_id).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.id).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.punishment_id).collect::<Vec<_>>())
    .bind(text(|r| r.source_plugin.as_deref()))
    .bind(rows.iter().map(|r| r.punishment_type).collect::<Vec<_>>())
    .bind(text(|r| r.external_id.as_deref()))
    .bind(rows.iter().map(|r| r.revoked_at).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.revoked_by).collect::<Vec<_>>())
    .bind(text(|r| r.revoked_by_name.as_deref()))
    .bind(text(|r| r.revoke_reason.as_deref()))
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

/// Ends the not-yet-revoked punishments among those `issued` (account, punishment id) and
/// those the stored revokes `revokes` (account, revoke id) name, each from the earliest stored
/// revoke that names it.
async fn end_revoked(
    conn: &mut PgConnection,
    issued: &[(Uuid, Uuid)],
    revokes: &[(Uuid, Uuid)],
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "WITH chunk_revokes AS (
             SELECT r.* FROM UNNEST($3::uuid[], $4::uuid[]) AS k(account_id, id)
             JOIN punishment_revokes r ON r.account_id = k.account_id AND r.id = k.id
         ), touched AS (
             SELECT p.account_id, p.id, p.type, p.source_plugin, p.external_id
             FROM UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, id)
             JOIN punishments p ON p.account_id = k.account_id AND p.id = k.id
             WHERE p.revoked_at IS NULL
             UNION
             SELECT p.account_id, p.id, p.type, p.source_plugin, p.external_id
             FROM chunk_revokes r
             JOIN punishments p ON p.account_id = r.account_id AND p.id = r.punishment_id
             WHERE p.revoked_at IS NULL
             UNION
             SELECT p.account_id, p.id, p.type, p.source_plugin, p.external_id
             FROM chunk_revokes r
             JOIN punishments p ON p.account_id = r.account_id
                  AND coalesce(p.source_plugin, '') = coalesce(r.source_plugin, '')
                  AND p.type = r.type AND p.external_id = r.external_id
             WHERE p.revoked_at IS NULL
         ), first_revoke AS (
             SELECT t.account_id, t.id, f.revoked_at, f.revoked_by, f.revoked_by_name,
                    f.revoke_reason
             FROM touched t
             CROSS JOIN LATERAL (
                 SELECT * FROM (
                     SELECT r.seq, r.revoked_at, r.revoked_by, r.revoked_by_name, r.revoke_reason
                     FROM punishment_revokes r
                     WHERE r.account_id = t.account_id AND r.punishment_id = t.id
                     UNION ALL
                     SELECT r.seq, r.revoked_at, r.revoked_by, r.revoked_by_name, r.revoke_reason
                     FROM punishment_revokes r
                     WHERE r.account_id = t.account_id
                       AND coalesce(r.source_plugin, '') = coalesce(t.source_plugin, '')
                       AND r.type = t.type AND r.external_id = t.external_id
                 ) named
                 ORDER BY seq
                 LIMIT 1
             ) f
         )
         UPDATE punishments p
         SET revoked_at = f.revoked_at, revoked_by = f.revoked_by,
             revoked_by_name = f.revoked_by_name, revoke_reason = f.revoke_reason
         FROM first_revoke f
         WHERE p.account_id = f.account_id AND p.id = f.id AND p.revoked_at IS NULL",
    )
    .bind(issued.iter().map(|k| k.0).collect::<Vec<_>>())
    .bind(issued.iter().map(|k| k.1).collect::<Vec<_>>())
    .bind(revokes.iter().map(|k| k.0).collect::<Vec<_>>())
    .bind(revokes.iter().map(|k| k.1).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
#[path = "punishments_tests.rs"]
mod tests;
