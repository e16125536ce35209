//! Anti-cheat flags (contract §5, §7 flags): one row of `anticheat_flags` per flag record,
//! and the newest of each account in the Overview's `recent_flags`.
//!
//! Written with one `INSERT ... SELECT FROM UNNEST` per [`ROWS_PER_STATEMENT`] rows; an id the
//! account already has is kept as first stored, so a late retry or a replay changes nothing.

use super::{Positioned, recent_activity};
use chrono::{DateTime, Utc};
use shared::envelope::RecordBatch;
use shared::timeline::RECENT_ACTIVITY_KEPT;
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's arrays stay small.
const ROWS_PER_STATEMENT: usize = 5_000;

/// The `anticheat_flags` rows of a chunk, column by column (as UNNEST takes them).
#[derive(Debug, Default, PartialEq)]
pub struct FlagColumns<'a> {
    /// Owning account.
    pub account_id: Vec<Uuid>,
    /// The flag's event id.
    pub id: Vec<Uuid>,
    /// The flagged player.
    pub player_uuid: Vec<Uuid>,
    /// Where.
    pub server_id: Vec<Uuid>,
    /// The check that fired, e.g. "Reach".
    pub check_name: Vec<&'a str>,
    /// Its variant, e.g. "A".
    pub check_type: Vec<Option<&'a str>>,
    /// Violation level.
    pub violation_level: Vec<f64>,
    /// Free-text detail.
    pub detail: Vec<Option<&'a str>>,
    /// The anti-cheat plugin.
    pub source_plugin: Vec<Option<&'a str>>,
    /// Whether the check is experimental (false when not said).
    pub is_experimental: Vec<bool>,
    /// The player's ping, ms.
    pub ping_ms: Vec<Option<f64>>,
    /// Server TPS at the time.
    pub tps: Vec<Option<f64>>,
    /// When it fired (the time of receipt when the record had none).
    pub flagged_at: Vec<DateTime<Utc>>,
}

impl<'a> FlagColumns<'a> {
    /// The flag rows of `messages`, in log order.
    pub fn of(messages: &[&'a Positioned]) -> FlagColumns<'a> {
        let mut columns = FlagColumns::default();
        for m in messages {
            let RecordBatch::AnticheatFlag(records) = &m.message.batch else {
                continue;
            };
            for logged in records {
                let flag = &logged.record;
                columns.account_id.push(m.message.account_id);
                columns.id.push(logged.id);
                columns.player_uuid.push(flag.player_uuid);
                columns.server_id.push(flag.server_id);
                columns.check_name.push(&flag.check_name);
                columns.check_type.push(flag.check_type.as_deref());
                columns.violation_level.push(flag.violation_level);
                columns.detail.push(flag.detail.as_deref());
                columns.source_plugin.push(flag.source_plugin.as_deref());
                columns
                    .is_experimental
                    .push(flag.is_experimental.unwrap_or(false));
                columns.ping_ms.push(flag.ping_ms);
                columns.tps.push(flag.tps);
                columns
                    .flagged_at
                    .push(flag.flagged_at.unwrap_or(m.message.received_at));
            }
        }
        columns
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// Anti-cheat flags.
#[derive(Debug, Clone, Copy)]
pub struct AnticheatFlags;

read_model! {
    AnticheatFlags: "anticheat_flags",
    tables: ["anticheat_flags", "recent_flags"],
    fold: apply,
}

/// Inserts the flag rows of `messages`, and the newest of each account into the Overview's
/// `recent_flags` ([`recent_activity`]); returns the rows inserted.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let columns = FlagColumns::of(messages);
    let mut inserted = 0;
    for rows in super::statement_ranges(columns.len(), ROWS_PER_STATEMENT) {
        inserted += insert(conn, &columns, rows).await?;
    }
    if inserted > 0 {
        let accounts = columns.account_id.iter().copied().collect();
        recent_activity::prune_flags(conn, accounts).await?;
    }
    Ok(inserted)
}

async fn insert(
    conn: &mut PgConnection,
    c: &FlagColumns<'_>,
    rows: std::ops::Range<usize>,
) -> Result<u64, sqlx::Error> {
    let inserted: i64 = sqlx::query_scalar(
        "WITH inserted AS (
         INSERT INTO anticheat_flags (account_id, id, player_uuid, server_id, check_name,
                                      check_type, violation_level, detail, source_plugin,
                                      is_experimental, ping_ms, tps, flagged_at)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[],
                              $6::text[], $7::float8[], $8::text[], $9::text[], $10::boolean[],
                              $11::float8[], $12::float8[], $13::timestamptz[])
         ON CONFLICT (account_id, id) DO NOTHING
         RETURNING account_id, id, player_uuid, server_id, check_name, check_type, flagged_at
         ), recent AS (
         INSERT INTO recent_flags (account_id, id, player_uuid, server_id, check_name,
                                   check_type, flagged_at)
         SELECT account_id, id, player_uuid, server_id, check_name, check_type, flagged_at
         FROM (SELECT *, row_number() OVER (PARTITION BY account_id
                                            ORDER BY flagged_at DESC, id DESC) AS n
               FROM inserted) newest
         WHERE n <= $14
         ON CONFLICT (account_id, id) DO NOTHING
         )
         SELECT count(*) FROM inserted",
    )
    .bind(&c.account_id[rows.clone()])
    .bind(&c.id[rows.clone()])
    .bind(&c.player_uuid[rows.clone()])
    .bind(&c.server_id[rows.clone()])
    .bind(&c.check_name[rows.clone()])
    .bind(&c.check_type[rows.clone()])
    .bind(&c.violation_level[rows.clone()])
    .bind(&c.detail[rows.clone()])
    .bind(&c.source_plugin[rows.clone()])
    .bind(&c.is_experimental[rows.clone()])
    .bind(&c.ping_ms[rows.clone()])
    .bind(&c.tps[rows.clone()])
    .bind(&c.flagged_at[rows])
    .bind(RECENT_ACTIVITY_KEPT)
    .fetch_one(conn)
    .await?;
    Ok(u64::try_from(inserted).unwrap_or(0))
}

#[cfg(test)]
#[path = "anticheat_flags_tests.rs"]
mod tests;
