//! Parked messages after the fact: counting them for `/metrics`, listing them, and re-applying
//! them once a fix is deployed (`projector parked list|retry`).
//!
//! A parked row names the read model that refused its message (or `*`: every model, for a
//! message no model can read and rows parked before migration 0023). A retry applies the
//! stored payload to the models that parked it only, through the same code as the live
//! projector ([`projections::apply_isolated`], one model at a time, in registry order so a
//! model runs after those it depends on), one message per transaction that first locks the
//! checkpoint rows, as every live model's transaction does: the live projector waits for it,
//! and never sees a half-applied message. The folds are replay-safe (re-applying a message changes nothing),
//! and the ones that keep a latest value compare record time, then log position, so a message
//! applied late lands where it would have landed in order.

use crate::checkpoint::{self, EVERY_MODEL, Parked};
use crate::error::ProjectorError;
use crate::projections::{self, Positioned, ReadModel};
use chrono::{DateTime, Utc};
use shared::envelope::LogMessage;
use shared::privacy::Keyring;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// A row of `parked_messages`, without its payload.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ParkedMessage {
    /// Its stream sequence.
    pub stream_sequence: i64,
    /// The read model that cannot apply it, or `*` for every model.
    pub projection: String,
    /// Its subject (names the account and kind).
    pub subject: String,
    /// The reason code, then the error.
    pub reason: String,
    /// The SQLSTATE PostgreSQL refused it with, if it got that far.
    pub sqlstate: Option<String>,
    /// The payload's size in bytes.
    pub payload_bytes: i32,
    /// When it was parked.
    pub parked_at: DateTime<Utc>,
}

/// Which parked messages to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The one at this stream sequence.
    One(u64),
    /// Every one, in log order.
    All,
}

/// What retrying one parked message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retried {
    /// Applied to every read model that parked it and is already past it, and removed from
    /// `parked_messages`.
    Applied,
    /// PostgreSQL still refuses it for some model: it stays parked for those models (with
    /// this new reason, the first one's), and is applied to the others.
    StillRefused(String),
    /// This build still cannot read it: it stays parked.
    Unreadable(String),
    /// No parked message has that sequence.
    NotParked,
}

/// Every parked row, in log order: one per read model that parked the message.
pub async fn list(pool: &PgPool) -> Result<Vec<ParkedMessage>, sqlx::Error> {
    sqlx::query_as(
        "SELECT stream_sequence, projection, subject, reason, sqlstate,
                octet_length(payload) AS payload_bytes, parked_at
         FROM parked_messages ORDER BY stream_sequence, projection",
    )
    .fetch_all(pool)
    .await
}

/// Retries the `selection`, in log order; returns each sequence with what happened to it.
/// Stops at the first outage (what was applied before it stays applied). The stored payloads
/// are as logged (sealed): `keyring` opens them, as the live projector does. `subjects` are the
/// stream's ([`shared::nats::existing_event_stream`]): a message's subject names its partition,
/// whose checkpoints the retry locks.
pub async fn retry(
    pool: &PgPool,
    keyring: &Keyring,
    subjects: &Subjects,
    selection: Selection,
) -> Result<Vec<(u64, Retried)>, ProjectorError> {
    let sequences: Vec<u64> = match selection {
        Selection::One(sequence) => vec![sequence],
        Selection::All => sqlx::query_scalar::<_, i64>(
            "SELECT DISTINCT stream_sequence FROM parked_messages ORDER BY stream_sequence",
        )
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|s| u64::try_from(s).unwrap_or(0))
        .collect(),
    };
    let mut results = Vec::with_capacity(sequences.len());
    for sequence in sequences {
        let retried = retry_one(pool, keyring, subjects, sequence).await?;
        tracing::info!(stream_sequence = sequence, outcome = ?retried, "retried a parked message");
        results.push((sequence, retried));
    }
    refresh_gauge(pool).await?;
    Ok(results)
}

/// A parked row as a retry reads it.
#[derive(sqlx::FromRow)]
struct Stored {
    projection: String,
    subject: String,
    payload: Vec<u8>,
    parked_at: DateTime<Utc>,
}

