//! The notifier process (`projector notify`): the evaluator (one leader per stream) and the
//! delivery workers (every instance), plus its ops endpoints.

use super::config::NotifierConfig;
use super::evaluate::{self, Evaluated};
use super::{delivery, sweep};
use crate::MIGRATOR;
use crate::consumer::{self, ChunkSink, LogReader};
use crate::error::ProjectorError;
use crate::leadership;
use crate::projections::Delivered;
use crate::startup::{connectivity, run_beside_ops};
use anyhow::Context;
use async_nats::jetstream;
use shared::health::Readiness;
use shared::privacy::Keyring;
use shared::serve::BoundRouter;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The evaluator and the delivery workers, ready to run.
pub struct Notifier {
    /// Probes `notifier_postgres` and `notifier_nats`.
    pub readiness: Readiness,
    evaluator: Evaluator,
    config: NotifierConfig,
}

/// The consumer of the log that turns records into outbox rows.
struct Evaluator {
    pool: PgPool,
    /// Opens the personal fields of each chunk before the rules see them.
    keyring: Keyring,
    reader: LogReader,
    /// The stream's name: the key of its checkpoint and of its leader lock.
    stream: String,
}

impl Notifier {
    /// Connects PostgreSQL and NATS, applies the migrations and opens the event stream. Needs
    /// `WEBHOOK_SECRETS_KEY`: the workers open each webhook's signing secret with it.
    pub async fn build(config: &NotifierConfig) -> anyhow::Result<Notifier> {
        config.alerts.require_sealing_key()?;
        shared::telemetry::prometheus();
        describe_metrics();
        let pool = PgPoolOptions::new()
            // The evaluator's lock session, its chunks, the sweep and the workers' LISTEN, plus
            // one per worker to record its attempt (none is held while a request is in flight).
            .max_connections(u32::try_from(config.delivery.workers.min(20) + 4).unwrap_or(24))
            .acquire_timeout(Duration::from_secs(5))
            .connect(&config.database_url)
            .await
            .context("connecting to PostgreSQL (DATABASE_URL)")?;
        MIGRATOR
            .run(&pool)
            .await
            .context("applying the projector's migrations")?;
        let shared::nats::Connection { client, reconnects } =
            shared::nats::connect("warden-notifier", &config.common.nats_url).await?;
        let event_log = &config.common.event_log;
        let js = jetstream::new(client.clone());
        let shared::nats::EventStream { stream, subjects } =
            shared::nats::open_event_stream(&js, event_log).await?;
        let keyring = config.privacy.keyring(&js, event_log).await?;
        let readiness = connectivity(["notifier_postgres", "notifier_nats"], &pool, &client);
        Ok(Notifier {
            readiness,
            evaluator: Evaluator {
                pool,
                keyring,
                stream: event_log.stream.clone(),
                reader: LogReader {
                    stream,
                    filter_subjects: subjects.all_events(),
                    batch_max: config.batch_max.max(1),
                    // One evaluator, no partitions to share slots with: chunks stay whole.
                    chunk_max_bytes: usize::MAX,
                    read_ahead: crate::read_ahead::ReadAhead {
                        messages: config.batch_max,
                        bytes: crate::read_ahead::DEFAULT_BYTES,
                    }
                    .fitting(client.server_info().max_payload),
                    batch_wait: config.batch_wait,
                    reconnects,
                },
            },
            config: config.clone(),
        })
    }

    /// Evaluates (while this instance leads) and delivers until `shutdown`; when either half
    /// fails, the other is stopped too.
    pub async fn run(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let stop = shutdown.child_token();
        let evaluator = &self.evaluator;
        // A key destroyed elsewhere (an erasure) leaves this process's cache at once.
        let keys_watched = shutdown.child_token();
        let _watch = evaluator.keyring.spawn_watch(keys_watched.clone());
        let _stop_keys = keys_watched.drop_guard();
        let sweep_every = self.config.sweep_every;
        let evaluating = async {
            let set_leader = |leader: bool| {
                metrics::gauge!("notifier_leader").set(if leader { 1.0 } else { 0.0 });
            };
            let led = leadership::lead(
                &evaluator.pool,
                leadership::NOTIFIER,
                &evaluator.stream,
                &stop,
                set_leader,
                |term| async move {
                    let (consumed, ()) = tokio::join!(
                        consumer::consume(&evaluator.reader, evaluator, &term),
                        evaluator.sweep_while_caught_up(sweep_every, &term)
                    );
                    consumed
                },
            )
            .await;
            stop.cancel();
            led
        };
        let delivering = async {
            let delivered = delivery::run(
                evaluator.pool.clone(),
                self.config.delivery.clone(),
                self.config.alerts.clone(),
                stop.clone(),
            )
            .await;
            stop.cancel();
            delivered
        };
        let (evaluated, delivered) = tokio::join!(evaluating, delivering);
        evaluated.context("evaluating the alert rules")?;
        delivered.context("delivering notifications")
    }
}

