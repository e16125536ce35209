//! The replay of one partition into the copy, pipelined: each read model moves on to the
//! partition's next chunk as soon as it has committed the one before, rather than every
//! chunk waiting for the slowest model before the next one starts. The slowest model sets
//! the pace, and the others fill the transaction slots meanwhile, so PostgreSQL keeps every
//! slot busy.
//!
//! What stays as on the live projector's path ([`crate::projections::Applier`]): each chunk is
//! decoded once and what no model can read is parked before any model applies it; each model
//! applies it in its own transaction with its own checkpoint, parking what PostgreSQL refuses
//! for that model only; a model that
//! [depends on](crate::projections::ReadModel::depends_on) others (the erasure
//! scrub) applies a chunk only once they have committed it. A partition's position moves
//! past a chunk once every model has committed it, so it is the lowest model's.
//!
//! Read-ahead is bounded: at most [`READ_AHEAD`] chunks of a partition are decoded and not yet
//! committed by every model. The replay applies bigger chunks than the live projector
//! ([`Chunking::chunk_messages`]): fewer transactions, and the folds that read their state back
//! (players, sessions, active days) read and write each player's row once per chunk. A model
//! behind the others applies the chunks waiting for it in one transaction
//! ([`stages`]: up to [`READ_AHEAD`]), so the slowest one catches up rather than doing that
//! per-chunk work for each.

use super::replay::{Received, Replay};
use super::stages;
use crate::checkpoint::Partition;
use crate::projections::{ModelOutcome, Prepared};
use crate::read_ahead::payload_bytes;
use anyhow::Context;
use futures::{Stream, StreamExt};
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

/// Chunks of one partition decoded and not yet committed by every model, at most.
pub(super) const READ_AHEAD: usize = 3;

/// A partition's backlog is cut in at least this many chunks, when they can be that small
/// (a consumer chunk each at least). The load's progress moves at each chunk every model has
/// committed, and its ETA is told from the models' commits: a backlog of a few chunks lands
/// in a few steps, and its models' pace changes at each (the benchmark's million records in
/// four chunks: the ETA off by 115-382%; in 27, by 28-32%).
pub(super) const MIN_CHUNKS: u64 = 16;

/// How a partition's consumer chunks are joined into the replay's chunks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunking {
    /// Messages per consumer chunk, at most (`PROJECTOR_BATCH_MAX`).
    pub(super) batch_max: usize,
    /// Messages per replay chunk, at most; joined while the log has more (see [`join_wait`]).
    pub(super) chunk_messages: usize,
    /// Payload bytes per replay chunk: it is not joined further once it holds this many
    /// (`PROJECTOR_REBUILD_CHUNK_BYTES`; each consumer chunk stops growing there too).
    pub(super) chunk_bytes: usize,
}

impl Chunking {
    /// The chunking of a partition with `backlog` messages to load: chunks of up to `most`
    /// messages (`PROJECTOR_REBUILD_CHUNK_MESSAGES`), and of a [`MIN_CHUNKS`]th of the backlog
    /// when that is less (never less than a consumer chunk of `batch_max`).
    pub(super) fn for_backlog(batch_max: usize, most: usize, backlog: u64) -> Self {
        let (batch_max, most) = (batch_max.max(1), most.max(1));
        let share = usize::try_from(backlog / MIN_CHUNKS).unwrap_or(usize::MAX);
        Chunking {
            batch_max,
            chunk_messages: share.clamp(batch_max.min(most), most),
            chunk_bytes: usize::MAX,
        }
    }
}

/// How long the replay waits for the consumer's next chunk to join to the one it holds while
/// the consumer's chunks come full but the log says nothing is waiting after them. Long
/// enough that the load's first chunks fill up too: with 20 ms they stayed small while the
/// consumer's fetches got going, and small chunks cost more per record (the benchmark's load:
/// 25.8 s with 20 ms, 21.4 s with 250 ms, one run each).
const JOIN_WAIT: Duration = Duration::from_millis(250);

/// How long it waits for the next chunk when the log has messages waiting after the last one
/// received: they are there, only the consumer's next fetch stands between, so the chunk is
/// filled rather than cut where a fetch paused. Cut chunks came out of every size between
/// one consumer chunk and [`Chunking::chunk_messages`], and a chunk's work has a part that does not
/// shrink with it (each player's row is read and written once per chunk, whether the chunk
/// names it once or fifty times): the load went at an uneven pace, slower while its chunks
/// came short, which its ETA could not foresee.
const WAITING_WAIT: Duration = Duration::from_secs(2);

