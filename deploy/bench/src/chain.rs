//! The raw chain: publish, consume and batch-insert the same kind of records with no service
//! logic (no HTTP, no auth, no validation, no checkpoints), to put a ceiling beside the
//! sustained ingest + projector rate.

use crate::data::{CHAT_BATCH, chat_log_message};
use crate::projection::subject_of;
use crate::raw::{Outgoing, insert_rows, publish_pipelined, raw_stream};
use crate::stats::Measurement;
use async_nats::jetstream::{self, consumer::pull::OrderedConfig};
use futures::StreamExt;
use projector::projections::Positioned;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::envelope::LogMessage;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Publishes `messages` 100-record chat batches to a stream configured like ours while a
/// consumer inserts them in chunks; the rate is records over the time until the last commit.
pub(crate) async fn raw_chain(
    js: &jetstream::Context,
    scratch: &PgPool,
    messages: usize,
    players: &[Uuid],
) -> anyhow::Result<Measurement> {
    let config = raw_stream(js, "BENCH_CHAIN", "chain").await?;
    let subjects = config.subjects();
    let stream = js.get_stream(&config.stream).await?;
    let consumer = stream.create_consumer(OrderedConfig::default()).await?;
    let feed = consumer.messages().await?;
    let pool = scratch.clone();
    let started = Instant::now();
    let inserter = tokio::spawn(async move {
        let chunks = tokio_stream_chunks(feed);
        tokio::pin!(chunks);
        let mut done = 0usize;
        let mut conn = pool.acquire().await?;
        while done < messages {
            let Some(chunk) = tokio::time::timeout(Duration::from_secs(30), chunks.next()).await?
            else {
                anyhow::bail!("the chain's consumer ended");
            };
            let mut decoded = Vec::with_capacity(chunk.len());
            for item in chunk {
                let message = item.map_err(|e| anyhow::anyhow!("{e}"))?;
                let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
                decoded.push(Positioned {
                    stream_sequence: info.stream_sequence,
                    message: LogMessage::decode(&message.payload)?,
                });
            }
            done += decoded.len();
            insert_rows(&mut conn, &decoded).await?;
        }
        Ok::<_, anyhow::Error>(started.elapsed())
    });
    let account = Uuid::new_v4();
    let server = Uuid::new_v4();
    let mut rng = StdRng::seed_from_u64(11);
    let outgoing: Vec<Outgoing> = (0..messages)
        .map(|_| {
            let message = chat_log_message(&mut rng, account, server, players);
            Outgoing {
                subject: subject_of(&subjects, &message),
                message_id: Uuid::new_v4().simple().to_string(),
                payload: message.encode(),
            }
        })
        .collect();
    let (_, _, errors) = publish_pipelined(js, &config.stream, outgoing).await?;
    let elapsed = inserter.await??;
    Ok(Measurement::new(
        "raw_chain",
        "baseline: pipelined publish + ordered consumer + UNNEST insert of chat_messages and events rows, no service logic",
        "records",
        (messages * CHAT_BATCH) as u64,
        elapsed,
        None,
        errors,
    ))
}

fn tokio_stream_chunks<S: futures::Stream>(feed: S) -> impl futures::Stream<Item = Vec<S::Item>> {
    // Up to 500 messages per chunk (the projector's PROJECTOR_BATCH_MAX), or what is ready.
    futures::StreamExt::ready_chunks(feed, 500)
}
