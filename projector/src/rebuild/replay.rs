//! The replay's side of a rebuild: applying each partition of the log to the copy, and
//! counting what it applied ([`Tracker`]).

use super::pipeline::READ_AHEAD;
use super::progress::Tracker;
use crate::checkpoint::Partition;
use crate::error::ProjectorError;
use crate::projections::{self, ChunkOutcome, Delivered, ReadModel};
use shared::privacy::Keyring;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::sync::Semaphore;

/// A chunk of one partition as its consumer delivers it.
pub(super) type Chunk = crate::read_ahead::Chunk;

/// What every partition's replay shares: where the copy is, and where each partition of it
/// stands.
pub(super) struct Replay<'a> {
    pub(super) pool: &'a PgPool,
    /// Opens the personal fields of each chunk.
    pub(super) keyring: &'a Keyring,
    pub(super) models: &'a [&'static dyn ReadModel],
    /// The log's subjects (the partition of each message).
    pub(super) subjects: &'a Subjects,
    /// One per model transaction at once, shared by every partition: the whole replay runs
    /// at most `PROJECTOR_APPLY_CONCURRENCY` of them.
    slots: Semaphore,
    /// One per chunk decoded and not yet committed by every model: [`READ_AHEAD`] for each
    /// partition applying at once ([`partitions_at_once`]). Bounds the chunks decoded at once
    /// (a log of 1,024 partitions does not decode 1,024 chunks at once), and the connections
    /// they take beside their models' transactions (the checkpoint floor, parking what no
    /// model can read).
    chunks: Semaphore,
    /// The stream sequence each partition of the copy stands at: its last message applied,
    /// or the stream's end when it holds every message of the partition up to it.
    positions: Vec<AtomicU64>,
    /// Whether each partition's consumer may have delivered every message it has: unknown
    /// (true) until a chunk says the consumer still had messages waiting after it. Only
    /// these partitions are looked up to be covered up to the stream's end.
    drained: Vec<AtomicBool>,
    /// Counts what is applied, and tells it.
    pub(super) tracker: &'a Tracker,
    /// What the folds keep from one chunk to the next rather than read it back from the copy
    /// (only this rebuild writes it), and during the load what they write at its end.
    kept: projections::BulkState,
}

/// Partitions applying a chunk at once: as many as there are transaction slots, so each can
/// keep one busy, and no more (a log of 1,024 partitions does not decode 1,024 chunks at once).
pub(super) fn partitions_at_once(apply_concurrency: usize, partitions: Partition) -> usize {
    apply_concurrency.max(1).min(usize::from(partitions.max(1)))
}

/// Connections of the copy's pool: the live projector's for the same concurrency, and one per
/// partition applying a chunk at once.
pub(super) fn pool_size(apply_concurrency: usize, partitions: Partition) -> u32 {
    let at_once = u32::try_from(partitions_at_once(apply_concurrency, partitions)).unwrap_or(1);
    crate::startup::pool_size(apply_concurrency.max(1)).saturating_add(at_once)
}