/// How long to wait for the consumer's next chunk to join to a chunk of `held` messages, or
/// `None` when the chunk is done: it has no room for a consumer chunk more, or the consumer's
/// last chunk came short (`full` false) with nothing waiting after it in the log (`waiting`:
/// its count after the last message received).
fn join_wait(held: usize, chunking: Chunking, full: bool, waiting: u64) -> Option<Duration> {
    if held + chunking.batch_max > chunking.chunk_messages {
        None
    } else if waiting > 0 {
        Some(WAITING_WAIT)
    } else if full {
        Some(JOIN_WAIT)
    } else {
        None
    }
}

/// A chunk on its way through the models.
struct InFlight<'r> {
    received: Received,
    prepared: Prepared<'static>,
    /// Each model's outcome, in the order of the replay's models, once it committed.
    outcomes: Mutex<Vec<Option<ModelOutcome>>>,
    /// Models that have not committed it yet.
    left: AtomicUsize,
    /// Released once every model has committed it: the partition's and the replay's.
    _permits: (SemaphorePermit<'r>, SemaphorePermit<'r>),
}

/// Applies `partition`'s chunks from `chunks` (consumer chunks, joined as `chunking` says) to
/// the copy, pipelined (see the module docs), until `pause` (after the chunks read by then are
/// committed by every model) or a failure.
pub(super) async fn fill<S>(
    replay: &Replay<'_>,
    partition: Partition,
    chunks: &mut S,
    chunking: Chunking,
    pause: &CancellationToken,
) -> anyhow::Result<()>
where
    S: Stream<Item = super::replay::Chunk> + Unpin,
{
    let models = replay.models;
    // Before the channel, so it outlives the permits in flight.
    let ahead = Semaphore::new(READ_AHEAD);
    let (sender, chunks_read) = mpsc::unbounded_channel();
    let read = async {
        let sender = sender;
        loop {
            // The partition's permit before reading, the replay's after: a partition waiting
            // for messages holds none of the permits the others share.
            let own = ahead.acquire().await.context("the read-ahead was closed")?;
            let Some(mut received) = read_chunk(replay, partition, chunks, chunking, pause).await?
            else {
                break;
            };
            let permits = (own, replay.chunk_permit().await?);
            let delivered = Cow::Owned(std::mem::take(&mut received.delivered));
            let Some(prepared) = replay.applier(partition).prepare(delivered, models).await? else {
                continue;
            };
            // Forgotten before any later chunk is opened: those chunks are read ahead of
            // this one's commits (the copy shows erased what the live tables lost).
            prepared.forget_erased(replay.keyring);
            let in_flight = InFlight {
                received,
                prepared,
                outcomes: Mutex::new(models.iter().map(|_| None).collect()),
                left: AtomicUsize::new(models.len()),
                _permits: permits,
            };
            // Closed only when the models failed, and their failure ends the fill.
            let _ = sender.send(Arc::new(in_flight));
        }
        anyhow::Ok(())
    };
    let applier = replay.applier(partition);
    let apply = stages::run(
        models,
        replay.slots(),
        READ_AHEAD,
        chunks_read,
        |model, in_flight: Vec<Arc<InFlight<'_>>>| async move {
            let chunks: Vec<&Prepared<'_>> = in_flight.iter().map(|c| &c.prepared).collect();
            let outcomes = applier.apply_model_to(model, &chunks).await?;
            // One transaction, however many chunks: its bytes and its whole time, for the ETA.
            let bytes = in_flight.iter().map(|c| c.received.bytes).sum();
            let busy = outcomes.iter().map(ModelOutcome::busy).sum();
            let index = models.iter().position(|m| m.name() == model.name());
            replay.tracker.model_committed(
                (index.unwrap_or(0), models.len()),
                model.name(),
                (chunks.len(), bytes),
                busy,
            );
            Ok(outcomes)
        },
        |model, in_flight, outcome| finish_model(replay, partition, in_flight, model, outcome),
    );
    tokio::try_join!(read, apply)?;
    Ok(())
}

