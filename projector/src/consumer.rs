//! The consumer loop: read the log from the checkpoint with an ephemeral pull consumer whose
//! read-ahead is capped in bytes ([`crate::read_ahead`]), apply it chunk by chunk, and on any
//! outage start again from the checkpoint. One loop for every consumer of the log
//! ([`ChunkSink`]): the projector, and the notifier's evaluator.
//!
//! Nothing is acknowledged to JetStream: the consumer is ephemeral, and the checkpoints
//! committed with each chunk's writes are the only record of progress. The projector resumes
//! after its lowest checkpoint: a read model already past a message skips it.

use crate::checkpoint::{self, Partition};
use crate::error::ProjectorError;
use crate::lag;
use crate::partitions;
use crate::projections::{self, ChunkOutcome, Delivered};
use crate::read_ahead::{self, Cut, Messages, ReadAhead};
use crate::startup::Projector;
use async_nats::jetstream;
use async_nats::jetstream::consumer::DeliverPolicy;
use futures::StreamExt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// First wait after a failure; doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Where a consumer of the log reads: the stream, the subjects, how chunks are cut, and the
/// NATS reconnections (a reconnect sends it back to its checkpoint).
#[derive(Debug, Clone)]
pub(crate) struct LogReader {
    pub(crate) stream: jetstream::stream::Stream,
    /// The subjects it reads (a partition's, or every event's: [`shared::subjects::Subjects`]).
    pub(crate) filter_subjects: Vec<String>,
    /// Messages in a chunk, at most.
    pub(crate) batch_max: usize,
    /// A chunk stops growing once it holds this many payload bytes, and one over it (a
    /// message bigger than this) is applied in parts ([`parts_within`]).
    pub(crate) chunk_max_bytes: usize,
    /// How far it reads ahead of what it applies ([`crate::read_ahead`]), fitted to the
    /// server's largest message.
    pub(crate) read_ahead: ReadAhead,
    pub(crate) batch_wait: Duration,
    pub(crate) reconnects: watch::Receiver<u64>,
}

/// What a consumer does with the log: where it resumes, and applying one chunk together with
/// its own checkpoint (the projector's read models, the notifier's evaluator).
pub(crate) trait ChunkSink: Sync {
    /// The counter of outages that sent it back to its checkpoint.
    const RETRIES_METRIC: &'static str;

    /// The last sequence its checkpoint covers: consumption resumes right after it.
    fn resume_after(&self) -> impl Future<Output = Result<u64, ProjectorError>> + Send;

    /// Applies `delivered` (in log order), moving its checkpoints in the transactions of the
    /// writes they cover;
    /// `pending` is how many log messages follow the chunk, when known.
    fn apply(
        &self,
        delivered: &[Delivered],
        pending: Option<u64>,
    ) -> impl Future<Output = Result<(), ProjectorError>> + Send;
}

impl Projector {
    /// Consumes the event log into the read models until `shutdown` fires: the partitions this
    /// process claims ([`crate::partitions`]), each with its own consumer.
    pub async fn run(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        // Keys destroyed by another process (an erasure, the retention sweep) leave this
        // process's cache at once, so nothing erased is opened from a stale key.
        let keys_watched = shutdown.child_token();
        let _watch = self.keyring.spawn_watch(keys_watched.clone());
        let _stop_keys = keys_watched.drop_guard();
        let this = Arc::new(self);
        let stop_watching = shutdown.child_token();
        let watching = lag::watch(
            &this.reader.stream,
            &this.subjects,
            &this.progress,
            &this.pool,
            &stop_watching,
        );
        let claiming = async {
            partitions::claim(this.clone(), &shutdown).await;
            stop_watching.cancel();
        };
        tokio::join!(claiming, watching);
        Ok(())
    }
}

