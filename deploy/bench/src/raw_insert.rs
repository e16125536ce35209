//! The raw-insert baselines of the projector's catch-up: the very log messages it projected,
//! their `chat_messages` and `events` rows inserted with the projector's own statements into a
//! scratch database, once on one connection and once split in two halves on two connections
//! at once (how much PostgreSQL does with the machine's second core).

use crate::raw::insert_rows;
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use anyhow::Context;
use async_nats::jetstream::{self, consumer::DeliverPolicy, consumer::pull::OrderedConfig};
use futures::StreamExt;
use projector::projections::{Positioned, ReadModel, chat::Chat, timeline::Timeline};
use shared::envelope::LogMessage;
use shared::privacy::Keyring;
use sqlx::{PgConnection, PgPool};
use std::time::{Duration, Instant};

/// The single-connection baseline's name (the one the catch-up targets compare with).
pub(crate) const ONE: &str = "raw_insert";
/// The two-connection baseline's name (informational beside the catch-up's target).
pub(crate) const TWO: &str = "raw_insert_two_connections";

/// Messages per transaction (the projector's default `PROJECTOR_BATCH_MAX`).
const CHUNK_MESSAGES: usize = 500;

/// Look for a deadlock after a lock wait of 20 ms rather than the default second (the scratch
/// database's user is a superuser, who may set it per session).
const DETECT_DEADLOCKS_SOON: &str = "SET deadlock_timeout = '20ms'";

/// PostgreSQL's SQLSTATE for a deadlock the server broke by aborting one transaction.
const DEADLOCK: &str = "40P01";

/// Measures both baselines over messages `1..=last` of the event log.
pub(crate) async fn measure(b: &mut Bench, last: u64) -> anyhow::Result<()> {
    phase("raw insert baselines over the same log messages (one, then two connections)");
    // Read, decoded and opened once before either clock starts: opening the sealed fields is
    // the projector's work, not the insert's, and both baselines insert the very same chunks.
    let (chunks, records) = read_log(&b.js, &b.log.stream, last, &b.keyring).await?;

    clear(&b.raw_pool).await?;
    let cpu = b.cpu(&[]);
    let mut conn = b.raw_pool.acquire().await?;
    let started = Instant::now();
    let mut rows = 0;
    for chunk in &chunks {
        rows += insert_rows(&mut conn, chunk).await?;
    }
    let elapsed = started.elapsed();
    drop(conn);
    b.note(ONE, cpu.since());
    let what = format!(
        "baseline: the same log messages' chat_messages and events rows ({rows} rows) \
         UNNEST-inserted with the projector's statements into a scratch database with the same \
         schema, on one connection, one transaction per {CHUNK_MESSAGES} messages; the messages \
         are read and opened before the clock starts"
    );
    let one = Measurement::new(ONE, &what, "records", records, elapsed, None, 0);
    b.report.measurements.push(one);

    // Empty again, so the second baseline inserts into the same empty tables as the first
    // (the rows are the same: on full tables every insert would be a conflict).
    clear(&b.raw_pool).await?;
    let cpu = b.cpu(&[]);
    let (rows, elapsed, retried) = two_connections(&b.raw_pool, &chunks).await?;
    b.note(TWO, cpu.since());
    if retried > 0 {
        b.note(
            TWO,
            format!(
                "{retried} transactions were rolled back by a deadlock between the halves' \
                 rollup upserts and retried (the time counts)"
            ),
        );
    }
    let what = format!(
        "baseline: the same rows ({rows} rows), the messages split in two halves (the first \
         and the second half of the log), each half inserted on its own connection at the same \
         time with the same statements and transactions; wall time until both are done"
    );
    let two = Measurement::new(TWO, &what, "records", records, elapsed, None, 0);
    b.report.measurements.push(two);
    Ok(())
}