impl<'a> Replay<'a> {
    /// A replay of `models` into the copy `pool` from a log of `subjects.partitions()`; the
    /// folds that can leave their writes for the end of the load do so
    /// ([`projections::BulkState::defer_writes`]) until [`write_kept`](Replay::write_kept).
    pub(super) fn new(
        pool: &'a PgPool,
        keyring: &'a Keyring,
        models: &'a [&'static dyn ReadModel],
        subjects: &'a Subjects,
        apply_concurrency: usize,
        kept_players: usize,
        tracker: &'a Tracker,
    ) -> Self {
        Replay {
            pool,
            keyring,
            models,
            subjects,
            slots: Semaphore::new(apply_concurrency.max(1)),
            chunks: Semaphore::new(
                partitions_at_once(apply_concurrency, subjects.partitions()) * READ_AHEAD,
            ),
            positions: (0..subjects.partitions())
                .map(|_| AtomicU64::new(0))
                .collect(),
            drained: (0..subjects.partitions())
                .map(|_| AtomicBool::new(true))
                .collect(),
            tracker,
            kept: {
                let kept = projections::BulkState::with_kept_players(kept_players);
                kept.defer_writes();
                kept
            },
        }
    }

    /// The most players rows, and name spans, kept at once so far.
    pub(super) fn kept_peaks(&self) -> (usize, usize) {
        self.kept.peaks()
    }

    /// Whether `model`'s tables in the copy miss rows its fold keeps to write at the load's
    /// end: not loaded yet, whatever its checkpoints say.
    pub(super) fn defers(&self, model: &str) -> bool {
        self.kept.defers(model)
    }

    /// Writes, in one transaction, what the folds kept to write at the load's end (called
    /// once the load has paused: no chunk applies meanwhile); they write at once from then on.
    pub(super) async fn write_kept(&self) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut tx = self.pool.begin().await?;
        let (rows, spans) = self.kept.write_kept(&mut tx).await?;
        tx.commit().await?;
        self.kept.kept_written();
        tracing::info!(
            players = rows,
            name_spans = spans,
            ms = started.elapsed().as_millis() as u64,
            "rebuild: wrote the rows the load kept to write at its end"
        );
        Ok(())
    }

    /// Where the copy of `partition` stands.
    pub(super) fn position(&self, partition: Partition) -> u64 {
        self.positions
            .get(usize::from(partition))
            .map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// Moves `partition`'s position to `end`: the copy holds every message of the partition
    /// up to it ([`super::partition::cover_idle`]).
    pub(super) fn cover(&self, partition: Partition, end: u64) {
        if let Some(position) = self.positions.get(usize::from(partition)) {
            position.fetch_max(end, Ordering::AcqRel);
        }
    }

    /// Whether `partition`'s consumer may hold nothing more to deliver (see `drained`).
    pub(super) fn drained(&self, partition: Partition) -> bool {
        self.drained
            .get(usize::from(partition))
            .is_some_and(|d| d.load(Ordering::Acquire))
    }

    /// Where every partition of the copy stands, by partition.
    pub(super) fn positions(&self) -> Vec<u64> {
        self.positions
            .iter()
            .map(|p| p.load(Ordering::Acquire))
            .collect()
    }

    /// Whether every partition of the copy holds what the live checkpoints hold (`live`: the
    /// highest live checkpoint of each partition; a partition not in it has none, and one
    /// the log does not have is no partition's to reach).
    pub(super) fn caught_up(&self, live: &[(Partition, u64)]) -> bool {
        live.iter().all(|(partition, at)| {
            self.positions
                .get(usize::from(*partition))
                .is_none_or(|p| p.load(Ordering::Acquire) >= *at)
        })
    }

    /// Applies one chunk of `partition` to the copy, every model of it before the next chunk
    /// (the swap's catch-up); a broken delivery fails the rebuild.
    pub(super) async fn apply(&self, partition: Partition, chunk: Chunk) -> anyhow::Result<()> {
        let received = self.receive(partition, chunk)?;
        let _applying = self.chunk_permit().await?;
        let outcome = self
            .applier(partition)
            .apply_chunk(&received.delivered, self.models)
            .await?;
        self.counted(partition, &outcome, &received);
        Ok(())
    }

    /// `chunk` as delivered, and what it counts for progress; a broken delivery is an error.
    pub(super) fn receive(&self, partition: Partition, chunk: Chunk) -> anyhow::Result<Received> {
        let mut received = Received {
            delivered: Vec::with_capacity(chunk.len()),
            own: 0,
            bytes: 0,
            waiting: 0,
        };
        for message in chunk {
            let message = message.map_err(ProjectorError::event_log)?;
            let info = message.info().map_err(ProjectorError::event_log)?;
            received.waiting = info.pending;
            // This partition's messages (another partition's legacy ones count there), and
            // their bytes as the stream counts them, so the load's share of the stream's
            // bytes tells how far it got.
            if self.subjects.partition_of_subject(&message.subject) == partition {
                received.own += 1;
                received.bytes += stored_size(&message);
            }
            received.delivered.push(Delivered {
                stream_sequence: info.stream_sequence,
                subject: message.subject.to_string(),
                payload: message.payload.clone(),
            });
        }
        Ok(received)
    }

    /// Adds `more` (the chunk after `received` in the partition) to `received`.
    pub(super) fn append(received: &mut Received, more: Received) {
        received.delivered.extend(more.delivered);
        received.own += more.own;
        received.bytes += more.bytes;
        received.waiting = more.waiting;
    }

    /// A permit for one chunk decoded and not yet committed by every model (see `chunks`).
    pub(super) async fn chunk_permit(&self) -> anyhow::Result<tokio::sync::SemaphorePermit<'_>> {
        self.chunks
            .acquire()
            .await
            .map_err(|_| anyhow::anyhow!("the rebuild's chunk permits were closed"))
    }

    /// The slots of the model transactions (every partition's).
    pub(super) fn slots(&self) -> &Semaphore {
        &self.slots
    }

    /// The live projector's path: each model in its own transaction on the copy's pool,
    /// every connection of which puts the copy's schema first on its search_path, with the
    /// checkpoints of `partition` (another partition's legacy messages are left out, and
    /// its checkpoints still move past them). The slots are every partition's.
    pub(super) fn applier(&self, partition: Partition) -> projections::Applier<'_> {
        projections::Applier {
            pool: self.pool,
            keyring: self.keyring,
            concurrency: 1,
            slots: Some(&self.slots),
            partition,
            subjects: self.subjects,
            // The copy is written by this rebuild alone, and thrown away on any failure.
            committed: 0,
            load: projections::Load::Bulk(&self.kept),
        }
    }

    /// Counts a chunk of `partition` that every model committed (`outcome`), and moves the
    /// partition's position past it.
    pub(super) fn counted(
        &self,
        partition: Partition,
        outcome: &ChunkOutcome,
        received: &Received,
    ) {
        let records = outcome.messages_by_kind.values().map(|(_, r)| r).sum();
        if let Some(position) = self.positions.get(usize::from(partition)) {
            position.fetch_max(outcome.last_sequence, Ordering::AcqRel);
        }
        if let Some(drained) = self.drained.get(usize::from(partition)) {
            drained.store(received.waiting == 0, Ordering::Release);
        }
        self.tracker.applied(received.own, records, received.bytes);
    }
}

