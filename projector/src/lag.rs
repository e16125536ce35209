//! How far the read models trail the event log: gauges, and the `projector_lag` probe, which
//! fails when the projector has made no progress for a while although messages wait.

use async_nats::jetstream::stream::Stream;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio_util::sync::CancellationToken;

/// How often the lag and parked gauges are refreshed, scraped or not.
const WATCH_EVERY: Duration = Duration::from_secs(5);

/// The last stream sequence committed to PostgreSQL, shared between the consumer and probes.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    applied: Arc<AtomicU64>,
    leader: Arc<AtomicBool>,
    /// When the applied sequence last moved forward (or this instance became the leader).
    progressed_at: Arc<Mutex<Instant>>,
    /// No progress for this long while messages wait counts as stalled.
    stall_after: Duration,
}

impl Progress {
    /// Nothing applied yet; stalled after `stall_after` without progress while lag > 0.
    pub(crate) fn new(stall_after: Duration) -> Progress {
        Progress {
            applied: Arc::default(),
            leader: Arc::default(),
            progressed_at: Arc::new(Mutex::new(Instant::now())),
            stall_after,
        }
    }

    /// Marks this instance as the active projector (or a standby).
    pub(crate) fn set_leader(&self, leader: bool) {
        if leader {
            // A new leader's clock starts now, not when the previous one last committed.
            self.mark_progress();
        }
        self.leader.store(leader, Ordering::Relaxed);
    }

    fn mark_progress(&self) {
        if let Ok(mut at) = self.progressed_at.lock() {
            *at = Instant::now();
        }
    }

    /// How long since the applied sequence last moved forward.
    fn since_progress(&self) -> Duration {
        self.progressed_at
            .lock()
            .map(|at| at.elapsed())
            .unwrap_or_default()
    }

    /// Whether this instance is the active projector.
    pub(crate) fn is_leader(&self) -> bool {
        self.leader.load(Ordering::Relaxed)
    }

    /// The checkpoint as last read or committed.
    pub(crate) fn applied(&self) -> u64 {
        self.applied.load(Ordering::Relaxed)
    }

    /// Records a checkpoint read at start-up or a chunk's commit; `pending` is the number of
    /// log messages after it, when known.
    pub(crate) fn set_applied(&self, sequence: u64, pending: Option<u64>) {
        // Re-reading the same checkpoint on every retry after an outage is not progress.
        if self.applied.swap(sequence, Ordering::Relaxed) < sequence {
            self.mark_progress();
        }
        metrics::gauge!("projector_applied_sequence").set(sequence as f64);
        if let Some(pending) = pending {
            metrics::gauge!("projector_lag_messages").set(pending as f64);
        }
    }
}

/// Compares the stream's last sequence with the applied one. Fails only when the stream
/// cannot be read: a backlog (a replay, a catch-up after an outage) is reported, not fatal,
/// because an unready projector in the all-in-one process would also take ingest out.
///
/// A standby reads the applied position from the checkpoints, since the leader moves them.
pub(crate) async fn measure(
    stream: &Stream,
    progress: &Progress,
    pool: &PgPool,
) -> Result<Value, String> {
    let info = stream
        .get_info()
        .await
        .map_err(|e| format!("cannot read the event stream: {e}"))?;
    let last = info.state.last_sequence;
    let leader = progress.is_leader();
    let (applied, since_progress) = if leader {
        (progress.applied(), progress.since_progress())
    } else {
        // A standby judges the leader by the checkpoints it commits.
        let (applied, idle): (Option<i64>, Option<f64>) = sqlx::query_as(
            "SELECT min(last_sequence),
                    EXTRACT(EPOCH FROM now() - max(updated_at))::float8
             FROM projection_checkpoints",
        )
        .fetch_one(pool)
        .await
        .map_err(|_| "PostgreSQL is unreachable".to_owned())?;
        (
            applied.map_or(0, |applied| applied.max(0) as u64),
            Duration::try_from_secs_f64(idle.unwrap_or(0.0).max(0.0)).unwrap_or_default(),
        )
    };
    let lag = last.saturating_sub(applied);
    metrics::gauge!("projector_lag_messages").set(lag as f64);
    let stalled = lag > 0 && since_progress >= progress.stall_after;
    metrics::gauge!("projector_stalled").set(if stalled { 1.0 } else { 0.0 });
    let seconds_behind = if lag == 0 {
        Some(0.0)
    } else {
        // The age of the oldest message not yet applied: how stale the read models are.
        stream
            .get_raw_message(applied + 1)
            .await
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m.time.into()).ok())
            .map(|age| age.as_secs_f64())
    };
    metrics::gauge!("projector_oldest_unapplied_age_seconds").set(seconds_behind.unwrap_or(0.0));
    let since_progress = since_progress.as_secs_f64();
    if stalled {
        return Err(format!(
            "stalled: no progress for {since_progress:.0} s (PROJECTOR_STALL_SECONDS is {}) \
             while {lag} log messages wait after sequence {applied}; the oldest is {} s old",
            progress.stall_after.as_secs(),
            seconds_behind.map_or("?".to_owned(), |s| format!("{s:.0}")),
        ));
    }
    Ok(json!({
        "role": if leader { "leader" } else { "standby" },
        "seconds_since_progress": if lag == 0 { 0.0 } else { since_progress },
        "stream_last_sequence": last,
        "applied_sequence": applied,
        "lag_messages": lag,
        "seconds_behind": seconds_behind,
    }))
}

/// Refreshes the lag and parked gauges every few seconds until `shutdown`, so `/metrics` shows
/// a stuck or drifting projector even when nobody probes `/readyz`.
pub(crate) async fn watch(
    stream: &Stream,
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
        if let Err(reason) = measure(stream, progress, pool).await {
            tracing::debug!(%reason, "projector lag");
        }
        if let Err(error) = crate::parked::refresh_gauge(pool).await {
            tracing::debug!(%error, "cannot count the parked messages");
        }
    }
}
