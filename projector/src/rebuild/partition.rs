//! One partition of the log under replay: its own consumer, read from the start.
//!
//! A partition's position in the copy moves with its own messages, and also to the stream's
//! end once it holds every message of its own ([`cover_idle`]): the live projector moves an
//! idle partition's checkpoints there too, past any message the partition's reader is ever
//! delivered, and the copy must be able to reach them.

use super::pipeline;
use super::replay::{Chunk, Replay};
use crate::checkpoint::Partition;
use crate::config::Config;
use crate::error::ProjectorError;
use crate::read_ahead::{self, Cut, ReadAhead};
use anyhow::Context;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream as EventStream};
use futures::{Stream, StreamExt};
use shared::subjects::Subjects;
use std::pin::Pin;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A partition's chunks, in log order.
type Chunks = Pin<Box<dyn Stream<Item = Chunk> + Send>>;

/// How often the swap's catch-up looks whether an idle partition is covered.
const IDLE_CHECK: Duration = Duration::from_millis(200);

/// The reader of one partition: its subjects and the legacy form, from the first message.
pub(super) struct PartitionReplay {
    pub(super) partition: Partition,
    chunks: Chunks,
    /// How the consumer's chunks are joined.
    chunking: pipeline::Chunking,
}

impl PartitionReplay {
    /// Opens a consumer of `partition` ([`Subjects::partition_events`]) from the
    /// stream's first message, chunked as the live projector chunks, and joined for the
    /// partition's backlog ([`pipeline::Chunking::for_backlog`]).
    pub(super) async fn open(
        stream: &EventStream,
        subjects: &Subjects,
        partition: Partition,
        config: &Config,
        read_ahead: ReadAhead,
    ) -> anyhow::Result<Self> {
        // `backlog`: the partition's messages when the load starts.
        let (messages, backlog) = read_ahead::open(
            stream,
            subjects.partition_events(partition),
            DeliverPolicy::All,
            read_ahead,
        )
        .await?;
        let chunks = read_ahead::chunks(
            messages,
            Cut {
                messages: config.batch_max.max(1),
                bytes: config.rebuild_chunk_bytes,
                wait: config.batch_wait,
            },
        );
        Ok(PartitionReplay {
            partition,
            chunks: Box::pin(chunks),
            chunking: pipeline::Chunking {
                chunk_bytes: config.rebuild_chunk_bytes,
                ..pipeline::Chunking::for_backlog(
                    config.batch_max,
                    config.rebuild_chunk_messages,
                    backlog,
                )
            },
        })
    }

    /// Applies this partition's chunks to the copy, pipelined ([`pipeline`]), until `pause`
    /// (after the chunks read by then) or a failure.
    pub(super) async fn fill(
        &mut self,
        replay: &Replay<'_>,
        pause: &CancellationToken,
    ) -> anyhow::Result<()> {
        let (partition, chunking) = (self.partition, self.chunking);
        pipeline::fill(replay, partition, &mut self.chunks, chunking, pause).await
    }

    /// Applies this partition's chunks until the copy holds `target` (or holds every message
    /// of the partition up to it: [`cover_idle`]), failing at `deadline`.
    pub(super) async fn catch_up(
        &mut self,
        replay: &Replay<'_>,
        stream: &EventStream,
        target: u64,
        deadline: tokio::time::Instant,
    ) -> anyhow::Result<()> {
        while replay.position(self.partition) < target {
            cover_idle(replay, stream, self.partition, stream_end(stream).await?).await?;
            if replay.position(self.partition) >= target {
                break;
            }
            let check_at = deadline.min(tokio::time::Instant::now() + IDLE_CHECK);
            let Ok(chunk) = tokio::time::timeout_at(check_at, self.chunks.next()).await else {
                anyhow::ensure!(
                    tokio::time::Instant::now() < deadline,
                    "the swap could not catch up with the live projector in time (partition {})",
                    self.partition
                );
                continue;
            };
            let chunk = chunk.context("the event log's consumer ended")?;
            replay.apply(self.partition, chunk).await?;
        }
        Ok(())
    }
}

/// The stream's last sequence now.
pub(super) async fn stream_end(stream: &EventStream) -> anyhow::Result<u64> {
    let info = stream
        .clone()
        .get_info()
        .await
        .map_err(ProjectorError::event_log)?;
    Ok(info.state.last_sequence)
}

/// Moves `partition`'s position in the copy to `end` (the stream's last sequence, read before
/// calling) when the copy holds the partition's last message: every message stored by `end`
/// was stored before that message was looked up, so none of the partition lies between them.
pub(super) async fn cover_idle(
    replay: &Replay<'_>,
    stream: &EventStream,
    partition: Partition,
    end: u64,
) -> anyhow::Result<()> {
    if replay.position(partition) >= end {
        return Ok(());
    }
    let mut last = 0;
    for filter in replay.subjects.partition_events(partition) {
        let found = match stream.get_last_raw_message_by_subject(&filter).await {
            Ok(message) => message.sequence,
            Err(error) if error.kind() == LastRawMessageErrorKind::NoMessageFound => 0,
            Err(error) => return Err(ProjectorError::event_log(error).into()),
        };
        last = last.max(found);
    }
    if replay.position(partition) >= last {
        replay.cover(partition, end);
    }
    Ok(())
}
