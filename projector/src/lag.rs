//! How far the read models trail the event log: gauges, and the `projector_lag` probe.

use async_nats::jetstream::stream::Stream;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

/// The last stream sequence committed to PostgreSQL, shared between the consumer and probes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Progress {
    applied: Arc<AtomicU64>,
    leader: Arc<AtomicBool>,
}

impl Progress {
    /// Marks this instance as the active projector (or a standby).
    pub(crate) fn set_leader(&self, leader: bool) {
        self.leader.store(leader, Ordering::Relaxed);
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
        self.applied.store(sequence, Ordering::Relaxed);
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
    let applied = if leader {
        progress.applied()
    } else {
        sqlx::query_scalar::<_, Option<i64>>(
            "SELECT min(last_sequence) FROM projection_checkpoints",
        )
        .fetch_one(pool)
        .await
        .map_err(|_| "PostgreSQL is unreachable".to_owned())?
        .map_or(0, |applied| applied.max(0) as u64)
    };
    let lag = last.saturating_sub(applied);
    metrics::gauge!("projector_lag_messages").set(lag as f64);
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
    Ok(json!({
        "role": if leader { "leader" } else { "standby" },
        "stream_last_sequence": last,
        "applied_sequence": applied,
        "lag_messages": lag,
        "seconds_behind": seconds_behind,
    }))
}
