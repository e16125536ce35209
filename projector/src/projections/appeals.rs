//! Appeals: one row of `appeals` per appeal, from its `appeal` records in log order. The
//! player's `submitted` step makes the row (a second appeal of the same punishment is not
//! stored); each staff step sets the status, who took it, the reply and the revoke action.
//!
//! Only query-api writes appeals to the log, after validating them; the fold checks each step
//! again with [`Appeal::validate`] against the message's time of receipt and skips one that
//! breaks a rule, so a hostile record can never stall the projector. A step applies only when it
//! stands later in the log than the row's latest, so a replay ends where the first pass did. An
//! appeal whose message is erased (its player's key destroyed) is not stored.

use super::Positioned;
use shared::envelope::{RecordBatch, event_seq};
use shared::records::{Appeal, AppealStep};
use sqlx::PgConnection;
use uuid::Uuid;

/// Appeals and their status.
#[derive(Debug, Clone, Copy)]
pub struct Appeals;

read_model! { Appeals: "appeals", tables: ["appeals"], fold: apply }

/// Applies the appeal steps of `messages`; returns the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let mut written = 0;
    for m in messages {
        let RecordBatch::Appeal(records) = &m.message.batch else {
            continue;
        };
        for (index, logged) in records.iter().enumerate() {
            let appeal = &logged.record;
            if let Err(errors) = appeal.validate(m.message.received_at) {
                tracing::warn!(
                    stream_sequence = m.stream_sequence,
                    appeal_id = %appeal.id,
                    ?errors,
                    "skipped an appeal step that breaks the appeal rules"
                );
                metrics::counter!("projector_appeals_skipped_total").increment(1);
                continue;
            }
            let seq = event_seq(m.stream_sequence, index);
            written += match appeal.step {
                AppealStep::Submitted => submit(conn, m.message.account_id, appeal, seq).await?,
                _ => step(conn, m.message.account_id, appeal, seq).await?,
            };
        }
    }
    Ok(written)
}

async fn submit(
    conn: &mut PgConnection,
    account: Uuid,
    appeal: &Appeal,
    seq: i64,
) -> Result<u64, sqlx::Error> {
    let Some(message) = appeal.message.as_deref().filter(|m| !m.is_empty()) else {
        return Ok(0);
    };
    let result = sqlx::query(
        "INSERT INTO appeals (account_id, id, punishment_id, player_uuid, message, status,
                              submitted_at, updated_at, seq)
         VALUES ($1, $2, $3, $4, $5, 'new', $6, $6, $7)
         ON CONFLICT DO NOTHING",
    )
    .bind(account)
    .bind(appeal.id)
    .bind(appeal.punishment_id)
    .bind(appeal.player_uuid)
    .bind(message)
    .bind(appeal.at)
    .bind(seq)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

async fn step(
    conn: &mut PgConnection,
    account: Uuid,
    appeal: &Appeal,
    seq: i64,
) -> Result<u64, sqlx::Error> {
    let by = appeal.by.as_ref();
    let result = sqlx::query(
        "UPDATE appeals SET status = $3, updated_at = $4, member_id = $5, member_name = $6,
                            reply = $7, revoke_action = $8, seq = $9
         WHERE account_id = $1 AND id = $2 AND seq < $9",
    )
    .bind(account)
    .bind(appeal.id)
    .bind(appeal.step.status())
    .bind(appeal.at)
    .bind(by.map(|b| b.member_id))
    .bind(by.map(|b| b.name.as_str()))
    .bind(appeal.reply.as_deref())
    .bind(appeal.revoke_action)
    .bind(seq)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}
