//! The evaluator's chunk: one transaction that locks the notifier's checkpoint, evaluates the
//! rules of the chunk's accounts against each new log message (its personal fields opened
//! first, so notifications carry clear names, and none of an erased player), writes the
//! notifications to the outbox with the rules' state, moves the checkpoint and wakes the
//! delivery workers.
//!
//! A message that cannot be read, or whose evaluation PostgreSQL refuses, is skipped with a
//! warning (under a savepoint, so the rest of the chunk stands): the projector parks such
//! messages for people to look at; the notifier must simply never stop on one.

use super::outbox::{self, Notification};
use super::rules::{self, ActiveRule};
use super::{anticheat, records, servers};
use crate::checkpoint::to_column;
use crate::error::{ProjectorError, refuses_data};
use crate::projections::Delivered;
use chrono::{DateTime, Utc};
use serde_json::Value;
use shared::alerts::EventType;
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::Keyring;
use sqlx::{Connection, PgConnection, PgPool};
use uuid::Uuid;

/// One log message as the rules of its account see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub(crate) account_id: Uuid,
    pub(crate) received_at: DateTime<Utc>,
    pub(crate) stream_sequence: u64,
    rules: &'a [ActiveRule],
}

impl<'a> Scope<'a> {
    /// The account's rules that existed when the message was received (never the past).
    pub(crate) fn rules(&self) -> impl Iterator<Item = &'a ActiveRule> + use<'a> {
        let received_at = self.received_at;
        self.rules.iter().filter(move |r| r.sees(received_at))
    }

    /// A notification of `rule` caused by this message.
    pub(crate) fn notify(
        &self,
        rule: &ActiveRule,
        event_type: EventType,
        occurred_at: DateTime<Utc>,
        fields: Value,
    ) -> Notification {
        Notification::of(
            rule,
            event_type,
            occurred_at,
            Some(self.stream_sequence),
            fields,
        )
    }
}

/// What one committed chunk did.
#[derive(Debug, Default)]
pub(crate) struct Evaluated {
    /// Where the checkpoint now stands.
    pub(crate) last_sequence: u64,
    /// Outbox rows written.
    pub(crate) deliveries: u64,
}

/// Evaluates `chunk` in one transaction with the checkpoint of `stream`.
pub(crate) async fn apply_chunk(
    pool: &PgPool,
    keyring: &Keyring,
    stream: &str,
    chunk: &[Delivered],
) -> Result<Evaluated, ProjectorError> {
    let Some(last) = chunk.last() else {
        return Ok(Evaluated::default());
    };
    let mut messages = Vec::with_capacity(chunk.len());
    let mut sequences = Vec::with_capacity(chunk.len());
    for delivered in chunk {
        match LogMessage::decode(&delivered.payload) {
            Ok(message) => {
                messages.push(message);
                sequences.push(delivered.stream_sequence);
            }
            Err(error) => tracing::warn!(
                stream_sequence = delivered.stream_sequence,
                subject = %delivered.subject,
                %error,
                "the notifier skips a log message it cannot read"
            ),
        }
    }
    // Before the transaction, so no key fetch holds the checkpoint lock; an outage of the key
    // buckets fails the chunk, which is retried from the checkpoint (never skipped).
    keyring.open(&mut messages).await?;
    let mut tx = pool.begin().await?;
    let floor = lock_checkpoint(&mut tx, stream).await?;
    // Defensive: another notifier (a partitioned leader) may already be past some of them.
    let messages: Vec<(u64, LogMessage)> = sequences
        .into_iter()
        .zip(messages)
        .filter(|(sequence, _)| *sequence > floor)
        .collect();
    let mut accounts: Vec<Uuid> = messages.iter().map(|(_, m)| m.account_id).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let book = if accounts.is_empty() {
        rules::RuleBook::default()
    } else {
        rules::load(&mut tx, &accounts).await?
    };
    let mut evaluated = Evaluated {
        last_sequence: last.stream_sequence.max(floor),
        deliveries: 0,
    };
    if !book.is_empty() {
        for (stream_sequence, message) in &messages {
            let scope = Scope {
                account_id: message.account_id,
                received_at: message.received_at,
                stream_sequence: *stream_sequence,
                rules: book.of(message.account_id),
            };
            if scope.rules().next().is_none() {
                continue;
            }
            evaluated.deliveries += evaluate_isolated(&mut tx, &scope, message).await?;
        }
    }
    if evaluated.deliveries > 0 {
        outbox::wake(&mut tx).await?;
    }
    advance_checkpoint(&mut tx, stream, evaluated.last_sequence).await?;
    tx.commit().await?;
    Ok(evaluated)
}

