//! The projector's side: a mixed backlog in the event log and the projector's catch-up over it
//! (the raw-insert baselines over the very same log messages are in `raw_insert`).

use crate::data::mixed_log_message;
use crate::raw::{Outgoing, publish_backlog};
use async_nats::jetstream;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::envelope::{LogMessage, RecordBatch};
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

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
    publish_backlog(js, stream, messages, "backlog").await?;
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
