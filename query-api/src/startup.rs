//! Building the service: connections, the key directory, the router; then serving it.

use crate::config::Config;
use crate::fanout::LiveEvents;
use crate::key_store::{KeyStore, spawn_usage_writer};
use crate::open_streams::OpenStreams;
use crate::routes;
use crate::state::AppState;
use anyhow::Context;
use async_nats::jetstream::{self, kv};
use serde_json::json;
use shared::event_log::EventLogConfig;
use shared::health::Readiness;
use shared::key_directory::{DirectorySync, KeyDirectory};
use shared::key_usage::{KeyUsage, report_key_usage};
use shared::rate_limit::Limiter;
use shared::serve::{BoundRouter, ServeLimits};
use sqlx::ConnectOptions;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a dashboard write (a staff note) waits for the event stream's ack before the page
/// says the log is unavailable.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything the service serves, built but not yet listening.
pub struct QueryApi {
    /// API routes with state applied; no `/healthz`, `/readyz`, `/metrics`, no fallbacks.
    pub api: axum::Router,
    /// Probes: `postgres`, `nats`, `keys`.
    pub readiness: Readiness,
}

impl QueryApi {
    /// Paths whose responses are long-lived streams: whoever serves [`QueryApi::api`] exempts
    /// them from the request deadline ([`ServeLimits::long_lived_paths`]).
    pub const LONG_LIVED_PATHS: &'static [&'static str] = &[
        routes::events_stream::PATH,
        crate::pages::activity_stream::PATH,
    ];

    /// Connects PostgreSQL and NATS, checks the event stream, reconciles the key bucket with
    /// PostgreSQL and starts filling the key directory (until `shutdown`). Runs no migrations.
    pub async fn build(config: &Config, shutdown: CancellationToken) -> anyhow::Result<QueryApi> {
        let pool = connect_postgres_logging(&config.database_url, config.slow_query).await?;
        let reads = match &config.read_database_url {
            Some(url) => connect_postgres_logging(url, config.slow_query)
                .await
                .context("connecting READ_DATABASE_URL")?,
            None => pool.clone(),
        };
        let nats = shared::nats::connect("query-api", &config.common.nats_url)
            .await?
            .client;
        let js = jetstream::new(nats.clone());
        // The stream's partitions, not EVENT_PARTITIONS: every writer must agree on them.
        let subjects = shared::nats::open_event_stream(&js, &config.common.event_log)
            .await?
            .subjects;
        let bucket = key_bucket(&js, &config.common.event_log).await?;
        let rates =
            shared::nats::open_bucket(&js, config.common.event_log.rate_bucket_config()).await?;

        let key_store = KeyStore::new(pool.clone(), bucket.clone());
        let reconciled = key_store
            .reconcile()
            .await
            .context("reconciling the key bucket with PostgreSQL")?;
        tracing::info!(
            put = reconciled.put,
            deleted = reconciled.deleted,
            "key bucket reconciled"
        );

        let keyring = config
            .privacy
            .keyring(&js, &config.common.event_log)
            .await?;
        keyring.spawn_watch(shutdown.clone());
        let keys = Arc::new(KeyDirectory::new(config.admin_key.expose()));
        let streams = OpenStreams::new(config.max_streams_per_key);
        DirectorySync::new(nats.clone(), bucket, keys.clone())
            .with_endings(streams.clone())
            .spawn(shutdown.clone());
        let live = LiveEvents::start(
            js.clone(),
            config.common.event_log.clone(),
            subjects.clone(),
            keyring.clone(),
            shutdown.clone(),
        );

        let usage_subject = config.common.event_log.subjects().key_usage();
        spawn_usage_writer(
            nats.clone(),
            usage_subject.clone(),
            pool.clone(),
            shutdown.clone(),
        );
        let key_usage = Arc::new(KeyUsage::new());
        tokio::spawn(report_key_usage(
            key_usage.clone(),
            nats.clone(),
            usage_subject,
            config.common.key_usage_flush,
            shutdown.clone(),
        ));

        let publisher = shared::publisher::Publisher::new(
            nats.clone(),
            config.common.event_log.stream.clone(),
            PUBLISH_TIMEOUT,
            "query_api_publish_duration_seconds",
        );
        let readiness = readiness(pool.clone(), nats, keys.clone());
        let api = routes::router(AppState {
            pool,
            reads,
            keys,
            key_store,
            live,
            shutdown,
            limiter: Arc::new(Limiter::new(rates)),
            trusted_proxies: config.trusted_proxies.clone().into(),
            key_usage,
            funnel_parallelism: config.funnel_parallelism,
            chat_search_budget: config.chat_search_budget,
            streams,
            sessions: config.dashboard.sessions,
            ip_hasher: Arc::new(audit_ip_hasher(config)),
            publisher,
            subjects: subjects.clone(),
            alerts: Arc::new(config.alerts.clone()),
            keyring,
            plugin: Arc::new(config.dashboard.plugin.clone()),
        });
        crate::team::passwords::warm_up().await;
        Ok(QueryApi { api, readiness })
    }
}

