//! One read model's transaction over a chunk: lock its checkpoint, apply the messages past it
//! (each one PostgreSQL refuses isolated and parked for this model only), advance the
//! checkpoint, commit. Exactly-once and poison isolation hold per model: the checkpoint moves
//! in the same commit as the writes and parked rows it covers.

use super::isolate::{Refusal, apply_isolated_as};
use crate::checkpoint::{self, Parked};
use crate::error::ProjectorError;
use crate::projections::{Delivered, Load, Positioned, ReadModel};
use sqlx::PgPool;
use std::borrow::Cow;

/// What one model's committed transaction did.
#[derive(Debug)]
pub(crate) struct ModelOutcome {
    /// Its checkpoint before the chunk: it applied only the messages past it.
    pub(super) checkpoint: u64,
    /// The messages it refused (indexes into the decoded messages), each parked for it.
    pub(super) refused: Vec<(usize, Refusal)>,
    /// How long its transaction took, from begin to commit.
    busy: std::time::Duration,
}

impl ModelOutcome {
    /// How long its transaction took, from begin to commit.
    pub(crate) fn busy(&self) -> std::time::Duration {
        self.busy
    }
}

/// The decoded messages of a chunk, each with the delivery it came from.
pub(super) struct Decoded<'a> {
    /// This partition's messages of the chunk, as delivered.
    pub(super) chunk: Cow<'a, [Delivered]>,
    pub(super) messages: Vec<Positioned>,
    /// The index in `chunk` of each of `messages`.
    pub(super) sources: Vec<usize>,
}

/// Where a model's transaction stands in the log.
#[derive(Debug, Clone, Copy)]
pub(super) struct At<'s> {
    /// The partition whose checkpoint it moves.
    pub(super) partition: checkpoint::Partition,
    /// The checkpoint the consumer saw committed ([`super::Applier::committed`]).
    pub(super) committed: u64,
    /// Where the checkpoint moves to.
    pub(super) last_sequence: u64,
    /// How the fold stores its rows.
    pub(super) load: Load<'s>,
}

/// Applies `decoded` to `model` in its own transaction and moves its checkpoint to
/// `at.last_sequence` (never backwards). An outage is an `Err`, and nothing of it is kept:
/// nor of what a bulk load keeps ([`crate::projections::BulkState`]), which is forgotten.
pub(super) async fn apply_model(
    pool: &PgPool,
    model: &'static dyn ReadModel,
    decoded: &Decoded<'_>,
    at: At<'_>,
) -> Result<ModelOutcome, ProjectorError> {
    let outcome = transaction(pool, model, decoded, at).await;
    if outcome.is_err()
        && let Load::Bulk(state) = at.load
    {
        state.forget();
    }
    outcome
}

/// [`apply_model`]'s transaction.
async fn transaction(
    pool: &PgPool,
    model: &'static dyn ReadModel,
    decoded: &Decoded<'_>,
    at: At<'_>,
) -> Result<ModelOutcome, ProjectorError> {
    let At {
        partition,
        committed,
        last_sequence,
        load,
    } = at;
    let name = [model.name()];
    let started = std::time::Instant::now();
    let mut tx = pool.begin().await?;
    // Ten models commit per chunk where one transaction used to: flushing the WAL for each
    // would cost ten fsyncs per chunk. An asynchronous commit is safe here, as the read
    // models are derived from the durable log: a PostgreSQL crash can lose only the last
    // commits whole (writes, parked rows and checkpoint together, never some of them), and
    // the projector applies those messages again from the checkpoint that survived.
    sqlx::query("SET LOCAL synchronous_commit = off")
        .execute(&mut *tx)
        .await?;
    // A second projector process (or a retry, or a rebuild's swap) waits here.
    let checkpoint = checkpoint::lock(&mut tx, &name, partition)
        .await?
        .first()
        .copied()
        .unwrap_or(0);
    if checkpoint < committed {
        // The messages between would be skipped for good: this chunk starts after them.
        return Err(ProjectorError::CheckpointBehind {
            projection: model.name(),
            partition,
            found: checkpoint,
            committed,
        });
    }
    if checkpoint >= last_sequence {
        // Holds the whole chunk already (a redelivery): nothing to write.
        return Ok(ModelOutcome {
            checkpoint,
            refused: Vec::new(),
            busy: started.elapsed(),
        });
    }
    let refused =
        apply_isolated_as(&mut tx, &[(model, checkpoint)], &decoded.messages, load).await?;
    let parked: Vec<Parked> = refused
        .iter()
        .map(|(index, refusal)| {
            let positioned = &decoded.messages[*index];
            let source = &decoded.chunk[decoded.sources[*index]];
            tracing::warn!(
                stream_sequence = positioned.stream_sequence,
                subject = %source.subject,
                account_id = %positioned.message.account_id,
                projection = model.name(),
                error = %refusal.error,
                "parking a log message PostgreSQL refuses for this read model; the other \
                 models and the rest of the chunk are applied"
            );
            Parked {
                stream_sequence: positioned.stream_sequence,
                projection: model.name(),
                subject: source.subject.clone(),
                reason: refusal.describe(),
                sqlstate: refusal.sqlstate(),
                payload: source.payload.clone(),
            }
        })
        .collect();
    checkpoint::park(&mut tx, &parked).await?;
    checkpoint::advance(&mut tx, &name, partition, last_sequence).await?;
    tx.commit().await?;
    let busy = started.elapsed();
    // Which model sets a chunk's pace (and a rebuild's), for an operator at debug level.
    tracing::debug!(
        projection = model.name(),
        partition,
        last_sequence,
        elapsed_ms = busy.as_secs_f64() * 1000.0,
        "read model transaction committed"
    );
    Ok(ModelOutcome {
        checkpoint,
        refused,
        busy,
    })
}
