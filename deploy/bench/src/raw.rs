//! The physical limits, measured in the same run: pipelined JetStream publishes with message
//! ids on a stream configured like ours, and UNNEST batch inserts into the real read-model
//! tables of a scratch database, with no service logic around either.

use crate::stats::Latencies;
use async_nats::jetstream::{self, message::PublishMessage};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::event_log::EventLogConfig;
use shared::records::{ChatEntry, ChatEntryType};
use shared::timeline::{TimelineEvent, events_of};
use sqlx::PgConnection;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Publishes in flight at most (the pipelining window).
const WINDOW: usize = 1024;
/// Chat rows per INSERT, as the projector writes them.
const CHAT_ROWS_PER_STATEMENT: usize = 5_000;
/// Event rows per INSERT, as the projector writes them.
const EVENT_ROWS_PER_STATEMENT: usize = 2_000;

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
        ..EventLogConfig::default()
    };
    js.get_or_create_stream(config.stream_config()).await?;
    Ok(config)
}

/// A chat record with its message's account and time of receipt.
type ChatRow<'a> = (Uuid, chrono::DateTime<chrono::Utc>, &'a Logged<ChatEntry>);

/// One log message ready to publish.
pub(crate) struct Outgoing {
    /// Its subject.
    pub(crate) subject: String,
    /// Its `Nats-Msg-Id`.
    pub(crate) message_id: String,
    /// Its bytes.
    pub(crate) payload: Vec<u8>,
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

fn record<E>(result: Result<Duration, E>, latencies: &mut Latencies, errors: &mut u64) {
    match result {
        Ok(latency) => latencies.push(latency),
        Err(_) => *errors += 1,
    }
}

/// Inserts the `chat_messages` and `events` rows of `messages` (stream sequence, message) in
/// one transaction with the projector's UNNEST shapes; returns the rows inserted.
pub(crate) async fn insert_rows(
    conn: &mut PgConnection,
    messages: &[(u64, LogMessage)],
) -> anyhow::Result<u64> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    let mut rows = 0;
    let chat: Vec<_> = messages
        .iter()
        .flat_map(|(_, m)| match &m.batch {
            RecordBatch::Chat(records) => records
                .iter()
                .map(|r| (m.account_id, m.received_at, r))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    for part in chat.chunks(CHAT_ROWS_PER_STATEMENT) {
        let col = |f: fn(&ChatRow<'_>) -> Uuid| part.iter().map(f).collect::<Vec<_>>();
        rows += sqlx::query(
            "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message,
                                        channel, sent_at)
             SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[],
                                  $6::text[], $7::text[], $8::timestamptz[])
             ON CONFLICT (account_id, id) DO NOTHING",
        )
        .bind(col(|r| r.0))
        .bind(col(|r| r.2.id))
        .bind(col(|r| r.2.record.player_uuid))
        .bind(col(|r| r.2.record.server_id))
        .bind(part.iter().map(|r| match r.2.record.entry_type {
            ChatEntryType::Chat => "chat",
            ChatEntryType::Command => "command",
        }).collect::<Vec<_>>())
        .bind(part.iter().map(|r| r.2.record.message.as_str()).collect::<Vec<_>>())
        .bind(part.iter().map(|r| r.2.record.channel.as_deref()).collect::<Vec<_>>())
        .bind(part.iter().map(|r| r.2.record.sent_at.unwrap_or(r.1)).collect::<Vec<_>>())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    let events: Vec<TimelineEvent> = messages
        .iter()
        .flat_map(|(seq, m)| events_of(*seq, m))
        .collect();
    for part in events.chunks(EVENT_ROWS_PER_STATEMENT) {
        rows += insert_events(&mut tx, part).await?;
    }
    tx.commit().await?;
    Ok(rows)
}

/// The projector's timeline INSERT, verbatim in shape.
pub(crate) async fn insert_events(
    conn: &mut PgConnection,
    events: &[TimelineEvent],
) -> anyhow::Result<u64> {
    let column = |f: fn(&TimelineEvent) -> Option<Uuid>| events.iter().map(f).collect::<Vec<_>>();
    let result = sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id,
                             properties, occurred_at, received_at)
         SELECT account_id, id, seq, name, is_internal, player_uuid, server_id,
                properties::json, occurred_at, received_at
         FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::boolean[],
                     $6::uuid[], $7::uuid[], $8::text[], $9::timestamptz[], $10::timestamptz[])
              AS t(account_id, id, seq, name, is_internal, player_uuid, server_id,
                   properties, occurred_at, received_at)
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(events.iter().map(|e| e.account_id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.seq).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.is_internal).collect::<Vec<_>>())
    .bind(column(|e| e.player_uuid))
    .bind(column(|e| e.server_id))
    .bind(
        events
            .iter()
            .map(|e| e.properties.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(events.iter().map(|e| e.occurred_at).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.received_at).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}
