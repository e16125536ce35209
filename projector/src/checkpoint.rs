//! Where each read model stands in the event log, and the log messages set aside for good.
//!
//! The writing functions take a read model's transaction, so its checkpoint moves exactly when
//! the writes it covers commit.

use bytes::Bytes;
use sqlx::{PgConnection, PgPool};

/// The `projection` of a parked row that sets its message aside for every read model: one no
/// model can read, or one parked before rows named their model (migration 0023).
pub(crate) const EVERY_MODEL: &str = "*";

/// A log message that can never be applied, with why.
#[derive(Debug, Clone)]
pub(crate) struct Parked {
    /// Its stream sequence.
    pub(crate) stream_sequence: u64,
    /// The read model that cannot apply it, or [`EVERY_MODEL`].
    pub(crate) projection: &'static str,
    /// Its subject (names the account and kind even when the payload is garbage).
    pub(crate) subject: String,
    /// Why it cannot be applied: the reason code, then the error.
    pub(crate) reason: String,
    /// The SQLSTATE PostgreSQL refused it with, if it got that far.
    pub(crate) sqlstate: Option<String>,
    /// The bytes as logged.
    pub(crate) payload: Bytes,
}

/// A partition of the event log ([`shared::subjects`]): each read model has a checkpoint per
/// partition.
pub(crate) type Partition = u16;

/// Creates the missing checkpoint rows of `projections` for partitions `0..partitions`. A row
/// made before partitions (`log_partition` -1, migration 0024) covered every account: each
/// partition's new row starts where it stood, and it is deleted. A model new to the database
/// starts at 0 (it replays the whole log).
pub(crate) async fn ensure(
    pool: &PgPool,
    projections: &[&str],
    partitions: u16,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH legacy AS (
             DELETE FROM projection_checkpoints
             WHERE log_partition = -1 AND projection = ANY($1)
             RETURNING projection, last_sequence
         )
         INSERT INTO projection_checkpoints (projection, log_partition, last_sequence, updated_at)
         SELECT t.name, k, COALESCE(legacy.last_sequence, 0), now()
         FROM UNNEST($1::text[]) AS t(name)
         CROSS JOIN generate_series(0, $2 - 1) AS k
         LEFT JOIN legacy ON legacy.projection = t.name
         ON CONFLICT (projection, log_partition) DO NOTHING",
    )
    .bind(projections)
    .bind(i32::from(partitions.max(1)))
    .execute(pool)
    .await?;
    Ok(())
}

/// The lowest checkpoint among `projections` in `partition`: its consumption resumes right
/// after it.
pub(crate) async fn resume_after(
    pool: &PgPool,
    projections: &[&str],
    partition: Partition,
) -> Result<u64, sqlx::Error> {
    let lowest: Option<i64> = sqlx::query_scalar(
        "SELECT min(last_sequence) FROM projection_checkpoints
         WHERE projection = ANY($1) AND log_partition = $2",
    )
    .bind(projections)
    .bind(i32::from(partition))
    .fetch_one(pool)
    .await?;
    Ok(to_sequence(lowest.unwrap_or(0)))
}

/// Locks the checkpoints of `projections` in `partition` for this transaction and returns them
/// in the same order; a second projector process waits here instead of applying the same chunk.
pub(crate) async fn lock(
    conn: &mut PgConnection,
    projections: &[&str],
    partition: Partition,
) -> Result<Vec<u64>, sqlx::Error> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT projection, last_sequence FROM projection_checkpoints
         WHERE projection = ANY($1) AND log_partition = $2
         ORDER BY projection FOR UPDATE",
    )
    .bind(projections)
    .bind(i32::from(partition))
    .fetch_all(&mut *conn)
    .await?;
    Ok(projections
        .iter()
        .map(|name| {
            rows.iter()
                .find(|(projection, _)| projection == name)
                .map_or(0, |(_, last)| to_sequence(*last))
        })
        .collect())
}

/// Moves the checkpoints of `projections` in `partition` to `last_sequence` (never backwards).
pub(crate) async fn advance(
    conn: &mut PgConnection,
    projections: &[&str],
    partition: Partition,
    last_sequence: u64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE projection_checkpoints
         SET last_sequence = GREATEST(last_sequence, $3), updated_at = now()
         WHERE projection = ANY($1) AND log_partition = $2",
    )
    .bind(projections)
    .bind(i32::from(partition))
    .bind(to_column(last_sequence))
    .execute(conn)
    .await?;
    Ok(())
}

/// Stores messages that can never be applied, each for its read model; parking one twice for
/// the same model (on replay) keeps the first. Returns the sequences of the rows it added.
pub(crate) async fn park(
    conn: &mut PgConnection,
    parked: &[Parked],
) -> Result<Vec<u64>, sqlx::Error> {
    if parked.is_empty() {
        return Ok(Vec::new());
    }
    let sequences: Vec<i64> = parked
        .iter()
        .map(|p| to_column(p.stream_sequence))
        .collect();
    let projections: Vec<&str> = parked.iter().map(|p| p.projection).collect();
    // Parking must never fail on what it stores, or the message would halt the log after all.
    let subjects: Vec<String> = parked.iter().map(|p| storable(&p.subject)).collect();
    let reasons: Vec<String> = parked.iter().map(|p| storable(&p.reason)).collect();
    let sqlstates: Vec<Option<&str>> = parked.iter().map(|p| p.sqlstate.as_deref()).collect();
    let payloads: Vec<&[u8]> = parked.iter().map(|p| p.payload.as_ref()).collect();
    let added: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO parked_messages
             (stream_sequence, projection, subject, reason, sqlstate, payload, parked_at)
         SELECT s, m, subj, r, c, p, now()
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[])
             AS t(s, m, subj, r, c, p)
         ON CONFLICT (stream_sequence, projection) DO NOTHING
         RETURNING stream_sequence",
    )
    .bind(sequences)
    .bind(projections)
    .bind(subjects)
    .bind(reasons)
    .bind(sqlstates)
    .bind(payloads)
    .fetch_all(conn)
    .await?;
    Ok(added.into_iter().map(to_sequence).collect())
}

/// `text` without the NUL PostgreSQL refuses, and short enough to read in a listing.
pub(crate) fn storable(text: &str) -> String {
    const MAX_CHARS: usize = 2_000;
    text.chars()
        .take(MAX_CHARS)
        .map(|c| if c == '\0' { '\u{FFFD}' } else { c })
        .collect()
}

/// Stream sequences are u64; PostgreSQL has no unsigned type, and no stream gets near 2^63.
pub(crate) fn to_column(sequence: u64) -> i64 {
    i64::try_from(sequence).unwrap_or(i64::MAX)
}

fn to_sequence(column: i64) -> u64 {
    u64::try_from(column).unwrap_or(0)
}