/// Consumes until `shutdown` fires. Outages of NATS or PostgreSQL are retried forever with
/// capped exponential backoff, resuming each time from the sink's checkpoint in PostgreSQL.
pub(crate) async fn consume<S: ChunkSink>(
    reader: &LogReader,
    sink: &S,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    let mut backoff = MIN_BACKOFF;
    loop {
        match consume_from_checkpoint(reader, sink, shutdown, &mut backoff).await {
            // A pass only ends without an error when shutdown fires.
            Ok(()) => return Ok(()),
            Err(error) => {
                metrics::counter!(S::RETRIES_METRIC).increment(1);
                tracing::warn!(
                    error = %error,
                    retry_in_ms = backoff.as_millis() as u64,
                    "consumption interrupted; resuming from the checkpoint"
                );
                tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// One pass: read the checkpoint, open a consumer right after it, apply chunks until shutdown
/// (`Ok`) or the first failure. `backoff` is reset whenever a chunk commits.
async fn consume_from_checkpoint<S: ChunkSink>(
    reader: &LogReader,
    sink: &S,
    shutdown: &CancellationToken,
    backoff: &mut Duration,
) -> Result<(), ProjectorError> {
    let mut reconnects = reader.reconnects.clone();
    reconnects.borrow_and_update();
    let messages = tokio::select! {
        biased;
        () = shutdown.cancelled() => return Ok(()),
        opened = open_from_checkpoint(reader, sink) => opened?,
    };
    let chunks = read_ahead::chunks(
        messages,
        Cut {
            messages: reader.batch_max,
            bytes: reader.chunk_max_bytes,
            wait: reader.batch_wait,
        },
    );
    tokio::pin!(chunks);

    loop {
        let chunk = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            // After a reconnect the ephemeral consumer may be gone with a restarted server;
            // async-nats would notice only after missed heartbeats and retries (~15 s).
            Ok(()) = reconnects.changed() => {
                return Err(ProjectorError::event_log("reconnected to NATS"));
            }
            chunk = chunks.next() => chunk,
        };
        let Some(chunk) = chunk else {
            return Err(ProjectorError::event_log("the event log's consumer ended"));
        };
        // Apply what arrived in order before a failure, then start over from there.
        let mut delivered = Vec::with_capacity(chunk.len());
        let mut pending = None;
        let mut failure = None;
        for item in chunk {
            match item {
                Ok(message) => match message.info() {
                    Ok(info) => {
                        pending = Some(info.pending);
                        delivered.push(Delivered {
                            stream_sequence: info.stream_sequence,
                            subject: message.subject.to_string(),
                            payload: message.payload.clone(),
                        });
                    }
                    Err(error) => {
                        failure = Some(ProjectorError::event_log(error));
                        break;
                    }
                },
                Err(error) => {
                    failure = Some(ProjectorError::event_log(error));
                    break;
                }
            }
        }
        let mut rest = delivered.as_slice();
        while !rest.is_empty() {
            let (part, after) = rest.split_at(parts_within(rest, reader.chunk_max_bytes));
            // What follows this part: the rest of the chunk, then what the consumer reported.
            let pending = pending.map(|p| p + after.len() as u64);
            sink.apply(part, pending).await?;
            *backoff = MIN_BACKOFF;
            rest = after;
        }
        if let Some(error) = failure {
            return Err(error);
        }
    }
}

/// How many of `delivered`'s first messages fit in `max_bytes` of payload (at least one).
fn parts_within(delivered: &[Delivered], max_bytes: usize) -> usize {
    let mut bytes = 0usize;
    let fitting = delivered
        .iter()
        .take_while(|d| {
            bytes = bytes.saturating_add(d.payload.len());
            bytes <= max_bytes
        })
        .count();
    fitting.max(1).min(delivered.len())
}

/// Reads the sink's checkpoint and opens a consumer on the message right after it.
async fn open_from_checkpoint<S: ChunkSink>(
    reader: &LogReader,
    sink: &S,
) -> Result<Messages, ProjectorError> {
    let resume_after = sink.resume_after().await?;
    let deliver_policy = match resume_after {
        0 => DeliverPolicy::All,
        last => DeliverPolicy::ByStartSequence {
            start_sequence: last + 1,
        },
    };
    let (messages, _) = read_ahead::open(
        &reader.stream,
        reader.filter_subjects.clone(),
        deliver_policy,
        reader.read_ahead,
    )
    .await?;
    tracing::info!(resume_after, "consuming the event log");
    Ok(messages)
}

/// The projector's read models, fed one partition of the log.
pub(crate) struct PartitionSink<'a> {
    pub(crate) projector: &'a Projector,
    pub(crate) partition: Partition,
    /// Where every model's checkpoint in the partition stood after the last commit this
    /// consumer saw (or when it resumed): [`projections::Applier::committed`].
    pub(crate) committed: AtomicU64,
}

impl ChunkSink for PartitionSink<'_> {
    const RETRIES_METRIC: &'static str = "projector_retries_total";

    async fn resume_after(&self) -> Result<u64, ProjectorError> {
        let (pool, partition) = (&self.projector.pool, self.partition);
        let names = projections::checkpoint_names();
        checkpoint::ensure(pool, &names, self.projector.subjects.partitions()).await?;
        let resume_after = checkpoint::resume_after(pool, &names, partition).await?;
        self.committed.store(resume_after, Ordering::Relaxed);
        Ok(resume_after)
    }

    /// Applies one chunk, each read model in its own transaction, and records what it did.
    async fn apply(
        &self,
        delivered: &[Delivered],
        pending: Option<u64>,
    ) -> Result<(), ProjectorError> {
        let (first, last) = match (delivered.first(), delivered.last()) {
            (Some(first), Some(last)) => (first.stream_sequence, last.stream_sequence),
            _ => return Ok(()),
        };
        let span = tracing::debug_span!(
            "chunk",
            partition = self.partition,
            first_sequence = first,
            last_sequence = last,
            messages = delivered.len()
        );
        let started = Instant::now();
        let projector = self.projector;
        let applier = projections::Applier {
            pool: &projector.pool,
            keyring: &projector.keyring,
            concurrency: projector.apply_concurrency,
            slots: Some(&projector.slots),
            partition: self.partition,
            subjects: &projector.subjects,
            committed: self.committed.load(Ordering::Relaxed),
            load: projections::Load::Statements,
        };
        let outcome = applier
            .apply_chunk(delivered, projections::READ_MODELS)
            .instrument(span)
            .await?;
        self.committed
            .fetch_max(outcome.last_sequence, Ordering::Relaxed);
        metrics::histogram!("projector_batch_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        record(&outcome);
        projector
            .progress
            .committed(self.partition, outcome.last_sequence, pending);
        if !outcome.parked.is_empty() {
            // The chunk is committed; a failed count only leaves the gauge behind until the
            // next refresh.
            if let Err(error) = crate::parked::refresh_gauge(&projector.pool).await {
                tracing::debug!(%error, "cannot count the parked messages");
            }
        }
        Ok(())
    }
}

fn record(outcome: &ChunkOutcome) {
    for (kind, (messages, records)) in &outcome.messages_by_kind {
        metrics::counter!("projector_messages_applied_total", "kind" => *kind).increment(*messages);
        metrics::counter!("projector_records_applied_total", "kind" => *kind).increment(*records);
    }
    for reason in &outcome.parked {
        metrics::counter!("projector_parked_total", "reason" => reason.clone()).increment(1);
    }
    if outcome.skipped > 0 {
        tracing::debug!(
            skipped = outcome.skipped,
            "skipped messages already applied"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(lengths: &[usize]) -> Vec<Delivered> {
        lengths
            .iter()
            .enumerate()
            .map(|(i, len)| Delivered {
                stream_sequence: i as u64 + 1,
                subject: "gs.part.0.x.chat".into(),
                payload: vec![0u8; *len].into(),
            })
            .collect()
    }

    #[test]
    fn a_chunk_is_cut_at_its_byte_budget_with_at_least_one_message() {
        assert_eq!(parts_within(&sized(&[400, 400, 400]), 1_000), 2);
        assert_eq!(parts_within(&sized(&[400, 600, 1]), 1_000), 2);
        assert_eq!(
            parts_within(&sized(&[5_000, 10]), 1_000),
            1,
            "one oversized message"
        );
        assert_eq!(parts_within(&sized(&[10, 10]), 1_000), 2);
    }
}