/// Evaluates one message and writes its notifications under a savepoint; a message PostgreSQL
/// refuses is skipped (0 rows), an outage is an `Err` that fails the chunk.
async fn evaluate_isolated(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    message: &LogMessage,
) -> Result<u64, ProjectorError> {
    let mut savepoint = conn.begin().await?;
    let written = match evaluate(&mut savepoint, scope, message).await {
        Ok(notifications) => outbox::insert(&mut savepoint, &notifications).await,
        Err(error) => Err(error),
    };
    match written {
        Ok(rows) => {
            savepoint.commit().await?;
            record(rows, message);
            Ok(rows)
        }
        Err(error) if refuses_data(&error) => {
            savepoint.rollback().await?;
            tracing::warn!(
                stream_sequence = scope.stream_sequence,
                account_id = %scope.account_id,
                %error,
                "the notifier skips a log message PostgreSQL refuses to evaluate"
            );
            Ok(0)
        }
        Err(error) => Err(error.into()),
    }
}

fn record(rows: u64, message: &LogMessage) {
    if rows > 0 {
        metrics::counter!("notifier_deliveries_created_total", "kind" => message.kind().as_str())
            .increment(rows);
    }
}

/// The notifications the rules of `scope` make of `message` (state tables move with them).
async fn evaluate(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    message: &LogMessage,
) -> Result<Vec<Notification>, sqlx::Error> {
    match &message.batch {
        RecordBatch::Punishment(r) => Ok(records::punishments(scope, r)),
        RecordBatch::Custom(r) => Ok(records::custom_events(scope, r)),
        RecordBatch::RankChange(r) => records::rank_changes(conn, scope, r).await,
        RecordBatch::Session(r) => records::joins(conn, scope, r).await,
        RecordBatch::AnticheatFlag(r) => anticheat::flags(conn, scope, r).await,
        RecordBatch::Heartbeat(r) => servers::heartbeats(conn, scope, r).await,
        RecordBatch::Chat(_)
        | RecordBatch::AccountLink(_)
        | RecordBatch::Note(_)
        | RecordBatch::Erasure(_)
        | RecordBatch::Action(_)
        | RecordBatch::ActionAck(_)
        | RecordBatch::Appeal(_) => Ok(Vec::new()),
    }
}

/// The notifier's checkpoint for `stream`, locked for this transaction (a second notifier
/// waits here instead of evaluating the same chunk).
async fn lock_checkpoint(conn: &mut PgConnection, stream: &str) -> Result<u64, sqlx::Error> {
    let last: Option<i64> = sqlx::query_scalar(
        "SELECT last_sequence FROM notifier_checkpoints WHERE stream = $1 FOR UPDATE",
    )
    .bind(stream)
    .fetch_optional(conn)
    .await?;
    Ok(last.map_or(0, |l| u64::try_from(l).unwrap_or(0)))
}

/// Moves the checkpoint to `last_sequence` (never backwards).
async fn advance_checkpoint(
    conn: &mut PgConnection,
    stream: &str,
    last_sequence: u64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO notifier_checkpoints (stream, last_sequence, updated_at)
         VALUES ($1, $2, now())
         ON CONFLICT (stream) DO UPDATE
         SET last_sequence = GREATEST(notifier_checkpoints.last_sequence, $2), updated_at = now()",
    )
    .bind(stream)
    .bind(to_column(last_sequence))
    .execute(conn)
    .await?;
    Ok(())
}

/// Where the evaluator resumes: its checkpoint, or on the very first start the stream's
/// current end (the past is never notified), which it records as its checkpoint.
pub(crate) async fn resume_after(
    pool: &PgPool,
    stream: &str,
    stream_end: impl std::future::Future<Output = Result<u64, ProjectorError>>,
) -> Result<u64, ProjectorError> {
    if let Some(last) = checkpoint(pool, stream).await? {
        return Ok(last);
    }
    let end = stream_end.await?;
    sqlx::query(
        "INSERT INTO notifier_checkpoints (stream, last_sequence, updated_at)
         VALUES ($1, $2, now()) ON CONFLICT (stream) DO NOTHING",
    )
    .bind(stream)
    .bind(to_column(end))
    .execute(pool)
    .await?;
    tracing::info!(
        stream,
        start_after = end,
        "first start of the notifier: evaluating from the end of the event log"
    );
    // Another notifier may have created it first: its row is the truth.
    Ok(checkpoint(pool, stream).await?.unwrap_or(end))
}

/// The notifier's checkpoint, if it ever started on `stream`.
pub(crate) async fn checkpoint(pool: &PgPool, stream: &str) -> Result<Option<u64>, sqlx::Error> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT last_sequence FROM notifier_checkpoints WHERE stream = $1")
            .bind(stream)
            .fetch_optional(pool)
            .await?;
    Ok(last.map(|l| u64::try_from(l).unwrap_or(0)))
}