async fn retry_one(
    pool: &PgPool,
    keyring: &Keyring,
    subjects: &Subjects,
    sequence: u64,
) -> Result<Retried, ProjectorError> {
    let names = projections::checkpoint_names();
    // A parked row's subject never changes: read before any lock, it names the partition whose
    // checkpoints come first, in the order every model's transaction takes its locks.
    let subject: Option<String> = sqlx::query_scalar(
        "SELECT subject FROM parked_messages WHERE stream_sequence = $1 LIMIT 1",
    )
    .bind(checkpoint::to_column(sequence))
    .fetch_optional(pool)
    .await?;
    let Some(subject) = subject else {
        return Ok(Retried::NotParked);
    };
    let partition = subjects.partition_of_subject(&subject);
    let mut tx = pool.begin().await?;
    let checkpoints = checkpoint::lock(&mut tx, &names, partition).await?;
    let rows: Vec<Stored> = sqlx::query_as(
        "SELECT projection, subject, payload, parked_at FROM parked_messages
         WHERE stream_sequence = $1 ORDER BY projection FOR UPDATE",
    )
    .bind(checkpoint::to_column(sequence))
    .fetch_all(&mut *tx)
    .await?;
    let Some(stored) = rows.first() else {
        return Ok(Retried::NotParked);
    };
    let mut message = match LogMessage::decode(&stored.payload) {
        Ok(message) => message,
        Err(error) => return Ok(Retried::Unreadable(error.to_string())),
    };
    // An outage of the key buckets fails the retry; the message stays parked.
    keyring.open(std::slice::from_mut(&mut message)).await?;
    let message = [Positioned {
        stream_sequence: sequence,
        message,
    }];
    let parked_for = |model: &dyn ReadModel| {
        rows.iter()
            .any(|row| row.projection == EVERY_MODEL || row.projection == model.name())
    };
    // Only the models that parked it, each under its own savepoint so one still refusing it
    // does not undo the others. Models still before it (a rebuild in progress) will read it
    // from the log themselves.
    let mut refusals = Vec::new();
    for (model, checkpoint) in projections::READ_MODELS.iter().copied().zip(checkpoints) {
        if checkpoint < sequence || !parked_for(model) {
            continue;
        }
        let refused = projections::apply_isolated(&mut tx, &[(model, 0)], &message).await?;
        refusals.extend(refused.into_iter().map(|(_, refusal)| refusal));
    }
    // Its rows now say exactly which models still refuse it, since when it was parked.
    sqlx::query("DELETE FROM parked_messages WHERE stream_sequence = $1")
        .bind(checkpoint::to_column(sequence))
        .execute(&mut *tx)
        .await?;
    let still: Vec<Parked> = refusals
        .iter()
        .map(|refusal| Parked {
            stream_sequence: sequence,
            projection: refusal.model.name(),
            subject: stored.subject.clone(),
            reason: refusal.describe(),
            sqlstate: refusal.sqlstate(),
            payload: stored.payload.clone().into(),
        })
        .collect();
    checkpoint::park(&mut tx, &still).await?;
    sqlx::query("UPDATE parked_messages SET parked_at = $2 WHERE stream_sequence = $1")
        .bind(checkpoint::to_column(sequence))
        .bind(stored.parked_at)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(match refusals.first() {
        Some(refusal) => Retried::StillRefused(refusal.describe()),
        None => Retried::Applied,
    })
}

/// Reasons the gauge has shown, so one whose rows are all gone drops to 0 instead of keeping
/// its last count.
static GAUGED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Sets `projector_parked_messages{reason}` from the table, so the count survives restarts
/// and follows retries made by another process. It counts messages: one refused by several
/// read models counts once, under the reason of its first row.
pub(crate) async fn refresh_gauge(pool: &PgPool) -> Result<(), sqlx::Error> {
    let counts: Vec<(String, i64)> = sqlx::query_as(
        "SELECT reason, count(*) FROM (
             SELECT DISTINCT ON (stream_sequence) split_part(reason, ':', 1) AS reason
             FROM parked_messages ORDER BY stream_sequence, projection
         ) AS messages GROUP BY 1",
    )
    .fetch_all(pool)
    .await?;
    let Ok(mut gauged) = GAUGED.lock() else {
        return Ok(());
    };
    for reason in gauged.iter() {
        if !counts.iter().any(|(r, _)| r == reason) {
            metrics::gauge!("projector_parked_messages", "reason" => reason.clone()).set(0.0);
        }
    }
    for (reason, count) in counts {
        metrics::gauge!("projector_parked_messages", "reason" => reason.clone()).set(count as f64);
        gauged.insert(reason);
    }
    Ok(())
}
