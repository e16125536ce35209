//! How far the read models trail the event log, partition by partition: gauges, and the
//! `projector_lag` probe, which fails when a partition has made no progress for a while
//! although messages of it wait.
//!
//! A partition is behind when the stream holds a message of it past its lowest checkpoint
//! ([`shared::nats::partition_heads`]): an idle partition with an old checkpoint is not behind, so a
//! quiet partition never reads as lag or as a stall. Every process judges every partition
//! from the checkpoints in PostgreSQL; the partitions it holds itself also count from when it
//! took them (a new holder is not blamed for its predecessor's silence).

use crate::checkpoint::Partition;
use crate::projections;
use async_nats::jetstream::stream::Stream;
use serde_json::{Value, json};
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio_util::sync::CancellationToken;

/// How often the lag and parked gauges are refreshed, scraped or not.
const WATCH_EVERY: Duration = Duration::from_secs(5);

/// The partitions this process holds, shared between their consumers and the probes.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    held: Arc<Mutex<BTreeMap<Partition, Held>>>,
    /// No progress for this long while messages wait counts as stalled.
    stall_after: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    /// When this process took the partition.
    since: Instant,
    /// The partition's log messages after the last chunk it committed, when known.
    pending: Option<u64>,
}

impl Progress {
    /// Holds nothing yet; a partition is stalled after `stall_after` without progress.
    pub(crate) fn new(stall_after: Duration) -> Progress {
        Progress {
            held: Arc::default(),
            stall_after,
        }
    }

    fn with_held<T>(&self, f: impl FnOnce(&mut BTreeMap<Partition, Held>) -> T) -> Option<T> {
        let mut held = self.held.lock().ok()?;
        let result = f(&mut held);
        let count = held.len();
        metrics::gauge!("projector_partitions_held").set(count as f64);
        metrics::gauge!("projector_leader").set(if count > 0 { 1.0 } else { 0.0 });
        Some(result)
    }

    /// This process took `partition`: its clock starts now.
    pub(crate) fn took(&self, partition: Partition) {
        let held = Held {
            since: Instant::now(),
            pending: None,
        };
        self.with_held(|map| map.insert(partition, held));
    }

    /// This process let `partition` go.
    pub(crate) fn released(&self, partition: Partition) {
        self.with_held(|map| map.remove(&partition));
        let label = partition.to_string();
        metrics::gauge!("projector_partition_lag_messages", "partition" => label).set(0.0);
    }

    /// The partitions this process holds.
    pub(crate) fn held(&self) -> Vec<Partition> {
        self.with_held(|map| map.keys().copied().collect())
            .unwrap_or_default()
    }

    /// Whether this process holds any partition.
    pub(crate) fn is_leader(&self) -> bool {
        !self.held().is_empty()
    }

    /// Records a chunk of `partition` committed up to `sequence`, with `pending` of its
    /// messages after it (when known).
    pub(crate) fn committed(&self, partition: Partition, sequence: u64, pending: Option<u64>) {
        self.with_held(|map| {
            if let Some(held) = map.get_mut(&partition) {
                held.pending = pending;
            }
        });
        let label = partition.to_string();
        metrics::gauge!("projector_partition_applied_sequence", "partition" => label.clone())
            .set(sequence as f64);
        if let Some(pending) = pending {
            metrics::gauge!("projector_partition_lag_messages", "partition" => label)
                .set(pending as f64);
        }
    }

    fn held_one(&self, partition: Partition) -> Option<Held> {
        self.with_held(|map| map.get(&partition).copied()).flatten()
    }
}

/// One partition as the probe sees it.
struct Seen {
    partition: Partition,
    applied: u64,
    lag: u64,
    since_progress: Duration,
    seconds_behind: Option<f64>,
    held: bool,
}

/// Reads every partition's lowest checkpoint, and how long ago it last moved, in partition
/// order (partitions without rows read as 0, never moved).
async fn checkpoints(pool: &PgPool, partitions: u16) -> Result<Vec<(u64, Duration)>, String> {
    let rows: Vec<(i32, i64, f64)> = sqlx::query_as(
        "SELECT DISTINCT ON (log_partition) log_partition, last_sequence,
                EXTRACT(EPOCH FROM now() - updated_at)::float8
         FROM projection_checkpoints WHERE projection = ANY($1) AND log_partition >= 0
         ORDER BY log_partition, last_sequence, updated_at DESC",
    )
    .bind(projections::checkpoint_names())
    .fetch_all(pool)
    .await
    .map_err(|_| "PostgreSQL is unreachable".to_owned())?;
    Ok((0..i32::from(partitions))
        .map(|k| {
            rows.iter()
                .find(|(partition, _, _)| *partition == k)
                .map_or((0, Duration::MAX), |(_, last, idle)| {
                    let idle = Duration::try_from_secs_f64(idle.max(0.0)).unwrap_or_default();
                    (u64::try_from(*last).unwrap_or(0), idle)
                })
        })
        .collect())
}

