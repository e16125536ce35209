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

/// Applies `chunks` (one or more of a partition's decoded chunks, in log order) to `model` in
/// one transaction of its own and moves its checkpoint to `at.last_sequence` (the last
/// chunk's; never backwards); returns what it did of each chunk, in their order. An outage is
/// an `Err`, and nothing of it is kept: nor of what a bulk load keeps
/// ([`crate::projections::BulkState`]), which is forgotten.
pub(super) async fn apply_model(
    pool: &PgPool,
    model: &'static dyn ReadModel,
    chunks: &[&Decoded<'_>],
    at: At<'_>,
) -> Result<Vec<ModelOutcome>, ProjectorError> {
    let outcome = transaction(pool, model, chunks, at).await;
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
    chunks: &[&Decoded<'_>],
    at: At<'_>,
) -> Result<Vec<ModelOutcome>, ProjectorError> {
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
        let busy = started.elapsed();
        return Ok(outcomes(chunks, checkpoint, Vec::new(), busy));
    }
    let messages: Vec<&Positioned> = chunks.iter().flat_map(|c| &c.messages).collect();
    let refused = apply_isolated_as(&mut tx, &[(model, checkpoint)], &messages, load).await?;
    let parked: Vec<Parked> = refused
        .iter()
        .map(|(index, refusal)| {
            let positioned = messages[*index];
            let source = source_of(chunks, *index);
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
        chunks = chunks.len(),
        elapsed_ms = busy.as_secs_f64() * 1000.0,
        "read model transaction committed"
    );
    Ok(outcomes(chunks, checkpoint, refused, busy))
}

/// The delivery of message `index` of `chunks`' messages taken one after the other.
fn source_of<'d>(chunks: &'d [&Decoded<'_>], mut index: usize) -> &'d Delivered {
    for chunk in chunks {
        if let Some(&source) = chunk.sources.get(index) {
            return &chunk.chunk[source];
        }
        index -= chunk.sources.len();
    }
    unreachable!("a refused message is one of the chunks' messages")
}

/// Each chunk's outcome of one transaction over `chunks`: the refusals (indexed over all the
/// chunks' messages) given to the chunk they belong to, and the transaction's time shared out
/// by messages.
fn outcomes(
    chunks: &[&Decoded<'_>],
    checkpoint: u64,
    refused: Vec<(usize, Refusal)>,
    busy: std::time::Duration,
) -> Vec<ModelOutcome> {
    let total = chunks
        .iter()
        .map(|c| c.messages.len())
        .sum::<usize>()
        .max(1);
    let mut refused = refused.into_iter().peekable();
    let mut offset = 0;
    chunks
        .iter()
        .map(|chunk| {
            let end = offset + chunk.messages.len();
            let mut own = Vec::new();
            while let Some((index, refusal)) = refused.next_if(|(index, _)| *index < end) {
                own.push((index - offset, refusal));
            }
            let share = chunk.messages.len() as f64 / total as f64;
            let outcome = ModelOutcome {
                checkpoint,
                refused: own,
                busy: busy.mul_f64(if chunks.len() == 1 { 1.0 } else { share }),
            };
            offset = end;
            outcome
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projections::fake_model::Fake;
    use chrono::Utc;
    use shared::envelope::{LogMessage, RecordBatch};
    use std::time::Duration;
    use uuid::Uuid;

    static MODEL: Fake = Fake("players", &[]);

    /// A chunk delivered as `sequences`, of which `unreadable` were not decoded.
    fn chunk(sequences: &[u64], unreadable: &[u64]) -> Decoded<'static> {
        let delivered: Vec<Delivered> = sequences
            .iter()
            .map(|&sequence| Delivered {
                stream_sequence: sequence,
                subject: format!("gs.part.0.x.chat.{sequence}"),
                payload: Vec::new().into(),
            })
            .collect();
        let (mut messages, mut sources) = (Vec::new(), Vec::new());
        for (source, &sequence) in sequences.iter().enumerate() {
            if unreadable.contains(&sequence) {
                continue;
            }
            let message = LogMessage::new(Uuid::nil(), Utc::now(), RecordBatch::Chat(Vec::new()));
            messages.push(Positioned {
                stream_sequence: sequence,
                message,
            });
            sources.push(source);
        }
        Decoded {
            chunk: Cow::Owned(delivered),
            messages,
            sources,
        }
    }

    fn refusal() -> Refusal {
        Refusal {
            model: &MODEL,
            error: sqlx::Error::Protocol("refused".into()),
        }
    }

    #[test]
    fn a_refused_message_of_chunks_applied_together_is_found_in_its_own_chunk() {
        // Sequence 2 was not decoded: chunk A's messages are 1 and 3.
        let (a, b) = (chunk(&[1, 2, 3], &[2]), chunk(&[4, 5], &[]));
        let chunks = [&a, &b];
        let sources: Vec<u64> = (0..4)
            .map(|index| source_of(&chunks, index).stream_sequence)
            .collect();
        assert_eq!(sources, [1, 3, 4, 5]);

        let busy = Duration::from_secs(4);
        let refused = vec![(1, refusal()), (2, refusal()), (3, refusal())];
        let outcomes = outcomes(&chunks, 7, refused, busy);
        let own: Vec<Vec<usize>> = outcomes
            .iter()
            .map(|o| o.refused.iter().map(|(index, _)| *index).collect())
            .collect();
        // Each chunk's refusals by the index of its own messages.
        assert_eq!(own, [vec![1], vec![0, 1]]);
        assert!(outcomes.iter().all(|o| o.checkpoint == 7));
        // The transaction's time shared by messages: two each.
        assert_eq!(outcomes[0].busy(), Duration::from_secs(2));
        assert_eq!(outcomes[1].busy(), Duration::from_secs(2));
    }

    #[test]
    fn one_chunk_gets_the_whole_transaction() {
        let a = chunk(&[1, 2], &[]);
        let outcomes = outcomes(&[&a], 0, vec![(0, refusal())], Duration::from_secs(3));
        assert_eq!(outcomes.len(), 1);
        assert_eq!(outcomes[0].refused.len(), 1);
        assert_eq!(outcomes[0].busy(), Duration::from_secs(3));
    }
}