/// The audit log's IP hasher: keyed with `IP_HASH_KEY` when set (the deployment's secret, so
/// hashes compare across replicas and restarts); else with a random key of this process, so
/// the hashes only compare within its lifetime (logged once at start).
fn audit_ip_hasher(config: &Config) -> shared::records::IpHasher {
    match &config.dashboard.ip_hash_key {
        Some(key) => shared::records::IpHasher::new(key.expose().as_bytes()),
        None => {
            tracing::warn!(
                "IP_HASH_KEY is not set: the audit log's address hashes use a key of this \
                 process only and will not match across replicas or restarts"
            );
            let key: [u8; 32] = rand::random();
            shared::records::IpHasher::new(&key)
        }
    }
}

/// Connections of each pool (the database's, and the read replica's when there is one).
///
/// All of them are opened at start and kept: a connection opened while a dashboard is read
/// (after an idle spell, or to replace one past a lifetime) answers its first statements from a
/// cold backend (authentication, catalog caches, plans), several times slower than a warm one,
/// and those requests were the reads' slowest. A connection PostgreSQL closes is opened again.
pub const POOL_CONNECTIONS: u32 = 10;

/// A small pool for a command that runs once: connections opened as it needs them, and it
/// fails fast when PostgreSQL is unreachable.
pub async fn connect_postgres(url: &str) -> anyhow::Result<PgPool> {
    let options = PgConnectOptions::from_str(url).context("reading DATABASE_URL")?;
    pool_options()
        .connect_with(options.log_slow_statements(log::LevelFilter::Warn, Duration::from_secs(1)))
        .await
        .context("connecting to PostgreSQL (DATABASE_URL)")
}

/// The service's pool ([`POOL_CONNECTIONS`], all opened at start and kept), logging each
/// statement that takes at least `slow` (zero: none) at `warn`, in the span of the request that
/// ran it.
pub async fn connect_postgres_logging(url: &str, slow: Duration) -> anyhow::Result<PgPool> {
    let mut options = PgConnectOptions::from_str(url).context("reading DATABASE_URL")?;
    options = if slow.is_zero() {
        options.log_slow_statements(log::LevelFilter::Off, Duration::MAX)
    } else {
        options.log_slow_statements(log::LevelFilter::Warn, slow)
    };
    pool_options()
        .min_connections(POOL_CONNECTIONS)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await
        .context("connecting to PostgreSQL (DATABASE_URL)")
}

/// What every pool of query-api has: at most [`POOL_CONNECTIONS`], and a request that cannot
/// get one within 5 s fails rather than waits.
fn pool_options() -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(POOL_CONNECTIONS)
        .acquire_timeout(Duration::from_secs(5))
}

/// Gets the key bucket, creating it when it does not exist yet.
pub async fn key_bucket(
    js: &jetstream::Context,
    cfg: &EventLogConfig,
) -> anyhow::Result<kv::Store> {
    shared::nats::open_bucket(js, cfg.key_bucket_config()).await
}

fn readiness(pool: PgPool, nats: async_nats::Client, keys: Arc<KeyDirectory>) -> Readiness {
    Readiness::new()
        .with("query_postgres", move || {
            let pool = pool.clone();
            async move {
                sqlx::query_scalar::<_, i32>("SELECT 1")
                    .fetch_one(&pool)
                    .await
                    .map(|_| json!("reachable"))
                    .map_err(|_| "PostgreSQL is unreachable".to_owned())
            }
        })
        .with("query_nats", move || {
            let state = nats.connection_state();
            async move {
                match state {
                    async_nats::connection::State::Connected => Ok(json!("connected")),
                    other => Err(format!("NATS is {other:?}")),
                }
            }
        })
        .with("query_keys", move || {
            let (loaded, count) = (keys.is_loaded(), keys.len());
            async move {
                if loaded {
                    Ok(json!({ "live_keys": count }))
                } else {
                    Err("the key directory is still loading".to_owned())
                }
            }
        })
}

/// The service bound to its port.
pub struct App(BoundRouter);

impl App {
    /// Builds [`QueryApi`], adds the ops routes and fallbacks, and binds `config.bind_addr`.
    pub async fn build(config: Config, shutdown: CancellationToken) -> anyhow::Result<App> {
        let api = QueryApi::build(&config, shutdown).await?;
        let limits = ServeLimits {
            long_lived_paths: QueryApi::LONG_LIVED_PATHS,
            ..config.common.serve
        };
        BoundRouter::bind(config.bind_addr, api.api, api.readiness, limits)
            .await
            .map(App)
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.0.local_addr()
    }

    /// Serves until `shutdown`, then gives in-flight requests the shutdown deadline
    /// ([`shared::shutdown::SHUTDOWN_DEADLINE`]) to finish.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        self.0
            .run_until_stopped("query-api's in-flight requests", shutdown)
            .await
    }
}