/// Records `model`'s outcome of `in_flight`; the last model to commit it counts the chunk.
fn finish_model(
    replay: &Replay<'_>,
    partition: Partition,
    in_flight: &InFlight<'_>,
    model: usize,
    outcome: ModelOutcome,
) {
    let mut outcomes = in_flight
        .outcomes
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(slot) = outcomes.get_mut(model) {
        *slot = Some(outcome);
    }
    if in_flight.left.fetch_sub(1, Ordering::AcqRel) == 1 {
        let outcomes: Vec<ModelOutcome> = outcomes.drain(..).flatten().collect();
        let outcome = in_flight.prepared.tally(&outcomes);
        replay.counted(partition, &outcome, &in_flight.received);
    }
}

/// The partition's next chunk: the consumer's chunks joined up to
/// [`Chunking::chunk_messages`], as many as it has ready; `None` once `pause` is cancelled.
async fn read_chunk<S>(
    replay: &Replay<'_>,
    partition: Partition,
    chunks: &mut S,
    chunking: Chunking,
    pause: &CancellationToken,
) -> anyhow::Result<Option<Received>>
where
    S: Stream<Item = super::replay::Chunk> + Unpin,
{
    // The select only picks what happens next; the work happens outside it.
    let chunk = tokio::select! {
        biased;
        () = pause.cancelled() => return Ok(None),
        chunk = chunks.next() => chunk.context("the event log's consumer ended")?,
    };
    let full_chunk = |chunk: &super::replay::Chunk| {
        chunk.len() >= chunking.batch_max || payload_bytes(chunk) >= chunking.chunk_bytes
    };
    let mut full = full_chunk(&chunk);
    let mut bytes = payload_bytes(&chunk);
    let mut received = replay.receive(partition, chunk)?;
    // A short chunk with nothing waiting after it is all the consumer had; so is nothing
    // within the wait.
    while bytes < chunking.chunk_bytes
        && let Some(wait) = join_wait(received.delivered.len(), chunking, full, received.waiting)
    {
        // Ends at the pause too: what is held is applied before the replay pauses.
        let chunk = tokio::select! {
            biased;
            () = pause.cancelled() => break,
            chunk = tokio::time::timeout(wait, chunks.next()) => match chunk {
                Ok(chunk) => chunk,
                Err(_) => break,
            },
        };
        let chunk = chunk.context("the event log's consumer ended")?;
        full = full_chunk(&chunk);
        bytes += payload_bytes(&chunk);
        Replay::append(&mut received, replay.receive(partition, chunk)?);
    }
    Ok(Some(received))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Consumer chunks of 500 joined up to 4,000 messages (the defaults).
    const DEFAULTS: Chunking = Chunking {
        batch_max: 500,
        chunk_messages: 4_000,
        chunk_bytes: usize::MAX,
    };

    #[test]
    fn a_small_backlog_is_cut_in_smaller_chunks_a_large_one_in_the_largest() {
        let chunking = |backlog| Chunking::for_backlog(500, 4_000, backlog).chunk_messages;
        assert_eq!(chunking(10_000_000), 4_000);
        assert_eq!(chunking(4_000 * MIN_CHUNKS), 4_000);
        assert_eq!(chunking(1_000 * MIN_CHUNKS + 7), 1_000);
        // Never below a consumer chunk, nor above the most.
        assert_eq!(chunking(100), 500);
        assert_eq!(chunking(0), 500);
        assert_eq!(Chunking::for_backlog(500, 100, 0).chunk_messages, 100);
    }

    #[test]
    fn a_chunk_is_joined_while_the_log_has_messages_waiting_even_after_a_short_one() {
        assert_eq!(join_wait(500, DEFAULTS, false, 1), Some(WAITING_WAIT));
        assert_eq!(join_wait(737, DEFAULTS, true, 9_000), Some(WAITING_WAIT));
    }

    #[test]
    fn a_full_consumer_chunk_with_nothing_waiting_gets_the_short_wait() {
        assert_eq!(join_wait(500, DEFAULTS, true, 0), Some(JOIN_WAIT));
    }

    #[test]
    fn a_chunk_ends_when_the_consumer_has_nothing_more_or_it_has_no_room() {
        assert_eq!(join_wait(120, DEFAULTS, false, 0), None);
        assert_eq!(join_wait(4_000 - 499, DEFAULTS, true, 100), None);
        assert_eq!(
            join_wait(4_000 - 500, DEFAULTS, true, 100),
            Some(WAITING_WAIT)
        );
        // Joined chunks smaller than a consumer chunk: each consumer chunk on its own.
        let small = Chunking {
            batch_max: 500,
            chunk_messages: 100,
            chunk_bytes: usize::MAX,
        };
        assert_eq!(join_wait(500, small, true, 100), None);
    }
}
