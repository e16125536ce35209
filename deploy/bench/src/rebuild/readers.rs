//! Readers of the tables under rebuild, reading as the dashboard does (a chatlog page, a player
//! list, the timeline, sessions) in a loop until stopped: the swap must neither fail a read nor
//! show one an empty table.

use crate::stats::Latencies;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The dashboard's reads, each of which finds rows of the backlog's account.
const QUERIES: [&str; 4] = [
    "SELECT id FROM chat_messages WHERE account_id = $1 ORDER BY sent_at DESC, id DESC LIMIT 50",
    "SELECT uuid FROM players WHERE account_id = $1 ORDER BY uuid LIMIT 50",
    "SELECT id FROM events WHERE account_id = $1 ORDER BY occurred_at DESC, seq DESC LIMIT 50",
    "SELECT id FROM sessions WHERE account_id = $1 LIMIT 50",
];

/// What one reader saw.
#[derive(Debug, Default)]
pub(super) struct Reads {
    /// The successful, non-empty reads' latencies.
    pub(super) latencies: Latencies,
    /// Reads that failed.
    pub(super) failed: u64,
    /// Reads that found no row.
    pub(super) empty: u64,
    /// The first failure's message.
    pub(super) first_error: Option<String>,
}

impl Reads {
    fn merge(&mut self, other: Reads) {
        self.latencies.merge(other.latencies);
        self.failed += other.failed;
        self.empty += other.empty;
        self.first_error = self.first_error.take().or(other.first_error);
    }
}

/// Fails unless every read finds rows of `account` now (else an empty read during the rebuild
/// would say nothing about the swap).
pub(super) async fn check(pool: &PgPool, account: Uuid) -> anyhow::Result<()> {
    for query in QUERIES {
        let rows = sqlx::query_scalar::<_, Uuid>(query)
            .bind(account)
            .fetch_all(pool)
            .await?;
        anyhow::ensure!(!rows.is_empty(), "no rows before the rebuild: {query}");
    }
    Ok(())
}

/// Starts `readers` readers of `account`'s rows on `pool` until `stop`.
pub(super) fn start(
    pool: &PgPool,
    account: Uuid,
    readers: usize,
    stop: &CancellationToken,
) -> Vec<tokio::task::JoinHandle<Reads>> {
    (0..readers)
        .map(|reader| {
            let (pool, stop) = (pool.clone(), stop.clone());
            tokio::spawn(async move {
                let mut reads = Reads::default();
                for query in QUERIES.iter().cycle().skip(reader) {
                    if stop.is_cancelled() {
                        break;
                    }
                    let sent = Instant::now();
                    let result = sqlx::query_scalar::<_, Uuid>(query)
                        .bind(account)
                        .fetch_all(&pool)
                        .await;
                    match result {
                        Ok(rows) if rows.is_empty() => reads.empty += 1,
                        Ok(_) => reads.latencies.push(sent.elapsed()),
                        Err(error) => {
                            reads.failed += 1;
                            reads.first_error.get_or_insert(error.to_string());
                        }
                    }
                    // A dashboard's pace, not a tight loop: the readers must not take the
                    // cores the rebuild is measured on.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                reads
            })
        })
        .collect()
}

/// Waits for the readers (stopped) and adds up what they saw.
pub(super) async fn finish(readers: Vec<tokio::task::JoinHandle<Reads>>) -> anyhow::Result<Reads> {
    let mut all = Reads::default();
    for reader in readers {
        all.merge(reader.await?);
    }
    Ok(all)
}