/// A chunk of one partition as received: its messages, and what it counts for progress.
pub(super) struct Received {
    /// Every message delivered, in log order (taken once the chunk is decoded).
    pub(super) delivered: Vec<Delivered>,
    /// The partition's own messages among them, and their bytes as the stream counts them.
    own: u64,
    pub(super) bytes: u64,
    /// Messages the consumer still had waiting after the last one.
    pub(super) waiting: u64,
}

/// What JetStream's file store counts for `message` in the stream's bytes: its subject,
/// headers and payload (what was delivered, less the reply subject), and a fixed record
/// overhead (22 bytes of header and an 8-byte hash per message).
fn stored_size(message: &async_nats::jetstream::Message) -> u64 {
    let reply = message.reply.as_ref().map_or(0, |r| r.len());
    (message.length.saturating_sub(reply) + 30) as u64
}

#[cfg(test)]
mod tests {
    use super::{partitions_at_once, pool_size};

    #[test]
    fn partitions_apply_at_once_up_to_the_apply_concurrency() {
        assert_eq!(partitions_at_once(4, 8), 4);
        assert_eq!(partitions_at_once(4, 2), 2);
        assert_eq!(partitions_at_once(4, 1), 1);
        assert_eq!(partitions_at_once(0, 0), 1, "zero reads as one");
        // The live projector's, and one per partition applying at once.
        let live = crate::startup::pool_size(4);
        assert_eq!(pool_size(4, 8), live + 4);
        assert_eq!(pool_size(4, 1), live + 1);
    }
}
