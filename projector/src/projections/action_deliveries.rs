//! Where the dashboard's actions were applied: one row of `action_deliveries` per action and
//! server, from the servers' `action_ack` records, holding the latest outcome (by log
//! position) and its time. The punishment rows of the Investigate page read it.
//!
//! Delivery is at least once, so a server may acknowledge an action twice: the later record
//! replaces the earlier one only when it stands later in the log, so a replay ends where the
//! first pass did.

use super::Positioned;
use chrono::{DateTime, Utc};
use shared::envelope::{RecordBatch, event_seq};
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's arrays stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// The `action_deliveries` rows of a chunk, column by column (as UNNEST takes them); one per
/// (account, action, server), the last in log order.
#[derive(Debug, Default, PartialEq)]
pub struct DeliveryColumns<'a> {
    /// Owning account.
    pub account_id: Vec<Uuid>,
    /// The action.
    pub action_id: Vec<Uuid>,
    /// The server that acknowledged it.
    pub server_id: Vec<Uuid>,
    /// `applied`, `not_online`, `skipped` or `failed`.
    pub outcome: Vec<&'a str>,
    /// The server's words, if any.
    pub detail: Vec<Option<&'a str>>,
    /// When the server acted.
    pub at: Vec<DateTime<Utc>>,
    /// The ack's timeline position.
    pub seq: Vec<i64>,
}

impl<'a> DeliveryColumns<'a> {
    /// The delivery rows of `messages`.
    pub fn of(messages: &[&'a Positioned]) -> DeliveryColumns<'a> {
        let mut latest: std::collections::HashMap<(Uuid, Uuid, Uuid), usize> =
            std::collections::HashMap::new();
        let mut columns = DeliveryColumns::default();
        for m in messages {
            let RecordBatch::ActionAck(records) = &m.message.batch else {
                continue;
            };
            for (index, logged) in records.iter().enumerate() {
                let ack = &logged.record;
                let key = (m.message.account_id, ack.action_id, ack.server_id);
                let row = (
                    ack.outcome.as_str(),
                    ack.detail.as_deref(),
                    ack.at.unwrap_or(m.message.received_at),
                    event_seq(m.stream_sequence, index),
                );
                match latest.get(&key) {
                    Some(&i) => {
                        (
                            columns.outcome[i],
                            columns.detail[i],
                            columns.at[i],
                            columns.seq[i],
                        ) = row
                    }
                    None => {
                        latest.insert(key, columns.account_id.len());
                        columns.account_id.push(key.0);
                        columns.action_id.push(key.1);
                        columns.server_id.push(key.2);
                        columns.outcome.push(row.0);
                        columns.detail.push(row.1);
                        columns.at.push(row.2);
                        columns.seq.push(row.3);
                    }
                }
            }
        }
        columns
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.action_id.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.action_id.is_empty()
    }
}

/// Where actions were applied.
#[derive(Debug, Clone, Copy)]
pub struct ActionDeliveries;

read_model! { ActionDeliveries: "action_deliveries", tables: ["action_deliveries"], fold: apply }

/// Upserts the delivery rows of `messages`; returns the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let columns = DeliveryColumns::of(messages);
    let mut written = 0;
    for rows in super::statement_ranges(columns.len(), ROWS_PER_STATEMENT) {
        written += upsert(conn, &columns, rows).await?;
    }
    Ok(written)
}

async fn upsert(
    conn: &mut PgConnection,
    c: &DeliveryColumns<'_>,
    rows: std::ops::Range<usize>,
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO action_deliveries (account_id, action_id, server_id, outcome, detail, at, seq)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
                              $6::timestamptz[], $7::bigint[])
         ON CONFLICT (account_id, action_id, server_id) DO UPDATE
            SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, at = EXCLUDED.at,
                seq = EXCLUDED.seq
            WHERE action_deliveries.seq < EXCLUDED.seq",
    )
    .bind(&c.account_id[rows.clone()])
    .bind(&c.action_id[rows.clone()])
    .bind(&c.server_id[rows.clone()])
    .bind(&c.outcome[rows.clone()])
    .bind(&c.detail[rows.clone()])
    .bind(&c.at[rows.clone()])
    .bind(&c.seq[rows])
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::envelope::{LogMessage, Logged};
    use shared::records::ActionAck;

    fn ack(action: u128, server: u128, outcome: &str) -> Logged<ActionAck> {
        Logged {
            id: Uuid::now_v7(),
            record: ActionAck {
                server_id: Uuid::from_u128(server),
                action_id: Uuid::from_u128(action),
                outcome: outcome.into(),
                detail: None,
                at: None,
            },
        }
    }

    #[test]
    fn one_row_per_action_and_server_holding_the_latest_outcome() {
        let account = Uuid::from_u128(1);
        let received = Utc::now();
        let messages = [
            Positioned {
                stream_sequence: 4,
                message: LogMessage::new(
                    account,
                    received,
                    RecordBatch::ActionAck(vec![ack(10, 20, "failed"), ack(10, 21, "applied")]),
                ),
            },
            Positioned {
                stream_sequence: 5,
                message: LogMessage::new(
                    account,
                    received,
                    RecordBatch::ActionAck(vec![ack(10, 20, "applied")]),
                ),
            },
        ];
        let refs: Vec<&Positioned> = messages.iter().collect();
        let columns = DeliveryColumns::of(&refs);
        assert_eq!(
            columns.server_id,
            [Uuid::from_u128(20), Uuid::from_u128(21)]
        );
        assert_eq!(columns.outcome, ["applied", "applied"]);
        assert_eq!(columns.seq, [5000, 4001]);
        assert_eq!(
            columns.at,
            [received, received],
            "absent: the time of receipt"
        );
    }
}
