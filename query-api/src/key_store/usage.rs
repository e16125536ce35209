//! Writing `api_keys.last_used_at` from the usage reports ingest and query-api publish
//! (see `shared::key_usage`): one UPDATE per report, however many keys it names.

use futures::StreamExt;
use shared::key_usage::UsageReport;
use sqlx::PgPool;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The queue group of the report subscribers: one replica writes each report.
const QUEUE_GROUP: &str = "query-api-key-usage";

/// Applies one report: each key's `last_used_at` moves forward, never back.
pub async fn record_key_usage(pool: &PgPool, report: &UsageReport) -> Result<u64, sqlx::Error> {
    let (ids, times): (Vec<_>, Vec<_>) = report.iter().map(|(id, at)| (*id, *at)).unzip();
    let done = sqlx::query(
        "UPDATE api_keys AS k \
         SET last_used_at = greatest(coalesce(k.last_used_at, u.used_at), u.used_at) \
         FROM UNNEST($1::uuid[], $2::timestamptz[]) AS u(id, used_at) \
         WHERE k.id = u.id",
    )
    .bind(&ids)
    .bind(&times)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Subscribes to `subject` in a queue group and writes every report until `shutdown`,
/// re-subscribing after an error.
pub fn spawn_usage_writer(
    nats: async_nats::Client,
    subject: String,
    pool: PgPool,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        while !shutdown.is_cancelled() {
            let mut reports = match nats
                .queue_subscribe(subject.clone(), QUEUE_GROUP.to_owned())
                .await
            {
                Ok(subscriber) => subscriber,
                Err(error) => {
                    tracing::warn!(%error, "cannot subscribe to key usage reports; retrying");
                    tokio::select! {
                        () = shutdown.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    }
                }
            };
            loop {
                let message = tokio::select! {
                    () = shutdown.cancelled() => return,
                    message = reports.next() => match message {
                        Some(message) => message,
                        None => break,
                    },
                };
                let report: UsageReport = match serde_json::from_slice(&message.payload) {
                    Ok(report) => report,
                    Err(error) => {
                        tracing::warn!(%error, "unreadable key usage report ignored");
                        continue;
                    }
                };
                if let Err(error) = record_key_usage(&pool, &report).await {
                    // Losing one report only leaves last_used_at a flush interval behind.
                    tracing::warn!(%error, keys = report.len(), "key usage report not written");
                }
            }
        }
    })
}