/// Compares each partition's last message with its checkpoints. Fails only when the stream
/// or PostgreSQL cannot be read, or a partition is stalled: a backlog (a replay, a catch-up
/// after an outage) is reported, not fatal, because an unready projector in the all-in-one
/// process would also take ingest out.
pub(crate) async fn measure(
    stream: &Stream,
    subjects: &Subjects,
    progress: &Progress,
    pool: &PgPool,
) -> Result<Value, String> {
    let unreadable = |e: anyhow::Error| format!("cannot read the event stream: {e:#}");
    let last = stream
        .get_info()
        .await
        .map_err(|e| format!("cannot read the event stream: {e}"))?
        .state
        .last_sequence;
    let ends = shared::nats::partition_heads(stream, subjects)
        .await
        .map_err(unreadable)?;
    let checkpoints = checkpoints(pool, subjects.partitions()).await?;
    let mut seen = Vec::with_capacity(ends.len());
    for (partition, (end, (applied, idle))) in (0..).zip(ends.into_iter().zip(checkpoints)) {
        let held = progress.held_one(partition);
        let behind = end > applied;
        let lag = match (behind, held) {
            (false, _) => 0,
            // Counted by the consumer (at least 1: the partition is behind).
            (true, Some(held)) => held.pending.unwrap_or(0).max(1),
            // Another process's partition: an upper bound, in stream sequences.
            (true, None) => end - applied,
        };
        let since_progress = held.map_or(idle, |held| idle.min(held.since.elapsed()));
        let seconds_behind = if behind {
            oldest_age(stream, subjects, partition, applied).await
        } else {
            Some(0.0)
        };
        seen.push(Seen {
            partition,
            applied,
            lag,
            since_progress: if behind {
                since_progress
            } else {
                Duration::ZERO
            },
            seconds_behind,
            held: held.is_some(),
        });
    }
    report(progress, last, &seen)
}

/// The age of the oldest message of `partition` after `applied`.
async fn oldest_age(
    stream: &Stream,
    subjects: &Subjects,
    partition: Partition,
    applied: u64,
) -> Option<f64> {
    let mut oldest: Option<(u64, SystemTime)> = None;
    for filter in subjects.partition_events(partition) {
        let first = stream.get_first_raw_message_by_subject(&filter, applied + 1);
        if let Ok(message) = first.await
            && oldest.is_none_or(|(sequence, _)| message.sequence < sequence)
        {
            oldest = Some((message.sequence, message.time.into()));
        }
    }
    let (_, time) = oldest?;
    SystemTime::now()
        .duration_since(time)
        .ok()
        .map(|age| age.as_secs_f64())
}

/// Sets the gauges from what was seen, and fails on the first stalled partition.
fn report(progress: &Progress, last: u64, seen: &[Seen]) -> Result<Value, String> {
    let lag: u64 = seen.iter().map(|s| s.lag).sum();
    metrics::gauge!("projector_lag_messages").set(lag as f64);
    let applied = seen.iter().map(|s| s.applied).min().unwrap_or(0);
    metrics::gauge!("projector_applied_sequence").set(applied as f64);
    let oldest = seen
        .iter()
        .filter_map(|s| s.seconds_behind)
        .fold(0.0, f64::max);
    metrics::gauge!("projector_oldest_unapplied_age_seconds").set(oldest);
    let stalled = seen
        .iter()
        .find(|s| s.lag > 0 && s.since_progress >= progress.stall_after);
    metrics::gauge!("projector_stalled").set(if stalled.is_some() { 1.0 } else { 0.0 });
    if let Some(s) = stalled {
        return Err(format!(
            "partition {} stalled: no progress for {:.0} s (PROJECTOR_STALL_SECONDS is {}) \
             while {} log messages wait after sequence {}; the oldest is {} s old",
            s.partition,
            s.since_progress.as_secs_f64(),
            progress.stall_after.as_secs(),
            s.lag,
            s.applied,
            s.seconds_behind
                .map_or("?".to_owned(), |age| format!("{age:.0}")),
        ));
    }
    let since_progress = seen
        .iter()
        .filter(|s| s.lag > 0)
        .map(|s| s.since_progress.as_secs_f64())
        .fold(0.0, f64::max);
    let partitions: Vec<Value> = seen
        .iter()
        .map(|s| {
            json!({
                "partition": s.partition,
                "held_here": s.held,
                "applied_sequence": s.applied,
                "lag_messages": s.lag,
                "seconds_behind": s.seconds_behind,
            })
        })
        .collect();
    Ok(json!({
        "role": if progress.is_leader() { "leader" } else { "standby" },
        "held_partitions": progress.held(),
        "seconds_since_progress": since_progress,
        "stream_last_sequence": last,
        "applied_sequence": applied,
        "lag_messages": lag,
        "seconds_behind": oldest,
        "partitions": partitions,
    }))
}

/// Refreshes the lag and parked gauges every few seconds until `shutdown`, so `/metrics` shows
/// a stuck or drifting projector even when nobody probes `/readyz`.
pub(crate) async fn watch(
    stream: &Stream,
    subjects: &Subjects,
    progress: &Progress,
    pool: &PgPool,
    shutdown: &CancellationToken,
) {
    let mut every = tokio::time::interval(WATCH_EVERY);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = every.tick() => {}
        }
        if let Err(reason) = measure(stream, subjects, progress, pool).await {
            tracing::debug!(%reason, "projector lag");
        }
        if let Err(error) = crate::parked::refresh_gauge(pool).await {
            tracing::debug!(%error, "cannot count the parked messages");
        }
    }
}