impl Evaluator {
    /// Runs the clock's rules every `every` while the checkpoint is at the stream's end, until
    /// `term`.
    async fn sweep_while_caught_up(&self, every: Duration, term: &CancellationToken) {
        loop {
            tokio::select! {
                () = term.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            match self.caught_up().await {
                Ok(true) => {
                    if let Err(error) = sweep::sweep(&self.pool).await {
                        tracing::warn!(%error, "the notifier's clock sweep failed; trying again");
                    }
                }
                Ok(false) => tracing::debug!("the evaluator is behind the log; no clock sweep"),
                Err(error) => {
                    tracing::debug!(%error, "cannot tell whether the evaluator is caught up")
                }
            }
        }
    }

    /// Whether the checkpoint covers every message in the stream now.
    async fn caught_up(&self) -> Result<bool, ProjectorError> {
        let end = self.stream_end().await?;
        let at = evaluate::checkpoint(&self.pool, &self.stream).await?;
        Ok(at.is_some_and(|at| at >= end))
    }

    /// The stream's last sequence now.
    async fn stream_end(&self) -> Result<u64, ProjectorError> {
        let info = self
            .reader
            .stream
            .get_info()
            .await
            .map_err(ProjectorError::event_log)?;
        Ok(info.state.last_sequence)
    }
}

impl ChunkSink for Evaluator {
    const RETRIES_METRIC: &'static str = "notifier_retries_total";

    async fn resume_after(&self) -> Result<u64, ProjectorError> {
        let last = evaluate::resume_after(&self.pool, &self.stream, self.stream_end()).await?;
        metrics::gauge!("notifier_applied_sequence").set(last as f64);
        Ok(last)
    }

    async fn apply(
        &self,
        delivered: &[Delivered],
        pending: Option<u64>,
    ) -> Result<(), ProjectorError> {
        let Evaluated {
            last_sequence,
            deliveries,
        } = evaluate::apply_chunk(&self.pool, &self.keyring, &self.stream, delivered).await?;
        metrics::gauge!("notifier_applied_sequence").set(last_sequence as f64);
        if let Some(pending) = pending {
            metrics::gauge!("notifier_lag_messages").set(pending as f64);
        }
        if deliveries > 0 {
            tracing::debug!(
                last_sequence,
                deliveries,
                "notifications written to the outbox"
            );
        }
        Ok(())
    }
}

fn describe_metrics() {
    use metrics::{describe_counter, describe_gauge};
    describe_gauge!(
        "notifier_leader",
        "1 while this instance evaluates the alert rules"
    );
    describe_gauge!(
        "notifier_applied_sequence",
        "Last stream sequence the evaluator committed"
    );
    describe_gauge!(
        "notifier_lag_messages",
        "Log messages the evaluator has not evaluated yet"
    );
    describe_counter!(
        "notifier_retries_total",
        "Outages (NATS or PostgreSQL) that sent the evaluator back to its checkpoint"
    );
    describe_counter!(
        "notifier_deliveries_created_total",
        "Outbox rows written, by the record kind that caused them (or clock)"
    );
}

/// The `projector notify` process: the notifier plus its ops endpoints.
pub struct NotifierApp {
    notifier: Notifier,
    ops: BoundRouter,
}

impl NotifierApp {
    /// Builds the notifier and binds `BIND_ADDR` (port 0 picks a free port).
    pub async fn build(config: NotifierConfig) -> anyhow::Result<NotifierApp> {
        let notifier = Notifier::build(&config).await?;
        let ops = BoundRouter::bind(
            config.bind_addr,
            axum::Router::new(),
            notifier.readiness.clone(),
            config.common.serve,
        )
        .await?;
        Ok(NotifierApp { notifier, ops })
    }

    /// Where the ops endpoints listen.
    pub fn local_addr(&self) -> SocketAddr {
        self.ops.local_addr()
    }

    /// Evaluates, delivers and serves `/healthz`, `/readyz` and `/metrics` until `shutdown`.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let notifier = self.notifier;
        run_beside_ops("the notifier", self.ops, shutdown, |stop| {
            notifier.run(stop)
        })
        .await
    }
}
