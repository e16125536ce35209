//! Delivery workers: send the outbox (`alert_deliveries`) to webhooks and Discord, at least once,
//! with retries.
//!
//! Any number of notifier processes run these workers side by side. Each claims due rows under
//! a lease ([`claim`]), sends them ([`send`]) with up to `NOTIFIER_WORKERS` attempts in flight,
//! and records every attempt with the delivery's next step ([`claim::record`]) and the
//! destination's health ([`health`]) in one transaction. A worker killed mid-attempt records
//! nothing: its lease runs out and the same row (the same `webhook-id`) is claimed again. So a
//! receiver may see a message twice, and, with parallel workers and retries, out of order.
//!
//! The workers wake on `NOTIFY alert_deliveries` (sent by the evaluator and query-api when
//! they add rows) and poll every second besides, which also picks up retries as they fall due.

mod claim;
mod config;
mod health;
mod resolver;
mod schedule;
mod send;

pub use config::DeliveryConfig;

use super::outbox::CHANNEL;
use anyhow::Context;
use claim::{Claimed, Standing};
use health::Health;
use metrics::{describe_counter, describe_histogram};
use send::{Sender, Sent};
use shared::alerts::AlertsConfig;
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// On shutdown, attempts in flight get this long to finish and be recorded; the rest are
/// dropped and, their leases running out, tried again by whichever worker runs next.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How often a lost `LISTEN` connection is opened again (the poll covers the gap).
const RELISTEN_EVERY: Duration = Duration::from_secs(5);

/// Runs the delivery workers until `shutdown`: claims due deliveries, sends them, records each
/// attempt. Fails only at start (no `WEBHOOK_SECRETS_KEY`, no HTTP client); a database or
/// receiver outage is waited out.
pub async fn run(
    pool: PgPool,
    config: DeliveryConfig,
    alerts: AlertsConfig,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    describe_metrics();
    let sealing_key = alerts
        .sealing_key
        .context("WEBHOOK_SECRETS_KEY is required to deliver signed webhooks")?;
    let sender = Arc::new(Sender::new(&config, alerts.networks, sealing_key)?);
    let config = Arc::new(config);
    let mut wake = Wake::new(pool.clone());
    let mut in_flight: JoinSet<()> = JoinSet::new();
    tracing::info!(workers = config.workers, "delivery workers started");

    while !shutdown.is_cancelled() {
        while let Some(ended) = in_flight.try_join_next() {
            log_panic(ended);
        }
        let free = config.workers.saturating_sub(in_flight.len());
        if free > 0 {
            match claim::claim(&pool, free, config.lease).await {
                Ok(rows) => {
                    for claimed in rows {
                        in_flight.spawn(attempt(
                            pool.clone(),
                            Arc::clone(&sender),
                            Arc::clone(&config),
                            claimed,
                        ));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "claiming deliveries failed; will retry"),
            }
        }
        let full = in_flight.len() >= config.workers;
        // While every slot is busy only a finished attempt (or shutdown) matters; otherwise a
        // notification, the poll or a finished attempt each trigger another claim.
        tokio::select! {
            () = shutdown.cancelled() => {}
            Some(ended) = in_flight.join_next(), if !in_flight.is_empty() => log_panic(ended),
            () = wake.notified(), if !full => {}
            () = tokio::time::sleep(config.poll_interval), if !full => {}
        }
    }

    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while let Some(ended) = in_flight.join_next().await {
            log_panic(ended);
        }
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            left = in_flight.len(),
            "attempts still in flight at shutdown are dropped; their leases will run out"
        );
        in_flight.abort_all();
    }
    tracing::info!("delivery workers stopped");
    Ok(())
}

