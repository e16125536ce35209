//! Sending the history through the SDK: paced under the plugin quota, with progress lines,
//! once per account (a marker file records that it was done).

use super::{batches, plan, world_size};
use crate::activity::Batch;
use crate::records::endpoint;
use crate::send::send_batch;
use crate::stats::{Snapshot, Stats};
use crate::world::World;
use chrono::{DateTime, Utc};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use warden_sdk::PluginClient;

/// Requests per minute the backfill allows itself: half the plugin quota (contract §4,
/// 1,000 a minute per key), so the live fleet and a real plugin on the key keep the rest.
const REQUESTS_PER_MINUTE: u32 = 500;
/// How often a progress line is printed, at most.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// What to backfill: the fleet's network and how far back.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The world seed (the same network as the live fleet).
    pub world_seed: u64,
    /// Servers in the network.
    pub servers: usize,
    /// Players of the live network (the history adds the players who came and went).
    pub players: usize,
    /// Days before today.
    pub days: u32,
}

/// Backfills `spec` unless `marker` exists; creates `marker` once everything was stored.
/// Returns the totals when it sent anything.
pub async fn run_once(
    client: &PluginClient,
    spec: Spec,
    marker: Option<&Path>,
    stop: &CancellationToken,
) -> anyhow::Result<Option<Snapshot>> {
    if let Some(marker) = marker
        && marker.exists()
    {
        tracing::info!(marker = %marker.display(), "history: already backfilled, skipping");
        return Ok(None);
    }
    let totals = backfill(client, spec, Utc::now(), stop).await;
    if stop.is_cancelled() {
        tracing::warn!("history: interrupted; the next start sends it again");
    } else if !totals.clean() {
        tracing::warn!(
            "history: not everything was stored ({}); the next start sends it again",
            totals.summary()
        );
    } else if let Some(marker) = marker {
        let line = format!(
            "{} days backfilled at {}\n",
            spec.days,
            Utc::now().to_rfc3339()
        );
        std::fs::write(marker, line)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", marker.display()))?;
    }
    Ok(Some(totals))
}

/// Sends the `spec.days` days of history before `now`'s UTC day; stops early on `stop`.
pub async fn backfill(
    client: &PluginClient,
    spec: Spec,
    now: DateTime<Utc>,
    stop: &CancellationToken,
) -> Snapshot {
    let size = world_size(spec.players, spec.days, now.date_naive());
    let world = World::grown(spec.world_seed, spec.servers, spec.players, size);
    let plan = plan(&world, spec.players, spec.days, now, spec.world_seed);
    let history = batches(&world, &plan, spec.world_seed);
    let total = history.records();
    tracing::info!(
        days = spec.days,
        from = %plan.start.date_naive(),
        players = plan.first_days.iter().flatten().count(),
        sessions = plan.sessions.len(),
        records = total,
        "history: backfilling"
    );
    let started = Instant::now();
    let stats = Stats::default();
    let mut pace = tokio::time::interval(Duration::from_secs(60) / REQUESTS_PER_MINUTE);
    let mut sent = 0;
    let mut reported = Instant::now();
    // Sessions first and strictly one after another (see `History::sessions`).
    for batch in history.sessions.into_iter().chain(history.rest) {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = pace.tick() => {}
        }
        sent += batch.records.len();
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = send(client, &stats, batch) => {}
        }
        if reported.elapsed() >= PROGRESS_EVERY {
            reported = Instant::now();
            tracing::info!("history: {sent}/{total} records sent");
        }
    }
    let totals = stats.snapshot();
    tracing::info!(
        seconds = started.elapsed().as_secs(),
        "history: {sent}/{total} records sent: {}",
        totals.summary()
    );
    totals
}

async fn send(client: &PluginClient, stats: &Stats, Batch { kind, records }: Batch) {
    let count = records.len();
    let path = endpoint(kind).unwrap_or("(no plugin endpoint)");
    let result = send_batch(client, kind, records).await;
    match &result {
        Ok(outcome) if !outcome.rejected.is_empty() => {
            let rejected = serde_json::to_string(&outcome.rejected).unwrap_or_default();
            tracing::warn!(path, %rejected, "history: the service rejected some records");
        }
        Ok(_) => {}
        Err(error) => tracing::error!(path, records = count, %error, "history: write failed"),
    }
    stats.record(kind, count, &result);
}
