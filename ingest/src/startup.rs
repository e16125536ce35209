//! Building ingest: connect NATS, check the log, load keys, assemble the router.

use crate::coalesce::Coalescer;
use crate::config::Config;
use crate::routes;
use crate::state::AppState;
use async_nats::jetstream;
use axum::Router;
use serde_json::json;
use shared::health::Readiness;
use shared::key_directory::{DirectorySync, KeyDirectory};
use shared::key_usage::{KeyUsage, report_key_usage};
use shared::nats;
use shared::publisher::Publisher;
use shared::rate_limit::Limiter;
use shared::records::IpHasher;
use shared::serve::BoundRouter;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// The broker must take a full batch (up to the body limit) plus its envelope in one message.
const MIN_MAX_PAYLOAD: usize = 2 * shared::serve::MAX_BODY_BYTES;

/// Ingest's routes and readiness probes, built but not yet listening.
pub struct Ingest {
    /// The plugin write routes, with state applied (no ops routes, no fallbacks).
    pub api: Router,
    /// Probes: NATS connected, keys loaded.
    pub readiness: Readiness,
}

impl Ingest {
    /// Paths whose responses may take longer than the request deadline (the action feed's
    /// long-poll): whoever serves [`Ingest::api`] exempts them
    /// ([`shared::serve::ServeLimits::long_lived_paths`]).
    pub const LONG_LIVED_PATHS: &'static [&'static str] = &[routes::ACTIONS_PATH];

    /// Connects to NATS, checks the event stream, and starts mirroring the key bucket.
    pub async fn build(config: &Config, shutdown: CancellationToken) -> anyhow::Result<Ingest> {
        let log = &config.common.event_log;
        let client = nats::connect("warden-ingest", &config.common.nats_url)
            .await?
            .client;
        let max_payload = client.server_info().max_payload;
        anyhow::ensure!(
            max_payload >= MIN_MAX_PAYLOAD,
            "nats-server max_payload is {max_payload} bytes; set it to at least {MIN_MAX_PAYLOAD} \
             (e.g. `max_payload: 8MB`) so a full batch fits in one log message"
        );
        let coalesce = config.coalesce;
        anyhow::ensure!(
            coalesce.max_bytes <= max_payload,
            "INGEST_COALESCE_MAX_BYTES is {} bytes, over nats-server's max_payload of \
             {max_payload}; lower it so a merged publish fits in one message",
            coalesce.max_bytes
        );
        let js = jetstream::new(client.clone());
        // The stream's partitions, not EVENT_PARTITIONS: every writer must agree on them.
        let subjects = nats::open_event_stream(&js, log).await?.subjects;
        let bucket = nats::open_bucket(&js, log.key_bucket_config()).await?;
        let rates = nats::open_bucket(&js, log.rate_bucket_config()).await?;
        let keyring = config.privacy.keyring(&js, log).await?;
        keyring.spawn_watch(shutdown.clone());
        let keys = Arc::new(KeyDirectory::new(config.admin_key.expose()));
        DirectorySync::new(client.clone(), bucket, keys.clone()).spawn(shutdown.clone());
        let key_usage = Arc::new(KeyUsage::new());
        tokio::spawn(report_key_usage(
            key_usage.clone(),
            client.clone(),
            log.subjects().key_usage(),
            config.common.key_usage_flush,
            shutdown,
        ));

        let publisher = Publisher::new(
            client.clone(),
            log.stream.clone(),
            config.publish_timeout,
            "ingest_publish_duration_seconds",
        );
        let state = AppState {
            keys: keys.clone(),
            publisher: publisher.clone(),
            coalescer: Coalescer::new(publisher.clone(), coalesce),
            jetstream: js.clone(),
            stream: log.stream.clone(),
            subjects,
            keyring,
            ip_hasher: IpHasher::new(config.ip_hash_key.expose().as_bytes()),
            limiter: Arc::new(Limiter::new(rates)),
            key_usage,
            dashboard_url: config.dashboard_url.as_deref().map(Arc::from),
        };
        let max_writes = config.max_writes_in_flight;
        let slots = Arc::new(Semaphore::new(max_writes));
        let write_slots = slots.clone();
        let readiness = Readiness::new()
            .with("ingest_nats", move || {
                let connected = publisher.is_connected();
                async move {
                    if connected {
                        Ok(json!("connected"))
                    } else {
                        Err("not connected to NATS".into())
                    }
                }
            })
            .with("ingest_keys", move || {
                let (loaded, count) = (keys.is_loaded(), keys.len());
                async move {
                    if loaded {
                        Ok(json!({"live_keys": count}))
                    } else {
                        Err("key bucket not loaded yet".into())
                    }
                }
            })
            .with("ingest_writes", move || {
                // Informational: a full house means writes are queueing for a slot.
                let in_flight = max_writes - write_slots.available_permits();
                async move { Ok(json!({"in_flight": in_flight, "limit": max_writes})) }
            });
        Ok(Ingest {
            api: routes::router(state, slots),
            readiness,
        })
    }
}

/// Ingest as a standalone HTTP service.
pub struct App(BoundRouter);

impl App {
    /// Builds ingest and binds `config.bind_addr` (port 0 picks a free port).
    pub async fn build(config: Config, shutdown: CancellationToken) -> anyhow::Result<App> {
        let ingest = Ingest::build(&config, shutdown).await?;
        let limits = shared::serve::ServeLimits {
            long_lived_paths: Ingest::LONG_LIVED_PATHS,
            ..config.common.serve
        };
        BoundRouter::bind(config.bind_addr, ingest.api, ingest.readiness, limits)
            .await
            .map(App)
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.0.local_addr()
    }

    /// Serves until `shutdown` is cancelled, then drains open requests for at most the
    /// shutdown deadline ([`shared::shutdown::SHUTDOWN_DEADLINE`]).
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        self.0
            .run_until_stopped("ingest's in-flight requests", shutdown)
            .await
    }
}
