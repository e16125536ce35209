//! The physical limits, measured in the same run: pipelined JetStream publishes with message
//! ids on a stream configured like ours, and UNNEST batch inserts into the real read-model
//! tables of a scratch database, with no service logic around either.

use crate::stats::Latencies;
use async_nats::jetstream::{self, message::PublishMessage};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use projector::projections::{Positioned, chat, timeline};
use shared::event_log::EventLogConfig;
use sqlx::PgConnection;
use std::time::{Duration, Instant};

/// Publishes in flight at most (the pipelining window).
const WINDOW: usize = 1024;

/// A stream configured exactly like the event log (file storage, no limits, discard new,
/// same duplicate window), under its own name and subjects.
pub(crate) async fn raw_stream(
    js: &jetstream::Context,
    name: &str,
    prefix: &str,
) -> anyhow::Result<EventLogConfig> {
    let config = EventLogConfig {
        stream: name.into(),
        subject_prefix: prefix.into(),
        key_bucket: format!("{name}_KEYS"),
        rate_bucket: format!("{name}_RATES"),
        privacy_bucket: format!("{name}_PRIVACY"),
        ..EventLogConfig::default()
    };
    js.get_or_create_stream(config.stream_config()).await?;
    Ok(config)
}

/// One log message ready to publish.
pub(crate) struct Outgoing {
    /// Its subject.
    pub(crate) subject: String,
    /// Its `Nats-Msg-Id`.
    pub(crate) message_id: String,
    /// Its bytes.
    pub(crate) payload: Vec<u8>,
}

impl Outgoing {
    /// `message` on its subject under `subjects`, with a fresh message id.
    pub(crate) fn of(
        subjects: &shared::subjects::Subjects,
        message: &shared::envelope::LogMessage,
    ) -> Outgoing {
        Outgoing {
            subject: crate::projection::subject_of(subjects, message),
            message_id: uuid::Uuid::new_v4().simple().to_string(),
            payload: message.encode(),
        }
    }
}

/// Publishes `messages` pipelined (up to [`WINDOW`] awaiting acks); returns the per-message
/// send-to-ack latencies, the elapsed time and the failures.
pub(crate) async fn publish_pipelined(
    js: &jetstream::Context,
    stream: &str,
    messages: impl IntoIterator<Item = Outgoing>,
) -> anyhow::Result<(Latencies, Duration, u64)> {
    let mut latencies = Latencies::default();
    let mut errors = 0;
    let mut inflight = FuturesUnordered::new();
    let started = Instant::now();
    for message in messages {
        while inflight.len() >= WINDOW {
            if let Some(result) = inflight.next().await {
                record(result, &mut latencies, &mut errors);
            }
        }
        let publish = PublishMessage::build()
            .payload(message.payload.into())
            .expected_stream(stream)
            .message_id(message.message_id);
        let sent = Instant::now();
        let ack = js.send_publish(message.subject, publish).await?;
        inflight.push(async move { ack.await.map(|_| sent.elapsed()) });
    }
    while let Some(result) = inflight.next().await {
        record(result, &mut latencies, &mut errors);
    }
    Ok((latencies, started.elapsed(), errors))
}

/// Rounds of [`publish_backlog`]: a message whose ack did not come is published again.
const BACKLOG_ROUNDS: usize = 5;

/// Loads a backlog: publishes `messages` pipelined like [`publish_pipelined`], then publishes
/// again, with the same message id (the stream stores a message id once), every message whose
/// ack did not come (an ack times out on a loaded machine though the message may be stored),
/// up to [`BACKLOG_ROUNDS`] rounds; fails naming `what` if some are still unacknowledged.
/// Returns the elapsed time.
pub(crate) async fn publish_backlog(
    js: &jetstream::Context,
    stream: &str,
    messages: Vec<Outgoing>,
    what: &str,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut pending = messages;
    for _ in 0..BACKLOG_ROUNDS {
        let mut unacknowledged = Vec::new();
        let mut inflight = FuturesUnordered::new();
        for message in pending {
            while inflight.len() >= WINDOW {
                if let Some(Err(failed)) = inflight.next().await {
                    unacknowledged.push(failed);
                }
            }
            let publish = PublishMessage::build()
                .payload(message.payload.clone().into())
                .expected_stream(stream)
                .message_id(message.message_id.clone());
            let ack = js.send_publish(message.subject.clone(), publish).await?;
            inflight.push(async move { ack.await.map(|_| ()).map_err(|_| message) });
        }
        while let Some(result) = inflight.next().await {
            if let Err(failed) = result {
                unacknowledged.push(failed);
            }
        }
        if unacknowledged.is_empty() {
            return Ok(started.elapsed());
        }
        pending = unacknowledged;
    }
    anyhow::bail!(
        "{} {what} publishes to {stream} were not acknowledged after {BACKLOG_ROUNDS} rounds",
        pending.len()
    )
}

fn record<E>(result: Result<Duration, E>, latencies: &mut Latencies, errors: &mut u64) {
    match result {
        Ok(latency) => latencies.push(latency),
        Err(_) => *errors += 1,
    }
}

/// Inserts the `chat_messages` and `events` rows of `messages` in one transaction with the
/// projector's own statements (no checkpoint, no other read model); returns the rows inserted.
pub(crate) async fn insert_rows(
    conn: &mut PgConnection,
    messages: &[Positioned],
) -> anyhow::Result<u64> {
    let messages: Vec<&Positioned> = messages.iter().collect();
    let mut tx = sqlx::Connection::begin(conn).await?;
    let rows = chat::apply(&mut tx, &messages).await? + timeline::apply(&mut tx, &messages).await?;
    tx.commit().await?;
    Ok(rows)
}
