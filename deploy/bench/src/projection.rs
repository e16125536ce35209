//! The projector's side: a mixed backlog in the event log, the projector's catch-up over it,
//! and the raw-insert baseline over the very same log messages.

use crate::data::mixed_log_message;
use crate::raw::{Outgoing, insert_rows, publish_pipelined};
use anyhow::Context;
use async_nats::jetstream::{self, consumer::DeliverPolicy, consumer::pull::OrderedConfig};
use futures::StreamExt;
use projector::projections::Positioned;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::Keyring;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Messages per projector-sized chunk (its default `PROJECTOR_BATCH_MAX`).
const CHUNK_MESSAGES: usize = 500;

/// The subject ingest would use for `message`.
pub(crate) fn subject_of(subjects: &Subjects, message: &LogMessage) -> String {
    let name = match &message.batch {
        RecordBatch::Custom(records) => records.first().map(|r| r.record.name.as_str()),
        _ => None,
    };
    subjects.for_records(message.account_id, message.kind(), name)
}

/// Appends mixed messages to the event log until it holds `records` records past `already`;
/// returns the records appended.
pub(crate) async fn top_up_backlog(
    js: &jetstream::Context,
    stream: &str,
    subjects: &Subjects,
    account: Uuid,
    players: &[Uuid],
    records: usize,
) -> anyhow::Result<usize> {
    let mut rng = StdRng::seed_from_u64(7);
    let servers = crate::data::uuids(40);
    let mut messages = Vec::new();
    let mut total = 0;
    while total < records {
        let (message, count) = mixed_log_message(&mut rng, account, &servers, players);
        total += count;
        messages.push(Outgoing {
            subject: subject_of(subjects, &message),
            message_id: Uuid::new_v4().simple().to_string(),
            payload: message.encode(),
        });
    }
    let (_, _, errors) = publish_pipelined(js, stream, messages).await?;
    anyhow::ensure!(errors == 0, "{errors} backlog publishes failed");
    Ok(total)
}

/// The stream's last sequence.
pub(crate) async fn last_sequence(js: &jetstream::Context, stream: &str) -> anyhow::Result<u64> {
    let mut stream = js.get_stream(stream).await?;
    Ok(stream.info().await?.state.last_sequence)
}

/// Waits until every read model's checkpoint reaches `sequence` (at most `limit`).
pub(crate) async fn wait_projected(
    pool: &PgPool,
    sequence: u64,
    limit: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let at: Option<i64> =
            sqlx::query_scalar("SELECT min(last_sequence) FROM projection_checkpoints")
                .fetch_one(pool)
                .await?;
        if at.unwrap_or(0) >= sequence as i64 {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the projector did not reach {sequence} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Reads messages `1..=last` of `stream` and inserts their rows into the scratch database in
/// projector-sized chunks; returns (records, rows, time spent inside the inserts only).
pub(crate) async fn raw_insert_from_log(
    js: &jetstream::Context,
    stream: &str,
    last: u64,
    scratch: &PgPool,
    keyring: &Keyring,
) -> anyhow::Result<(u64, u64, Duration)> {
    let stream = js.get_stream(stream).await?;
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        })
        .await?;
    let mut messages = consumer.messages().await?;
    let mut conn = scratch.acquire().await?;
    let (mut records, mut rows, mut inserting) = (0u64, 0u64, Duration::ZERO);
    let mut chunk = Vec::with_capacity(CHUNK_MESSAGES);
    let mut seen = 0;
    while seen < last {
        let message = tokio::time::timeout(Duration::from_secs(30), messages.next())
            .await
            .context("reading the event log back")?
            .context("the consumer ended")?
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
        seen = info.stream_sequence;
        let mut decoded = LogMessage::decode(&message.payload)?;
        // Opening the sealed fields is the projector's work, not the insert's: untimed.
        keyring.open(std::slice::from_mut(&mut decoded)).await?;
        records += decoded.batch.len() as u64;
        chunk.push(Positioned {
            stream_sequence: info.stream_sequence,
            message: decoded,
        });
        if chunk.len() == CHUNK_MESSAGES || seen >= last {
            let started = Instant::now();
            rows += insert_rows(&mut conn, &chunk).await?;
            inserting += started.elapsed();
            chunk.clear();
        }
    }
    Ok((records, rows, inserting))
}
