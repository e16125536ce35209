//! The run loop: tick the simulation, send what it made, report, and say goodbye on shutdown.

use crate::activity::{Batch, Simulation};
use crate::config::Config;
use crate::history;
use crate::records::endpoint;
use crate::send::send_batch;
use crate::stats::{Snapshot, Stats};
use crate::world::{DEFAULT_WORLD_SEED, World};
use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use warden_sdk::PluginClient;

/// Simulated time per tick; a stalled tick slows the simulation rather than bunching it up.
const TICK: Duration = Duration::from_secs(1);
/// How often the one-line summary is printed.
const SUMMARY_EVERY: Duration = Duration::from_secs(10);
/// How long the goodbye (quits and offline heartbeats) may take on shutdown.
const GOODBYE_DEADLINE: Duration = Duration::from_secs(20);
/// Requests in flight at once.
const MAX_IN_FLIGHT: usize = 16;

/// Runs the fleet until `shutdown` is cancelled or `--duration-secs` elapses; returns the totals.
pub async fn run(config: Config, shutdown: CancellationToken) -> anyhow::Result<Snapshot> {
    let client = PluginClient::new(&config.base_url, &config.plugin_key)?;
    let world = World::generate(
        config.seed.unwrap_or(DEFAULT_WORLD_SEED),
        config.servers as usize,
        config.players as usize,
    );
    let names: Vec<&str> = world
        .servers
        .iter()
        .take(12)
        .map(|s| s.name.as_str())
        .collect();
    tracing::info!(
        base_url = %config.base_url,
        servers = world.servers.len(),
        players = world.players.len(),
        staff = world.staff().count(),
        speed = config.speed,
        sync_interval_secs = config.sync_interval_secs,
        "fleet starting: {}{}",
        names.join(", "),
        if world.servers.len() > names.len() { ", ..." } else { "" },
    );
    let mut sim = Simulation::new(world, config.seed, config.speed, config.sync_interval_secs);
    let sender = Sender {
        client,
        stats: Arc::new(Stats::default()),
        permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
    };

    let stop = shutdown.child_token();
    if config.history_days > 0 {
        // Before the live network: the backfill is over in seconds at demo sizes, and the
        // live fleet's sessions then come after every past one in the log.
        let spec = history::Spec {
            world_seed: config.seed.unwrap_or(DEFAULT_WORLD_SEED),
            servers: config.servers as usize,
            players: config.players as usize,
            days: config.history_days,
        };
        history::run_once(
            &sender.client,
            spec,
            config.history_marker.as_deref(),
            &stop,
        )
        .await?;
        if stop.is_cancelled() {
            return Ok(Snapshot::default());
        }
    }
    if let Some(duration) = config.duration() {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(duration) => {
                    tracing::info!(seconds = duration.as_secs(), "duration elapsed");
                    stop.cancel();
                }
                _ = stop.cancelled() => {}
            }
        });
    }
    let reporter = tokio::spawn(report_every(
        SUMMARY_EVERY,
        sender.stats.clone(),
        stop.clone(),
    ));

    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticker.tick().await;
    let mut batches = sim.start(Utc::now());
    loop {
        sender.stats.set_online(sim.online_players());
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = sender.send_all(batches) => {}
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = ticker.tick() => {}
        }
        batches = sim.tick(TICK.as_secs_f64(), Utc::now());
    }
    stop.cancel();

    let goodbye = sim.shutdown(Utc::now());
    sender.stats.set_online(0);
    tracing::info!("shutting down: quitting sessions and sending offline heartbeats");
    if tokio::time::timeout(GOODBYE_DEADLINE, sender.send_all(goodbye))
        .await
        .is_err()
    {
        tracing::warn!(
            seconds = GOODBYE_DEADLINE.as_secs(),
            "goodbye did not finish in time"
        );
    }
    let _ = reporter.await;
    let totals = sender.stats.snapshot();
    tracing::info!("fleet stopped: {}", totals.summary());
    Ok(totals)
}

/// Prints the summary line every `every` until `stop`.
async fn report_every(every: Duration, stats: Arc<Stats>, stop: CancellationToken) {
    let mut ticker = tokio::time::interval(every);
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = ticker.tick() => tracing::info!("{}", stats.snapshot().summary()),
        }
    }
}

/// Sends batches concurrently (bounded), counting and logging every outcome.
struct Sender {
    client: PluginClient,
    stats: Arc<Stats>,
    permits: Arc<Semaphore>,
}

impl Sender {
    /// Sends every batch and waits for all of them; dropping the future abandons the rest.
    async fn send_all(&self, batches: Vec<Batch>) {
        let mut tasks = JoinSet::new();
        for Batch { kind, records } in batches {
            let (client, stats, permits) = (
                self.client.clone(),
                self.stats.clone(),
                self.permits.clone(),
            );
            tasks.spawn(async move {
                let Ok(_permit) = permits.acquire_owned().await else {
                    return;
                };
                let count = records.len();
                let path = endpoint(kind).unwrap_or("(no plugin endpoint)");
                let result = send_batch(&client, kind, records).await;
                match &result {
                    Ok(outcome) if !outcome.rejected.is_empty() => {
                        let rejected = serde_json::to_string(&outcome.rejected).unwrap_or_default();
                        tracing::warn!(path, %rejected, "the service rejected some records");
                    }
                    Ok(_) => {}
                    Err(error) => tracing::error!(path, records = count, %error, "write failed"),
                }
                stats.record(kind, count, &result);
            });
        }
        while let Some(joined) = tasks.join_next().await {
            if let Err(error) = joined {
                tracing::error!(%error, "a send task failed");
            }
        }
    }
}
