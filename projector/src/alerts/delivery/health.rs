//! A destination's health: when it last worked, since when it has been failing, and disabling
//! it once it has failed for too long (or said it is gone).
//!
//! Disabling pauses its pending deliveries (the claim skips disabled destinations) rather than
//! failing them: an admin who fixes the endpoint and enables it again gets what was waiting,
//! as long as it is still within its `give_up_at`.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use std::time::Duration;
use uuid::Uuid;

/// How an attempt at the destination went, as far as its health is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Health {
    /// A 2xx answer.
    Working,
    /// Anything else: an error answer, a timeout, a refused connection or address.
    Failing,
    /// `410 Gone`: the receiver says the endpoint no longer exists.
    Gone,
}

/// Records a success (clears `failing_since`) or a failure (starts `failing_since` if this is
/// the first of a run); disables the destination after `disable_after` of continuous failure,
/// or at once when it is gone. Returns the reason when this call disabled it.
pub(crate) async fn update(
    conn: &mut PgConnection,
    destination_id: Uuid,
    attempted_at: DateTime<Utc>,
    health: Health,
    disable_after: Duration,
) -> sqlx::Result<Option<String>> {
    if health == Health::Working {
        sqlx::query(
            "UPDATE alert_destinations
                SET failing_since = NULL, last_success_at = GREATEST(last_success_at, $2)
              WHERE id = $1",
        )
        .bind(destination_id)
        .bind(attempted_at)
        .execute(&mut *conn)
        .await?;
        return Ok(None);
    }
    let hours = disable_after.as_secs() / 3600;
    let gone = health == Health::Gone;
    // One statement decides and disables, so two workers failing at once cannot both think
    // they disabled it (only the one that flipped `enabled` gets a row back).
    let disabled: Option<String> = sqlx::query_scalar(
        "UPDATE alert_destinations
            SET failing_since = COALESCE(failing_since, $2),
                enabled = false,
                disabled_at = now(),
                disabled_reason = CASE WHEN $3
                    THEN 'the endpoint answered 410 Gone'
                    ELSE format('every delivery failed for %s hours', $4::bigint) END,
                updated_at = now()
          WHERE id = $1
            AND enabled
            AND ($3 OR COALESCE(failing_since, $2) <= now() - make_interval(secs => $5))
      RETURNING disabled_reason",
    )
    .bind(destination_id)
    .bind(attempted_at)
    .bind(gone)
    .bind(i64::try_from(hours).unwrap_or(i64::MAX))
    .bind(disable_after.as_secs_f64())
    .fetch_optional(&mut *conn)
    .await?;
    if disabled.is_none() {
        sqlx::query(
            "UPDATE alert_destinations SET failing_since = COALESCE(failing_since, $2)
              WHERE id = $1",
        )
        .bind(destination_id)
        .bind(attempted_at)
        .execute(&mut *conn)
        .await?;
    }
    Ok(disabled)
}