/// Sends one claimed delivery and records the attempt.
async fn attempt(pool: PgPool, sender: Arc<Sender>, config: Arc<DeliveryConfig>, claimed: Claimed) {
    let span = tracing::info_span!(
        "delivery",
        delivery_id = %claimed.id,
        destination_id = %claimed.destination_id,
        attempt = claimed.attempt,
        event_type = %claimed.event_type,
    );
    async move {
        let started = Instant::now();
        let sent = sender.attempt(&claimed).await;
        metrics::histogram!("notifier_delivery_seconds").record(started.elapsed().as_secs_f64());
        let retry_in = (sent.health != Health::Working).then(|| {
            let backoff = schedule::backoff(
                claimed.attempt,
                config.retry_base,
                config.retry_max,
                schedule::jitter(),
            );
            sent.retry_after.map_or(backoff, |asked| asked.max(backoff))
        });
        match record(&pool, &claimed, &sent, retry_in, config.disable_after).await {
            Ok((standing, disabled)) => {
                metrics::counter!("notifier_deliveries_total", "outcome" => standing.label())
                    .increment(1);
                log_outcome(standing, &sent, retry_in);
                if let Some(reason) = disabled {
                    metrics::counter!("notifier_destinations_disabled_total").increment(1);
                    tracing::warn!(%reason, "destination disabled");
                }
            }
            Err(e) => tracing::warn!(
                error = %e,
                "recording a delivery attempt failed; the delivery is tried again once its \
                 lease runs out"
            ),
        }
    }
    .instrument(span)
    .await;
}

/// The attempt log, the delivery's next step and the destination's health, together.
async fn record(
    pool: &PgPool,
    claimed: &Claimed,
    sent: &Sent,
    retry_in: Option<Duration>,
    disable_after: Duration,
) -> sqlx::Result<(Standing, Option<String>)> {
    let mut tx = pool.begin().await?;
    let standing = claim::record(&mut tx, claimed, &sent.record, retry_in).await?;
    let disabled = health::update(
        &mut tx,
        claimed.destination_id,
        sent.record.attempted_at,
        sent.health,
        disable_after,
    )
    .await?;
    tx.commit().await?;
    Ok((standing, disabled))
}

fn log_outcome(standing: Standing, sent: &Sent, retry_in: Option<Duration>) {
    let status = sent.record.status_code;
    let error = sent.record.error.as_deref();
    let ms = sent.record.duration.as_millis() as u64;
    match standing {
        Standing::Delivered => tracing::debug!(?status, ms, "delivered"),
        Standing::Retrying => {
            tracing::info!(
                ?status,
                ?error,
                ms,
                retry_in_ms = retry_in.map(|d| d.as_millis() as u64),
                "delivery attempt failed; will retry"
            )
        }
        Standing::Failed => tracing::warn!(?status, ?error, "delivery failed: gave up"),
        Standing::Superseded => {
            tracing::info!(
                ?status,
                "attempt outlived its lease; another claim decides the delivery"
            )
        }
    }
}

fn log_panic(ended: Result<(), tokio::task::JoinError>) {
    if let Err(e) = ended
        && e.is_panic()
    {
        tracing::error!(error = %e, "a delivery attempt panicked; its lease will run out");
    }
}

/// Wakes the workers when the outbox's writers notify; a lost connection is opened again now
/// and then (notifications are only a hint: the poll finds every row anyway).
struct Wake {
    pool: PgPool,
    listener: Option<PgListener>,
    last_try: Option<Instant>,
}

impl Wake {
    fn new(pool: PgPool) -> Wake {
        Wake {
            pool,
            listener: None,
            last_try: None,
        }
    }

    /// Returns on a notification; waits forever while there is no listener (the caller's
    /// poll wakes it instead).
    async fn notified(&mut self) {
        if self.listener.is_none() && self.last_try.is_none_or(|t| t.elapsed() >= RELISTEN_EVERY) {
            self.last_try = Some(Instant::now());
            match listen(&self.pool).await {
                Ok(listener) => self.listener = Some(listener),
                Err(e) => tracing::debug!(error = %e, "LISTEN failed; polling only for now"),
            }
        }
        let Some(listener) = self.listener.as_mut() else {
            return std::future::pending().await;
        };
        if let Err(e) = listener.recv().await {
            tracing::debug!(error = %e, "LISTEN connection lost; polling only for now");
            self.listener = None;
            std::future::pending::<()>().await;
        }
    }
}

async fn listen(pool: &PgPool) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

fn describe_metrics() {
    describe_counter!(
        "notifier_deliveries_total",
        "Delivery attempts recorded, by where they left the delivery (delivered, retrying, \
         failed, superseded)"
    );
    describe_histogram!(
        "notifier_delivery_seconds",
        "Time of one delivery attempt (request and answer)"
    );
    describe_counter!(
        "notifier_destinations_disabled_total",
        "Destinations disabled (failing for NOTIFIER_DISABLE_AFTER_HOURS, or 410 Gone)"
    );
}