/// Reads messages `1..=last` of `stream`, decoded and opened, in projector-sized chunks;
/// returns them with their record count.
async fn read_log(
    js: &jetstream::Context,
    stream: &str,
    last: u64,
    keyring: &Keyring,
) -> anyhow::Result<(Vec<Vec<Positioned>>, u64)> {
    let stream = js.get_stream(stream).await?;
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        })
        .await?;
    let mut messages = consumer.messages().await?;
    let mut chunks = Vec::new();
    let mut chunk = Vec::with_capacity(CHUNK_MESSAGES);
    let (mut records, mut seen) = (0u64, 0);
    while seen < last {
        let message = tokio::time::timeout(Duration::from_secs(30), messages.next())
            .await
            .context("reading the event log back")?
            .context("the consumer ended")?
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
        seen = info.stream_sequence;
        let decoded = LogMessage::decode(&message.payload)?;
        records += decoded.batch.len() as u64;
        chunk.push(Positioned {
            stream_sequence: info.stream_sequence,
            message: decoded,
        });
        if chunk.len() == CHUNK_MESSAGES || seen >= last {
            chunks.push(std::mem::replace(
                &mut chunk,
                Vec::with_capacity(CHUNK_MESSAGES),
            ));
        }
    }
    // Opened once the whole log is read, a chunk at a time as the projector does: key
    // fetches interleaved with the consumer's deliveries on one connection timed out once.
    for chunk in &mut chunks {
        let (sequences, mut messages): (Vec<u64>, Vec<LogMessage>) = chunk
            .drain(..)
            .map(|p| (p.stream_sequence, p.message))
            .unzip();
        keyring.open(&mut messages).await?;
        chunk.extend(
            sequences
                .into_iter()
                .zip(messages)
                .map(|(stream_sequence, message)| Positioned {
                    stream_sequence,
                    message,
                }),
        );
    }
    Ok((chunks, records))
}

/// Empties the tables both baselines insert into.
async fn clear(pool: &PgPool) -> anyhow::Result<()> {
    let tables = [Chat.tables(), Timeline.tables()].concat().join(", ");
    sqlx::query(&format!("TRUNCATE {tables}"))
        .execute(pool)
        .await?;
    Ok(())
}

/// Inserts the first half of `chunks` on one connection and the second half on another, at
/// the same time; returns (rows, wall time from the start until both are done, transactions
/// retried after a deadlock).
async fn two_connections(
    pool: &PgPool,
    chunks: &[Vec<Positioned>],
) -> anyhow::Result<(u64, Duration, u64)> {
    let (first, second) = chunks.split_at(chunks.len().div_ceil(2));
    // Both connections are open before the clock starts, as the single one is. The halves
    // upsert the same hot trends rollup rows (one per event name and day, per hour and
    // server...) in orders of their own, so they can deadlock; PostgreSQL would look for one
    // only after a lock wait of a second (`deadlock_timeout`), which would measure the
    // setting rather than the inserts.
    let mut a = pool.acquire().await?;
    let mut b = pool.acquire().await?;
    for conn in [&mut a, &mut b] {
        sqlx::query(DETECT_DEADLOCKS_SOON)
            .execute(&mut **conn)
            .await?;
    }
    let started = Instant::now();
    let (one, two) = tokio::try_join!(insert_half(&mut a, first), insert_half(&mut b, second))?;
    let elapsed = started.elapsed();
    for conn in [&mut a, &mut b] {
        sqlx::query("RESET deadlock_timeout")
            .execute(&mut **conn)
            .await?;
    }
    Ok((one.0 + two.0, elapsed, one.1 + two.1))
}

/// Inserts `chunks` in turn, one transaction each; a transaction PostgreSQL aborted to break a
/// deadlock with the other half (both upsert the same trends rollup rows, in an order of
/// their own) is retried, as the projector retries a failed chunk. Returns (rows, retries).
async fn insert_half(
    conn: &mut PgConnection,
    chunks: &[Vec<Positioned>],
) -> anyhow::Result<(u64, u64)> {
    let (mut rows, mut retried) = (0, 0);
    for chunk in chunks {
        loop {
            match insert_rows(conn, chunk).await {
                Ok(inserted) => {
                    rows += inserted;
                    break;
                }
                Err(e) if is_deadlock(&e) && retried < 1_000 => retried += 1,
                Err(e) => return Err(e),
            }
        }
    }
    Ok((rows, retried))
}

fn is_deadlock(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<sqlx::Error>()
        .and_then(sqlx::Error::as_database_error)
        .and_then(|e| e.code())
        .is_some_and(|code| code == DEADLOCK)
}
