//! Player erasures: whether and when a player was erased (`erased_players`, written
//! by the projector's `erasure` model), for the erase request and the pages.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

/// When `player` of `account` was (first) erased, if they were.
pub async fn erased_at(
    executor: impl PgExecutor<'_>,
    account: Uuid,
    player: Uuid,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT erased_at FROM erased_players WHERE account_id = $1 AND player_uuid = $2",
    )
    .bind(account)
    .bind(player)
    .fetch_optional(executor)
    .await
}

/// Whether the account has seen `player`, or erased them (an erased player keeps a `players`
/// row, but this holds for a rebuild that has not reached their first record yet too).
pub async fn known_or_erased(
    executor: impl PgExecutor<'_>,
    account: Uuid,
    player: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)
             OR EXISTS (SELECT 1 FROM erased_players WHERE account_id = $1 AND player_uuid = $2)",
    )
    .bind(account)
    .bind(player)
    .fetch_one(executor)
    .await
}
