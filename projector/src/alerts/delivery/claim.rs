//! The outbox in SQL: claiming due deliveries under a lease, and recording what an attempt did.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use uuid::Uuid;

/// A delivery claimed for one attempt, with what is needed to send it.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Claimed {
    pub(crate) id: Uuid,
    pub(crate) destination_id: Uuid,
    /// This attempt's number (1 for the first); also the fencing token of the lease: the
    /// outcome is recorded only while the row still carries it.
    pub(crate) attempt: i32,
    pub(crate) event_type: String,
    pub(crate) payload: Value,
    pub(crate) occurred_at: DateTime<Utc>,
    /// `webhook` or `discord`.
    pub(crate) kind: String,
    pub(crate) url: String,
    pub(crate) secret_sealed: Option<Vec<u8>>,
    pub(crate) previous_secret_sealed: Option<Vec<u8>>,
    pub(crate) previous_secret_expires_at: Option<DateTime<Utc>>,
}

/// Claims up to `limit` due deliveries of enabled destinations, oldest due first, leasing each
/// for `lease` and counting the attempt.
///
/// `FOR UPDATE ... SKIP LOCKED` lets any number of workers (and notifier replicas) claim at
/// once without waiting on each other or taking the same row; the lease (not the row lock,
/// which ends with this statement) keeps the row theirs while the request is in flight, and
/// runs out by itself if the worker dies.
pub(crate) async fn claim(
    pool: &PgPool,
    limit: usize,
    lease: Duration,
) -> sqlx::Result<Vec<Claimed>> {
    sqlx::query_as::<_, Claimed>(
        "UPDATE alert_deliveries d
            SET locked_until = now() + make_interval(secs => $2),
                attempts = d.attempts + 1
           FROM alert_destinations t
          WHERE t.id = d.destination_id
            AND d.id IN (
                SELECT due.id
                  FROM alert_deliveries due
                  JOIN alert_destinations dest ON dest.id = due.destination_id
                 WHERE due.status = 'pending'
                   AND due.next_attempt_at <= now()
                   AND (due.locked_until IS NULL OR due.locked_until < now())
                   AND dest.enabled
                 ORDER BY due.next_attempt_at
                 LIMIT $1
                   FOR UPDATE OF due SKIP LOCKED)
      RETURNING d.id, d.destination_id, d.attempts AS attempt, d.event_type, d.payload,
                d.occurred_at, t.kind, t.url, t.secret_sealed, t.previous_secret_sealed,
                t.previous_secret_expires_at",
    )
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .bind(lease.as_secs_f64())
    .fetch_all(pool)
    .await
}

/// What one attempt did, as the delivery log shows it.
#[derive(Debug)]
pub(crate) struct AttemptRecord {
    pub(crate) attempted_at: DateTime<Utc>,
    pub(crate) duration: Duration,
    pub(crate) status_code: Option<u16>,
    /// Why it failed, for people; never holds a URL or a secret.
    pub(crate) error: Option<String>,
}

/// Where a delivery stands after an attempt was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    Delivered,
    /// Pending, to be tried again.
    Retrying,
    /// Given up: `give_up_at` has passed.
    Failed,
    /// The lease had run out and another worker claimed the delivery again: this attempt's
    /// outcome is in the attempt log only, the newer claim decides the row.
    Superseded,
}

impl Standing {
    /// The `outcome` label of `notifier_deliveries_total`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Standing::Delivered => "delivered",
            Standing::Retrying => "retrying",
            Standing::Failed => "failed",
            Standing::Superseded => "superseded",
        }
    }
}

/// Appends the attempt to the delivery's log and moves the delivery on: `delivered`, or
/// pending again after `retry_in` (never past `give_up_at`, so the last try happens right
/// then), or `failed` once `give_up_at` has passed. `retry_in` is `None` for a success.
pub(crate) async fn record(
    conn: &mut PgConnection,
    claimed: &Claimed,
    attempt: &AttemptRecord,
    retry_in: Option<Duration>,
) -> sqlx::Result<Standing> {
    let duration_ms = i32::try_from(attempt.duration.as_millis()).unwrap_or(i32::MAX);
    let status_code = attempt.status_code.map(i32::from);
    // A second outcome for the same attempt number cannot happen (each claim counts one up);
    // DO NOTHING keeps a replayed record harmless all the same.
    sqlx::query(
        "INSERT INTO alert_delivery_attempts
             (delivery_id, attempt, attempted_at, status_code, duration_ms, error)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING",
    )
    .bind(claimed.id)
    .bind(claimed.attempt)
    .bind(attempt.attempted_at)
    .bind(status_code)
    .bind(duration_ms)
    .bind(attempt.error.as_deref())
    .execute(&mut *conn)
    .await?;

    let status: Option<String> = sqlx::query_scalar(
        "UPDATE alert_deliveries
            SET status = CASE
                    WHEN $6 THEN 'delivered'
                    WHEN now() >= give_up_at THEN 'failed'
                    ELSE 'pending' END,
                delivered_at = CASE WHEN $6 THEN now() ELSE delivered_at END,
                next_attempt_at = CASE
                    WHEN $6 THEN next_attempt_at
                    ELSE LEAST(now() + make_interval(secs => $7), give_up_at) END,
                locked_until = NULL,
                last_attempt_at = $3,
                last_status_code = $4,
                last_duration_ms = $5,
                last_error = $8
          WHERE id = $1 AND attempts = $2 AND status = 'pending'
      RETURNING status",
    )
    .bind(claimed.id)
    .bind(claimed.attempt)
    .bind(attempt.attempted_at)
    .bind(status_code)
    .bind(duration_ms)
    .bind(retry_in.is_none())
    .bind(retry_in.unwrap_or_default().as_secs_f64())
    .bind(attempt.error.as_deref())
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match status.as_deref() {
        Some("delivered") => Standing::Delivered,
        Some("failed") => Standing::Failed,
        Some(_) => Standing::Retrying,
        None => Standing::Superseded,
    })
}
