//! Reading the event log with a bounded read-ahead, and cutting what arrives into chunks
//! bounded in messages and in bytes.
//!
//! A consumer of the log asks JetStream for messages ahead of those it applies. Counted in
//! messages alone, that read-ahead follows the size of the log's messages, and ingest merges
//! concurrent requests into messages of up to a MiB: 750 of them held a few hundred MiB. Here
//! each pull asks for at most [`ReadAhead::messages`] messages and [`ReadAhead::bytes`] bytes,
//! and the next pull goes out once half of it has arrived, so at most one and a half pulls'
//! worth is on its way or waiting at any time ([`ReadAhead::most_bytes`]).
//!
//! The consumer is the one an ordered consumer makes on the server (ephemeral, in memory, no
//! acknowledgements, one replica), read with byte-capped pulls (async-nats's ordered consumer
//! pulls by message count only). What the ordered consumer does on a gap or a missed heartbeat,
//! recreate itself, the readers here leave to their callers: a gap in the consumer's sequence
//! (a message the server sent and the client lost) ends the stream with an error, and every
//! reader of the log starts again from its checkpoint on any error.

use crate::error::ProjectorError;
use async_nats::jetstream::consumer::pull::{self, MessagesErrorKind, OrderedConfig};
use async_nats::jetstream::consumer::{DeliverPolicy, PullConsumer};
use async_nats::jetstream::{self, stream::Stream as EventStream};
use futures::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

/// Caps the pull expiry, and with it the idle heartbeat (half of it), so a restarted
/// nats-server is noticed within seconds rather than the default 30.
pub(crate) const PULL_EXPIRES: Duration = Duration::from_secs(5);

/// Bytes per pull unless configured otherwise (`PROJECTOR_READ_AHEAD_BYTES`).
pub(crate) const DEFAULT_BYTES: usize = 4 << 20;

/// What a pull may bring beyond the limit for its own framing: the subject, the headers and
/// the size the server counts for each message.
const PULL_OVERHEAD: usize = 4 << 10;

/// One message as read, or why reading stopped.
pub type Read = Result<jetstream::Message, ReadError>;

/// The messages of one consumer, in log order.
pub type Messages = Pin<Box<dyn Stream<Item = Read> + Send>>;

/// Why a reader of the log stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The pull failed (a missed heartbeat, the consumer gone, the connection lost).
    #[error("reading the event log: {0}")]
    Pull(String),
    /// The server sent a message the client did not get.
    #[error("the event log's consumer skipped from {after} to {got}")]
    Gap { after: u64, got: u64 },
}

/// How far a reader of the log reads ahead of what it applies: each pull asks for at most
/// `messages` messages and `bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadAhead {
    /// `PROJECTOR_BATCH_MAX`: messages per pull, at most.
    pub messages: usize,
    /// `PROJECTOR_READ_AHEAD_BYTES`: bytes per pull, at most (raised to the server's largest
    /// message when that is bigger, or the pull could never bring it).
    pub bytes: usize,
}

impl ReadAhead {
    /// The most bytes of log messages on their way or waiting to be read, per reader.
    pub fn most_bytes(&self) -> usize {
        self.bytes.saturating_add(self.bytes / 2)
    }

    /// This read-ahead for a server whose messages are at most `max_payload` bytes.
    pub fn fitting(self, max_payload: usize) -> ReadAhead {
        ReadAhead {
            messages: self.messages.max(1),
            bytes: self.bytes.max(max_payload.saturating_add(PULL_OVERHEAD)),
        }
    }
}

/// Opens a consumer of `filter_subjects` of `stream` from `deliver_policy`, reading at most
/// `read_ahead` ahead (already [fitting](ReadAhead::fitting) the server); returns its
/// messages and how many were waiting when it opened.
pub async fn open(
    stream: &EventStream,
    filter_subjects: Vec<String>,
    deliver_policy: DeliverPolicy,
    read_ahead: ReadAhead,
) -> Result<(Messages, u64), ProjectorError> {
    let config: pull::Config = OrderedConfig {
        filter_subjects,
        deliver_policy,
        max_expires: PULL_EXPIRES,
        ..Default::default()
    }
    .into();
    let consumer: PullConsumer = stream
        .create_consumer(config)
        .await
        .map_err(ProjectorError::event_log)?;
    let waiting = consumer.cached_info().num_pending;
    let messages = consumer
        .stream()
        .max_messages_per_batch(read_ahead.messages)
        .max_bytes_per_batch(read_ahead.bytes)
        .expires(PULL_EXPIRES)
        .heartbeat(PULL_EXPIRES / 2)
        .messages()
        .await
        .map_err(ProjectorError::event_log)?;
    let mut last = 0u64;
    let checked = messages.map(move |item| in_sequence(item, &mut last));
    Ok((Box::pin(until_error(checked)), waiting))
}

/// `message` if it follows the consumer's message `last` (then its sequence), else why not.
fn in_sequence(item: Result<jetstream::Message, pull::MessagesError>, last: &mut u64) -> Read {
    let message = item.map_err(|error| match error.kind() {
        MessagesErrorKind::MissingHeartbeat => {
            ReadError::Pull("missed heartbeats from the server".into())
        }
        _ => ReadError::Pull(error.to_string()),
    })?;
    let got = message
        .info()
        .map_err(|error| ReadError::Pull(error.to_string()))?
        .consumer_sequence;
    if got != *last + 1 {
        return Err(ReadError::Gap { after: *last, got });
    }
    *last = got;
    Ok(message)
}

/// The items of `reads` up to and including the first error.
fn until_error<S: Stream<Item = Read> + Send + 'static>(reads: S) -> impl Stream<Item = Read> {
    futures::stream::unfold((Box::pin(reads), false), |(mut reads, failed)| async move {
        if failed {
            return None;
        }
        let read = reads.next().await?;
        let failed = read.is_err();
        Some((read, (reads, failed)))
    })
}

/// How a reader cuts the messages it reads into chunks: at most `messages` messages, and no
/// more once they hold `bytes` payload bytes (so at most `bytes` plus one message), waiting at
/// most `wait` after the first for more.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut {
    pub(crate) messages: usize,
    pub(crate) bytes: usize,
    pub(crate) wait: Duration,
}

/// A chunk: messages in log order, the last one possibly the error that stopped the reader.
pub(crate) type Chunk = Vec<Read>;

/// The payload bytes of a chunk's messages.
pub(crate) fn payload_bytes(chunk: &[Read]) -> usize {
    chunk
        .iter()
        .map(|read| read.as_ref().map_or(0, |m| m.payload.len()))
        .sum()
}

/// `messages` cut into chunks (see [`Cut`]); a chunk ends at an error, and the stream ends
/// after it.
pub(crate) fn chunks(messages: Messages, cut: Cut) -> impl Stream<Item = Chunk> + Send {
    futures::stream::unfold(messages, move |mut messages| async move {
        let chunk = next_chunk(&mut messages, cut).await?;
        Some((chunk, messages))
    })
}

async fn next_chunk(messages: &mut Messages, cut: Cut) -> Option<Chunk> {
    let first = messages.next().await?;
    let deadline = tokio::time::Instant::now() + cut.wait;
    let mut bytes = first.as_ref().map_or(0, |m| m.payload.len());
    let mut failed = first.is_err();
    let mut chunk = vec![first];
    while !failed && chunk.len() < cut.messages.max(1) && bytes < cut.bytes {
        let Ok(Some(read)) = tokio::time::timeout_at(deadline, messages.next()).await else {
            break;
        };
        bytes += read.as_ref().map_or(0, |m| m.payload.len());
        failed = read.is_err();
        chunk.push(read);
    }
    Some(chunk)
}
