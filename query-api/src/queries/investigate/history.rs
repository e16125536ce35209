//! A player's names over time and rank history, and capped counts of their rows.

use super::{Bounded, COUNT_CAP, SECTION_ITEMS};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// A name the player has been seen with.
#[derive(Debug, sqlx::FromRow)]
pub struct PastName {
    /// The name.
    pub name: String,
    /// The first record that carried it.
    pub first_seen: DateTime<Utc>,
    /// The latest record that carried it.
    pub last_seen: DateTime<Utc>,
}

/// One change of the player's permission group (a `rank_change` timeline event).
#[derive(Debug, sqlx::FromRow)]
pub struct RankChangeItem {
    /// When it changed.
    pub at: DateTime<Utc>,
    /// `add`, `remove` or `set`.
    pub action: Option<String>,
    /// The group.
    pub group_name: Option<String>,
    /// The group before.
    pub previous_group: Option<String>,
    /// Who changed it (their name as the plugin sent it); none for the console.
    pub staff_name: Option<String>,
    /// When a temporary group ends.
    pub expires_at: Option<String>,
}

/// The player's names, latest first (the players read model's `player_names`).
pub async fn names(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
) -> Result<Bounded<PastName>, sqlx::Error> {
    // A player has a handful of names: the primary key range is read whole.
    let rows: Vec<(String, DateTime<Utc>, DateTime<Utc>, i64)> = sqlx::query_as(
        "SELECT name, first_seen, last_seen, count(*) OVER () FROM player_names \
         WHERE account_id = $1 AND player_uuid = $2 \
         ORDER BY last_seen DESC, name LIMIT $3",
    )
    .bind(account)
    .bind(player)
    .bind(i64::try_from(SECTION_ITEMS).unwrap_or(10))
    .fetch_all(pool)
    .await?;
    let total = rows.first().map_or(0, |row| row.3);
    let items = rows
        .into_iter()
        .map(|(name, first_seen, last_seen, _)| PastName {
            name,
            first_seen,
            last_seen,
        })
        .collect();
    Ok(Bounded::new(items, SECTION_ITEMS, total))
}

/// The player's rank changes, newest first: the timeline's internal `rank_change` events
/// (the players row keeps only the current and previous group).
pub async fn rank_changes(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
) -> Result<Bounded<RankChangeItem>, sqlx::Error> {
    // events_account_player_time_incl_idx carries the name: the player's events are one
    // index range, filtered by name without reading the rows it skips.
    let items = sqlx::query_as::<_, RankChangeItem>(
        "SELECT occurred_at AS at, properties->>'action' AS action, \
           properties->>'group' AS group_name, properties->>'previous_group' AS previous_group, \
           properties->>'staff_name' AS staff_name, properties->>'expires_at' AS expires_at \
         FROM events WHERE account_id = $1 AND player_uuid = $2 AND name = 'rank_change' \
         ORDER BY occurred_at DESC, seq DESC LIMIT $3",
    )
    .bind(account)
    .bind(player)
    .bind(i64::try_from(SECTION_ITEMS).unwrap_or(10))
    .fetch_all(pool)
    .await?;
    let total = if items.len() < SECTION_ITEMS {
        i64::try_from(items.len()).unwrap_or(0)
    } else {
        sqlx::query_scalar(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM events WHERE account_id = $1 \
               AND player_uuid = $2 AND name = 'rank_change' LIMIT {COUNT_CAP}) c"
        ))
        .bind(account)
        .bind(player)
        .fetch_one(pool)
        .await?
    };
    Ok(Bounded::new(items, SECTION_ITEMS, total))
}

/// Tables counted per player by [`count`], each with its `(account_id, player_uuid, ...)`
/// index.
const COUNTED: [&str; 3] = ["sessions", "punishments", "chat_messages"];

/// How many rows of `table` (one of [`COUNTED`]) are about the player, up to [`COUNT_CAP`].
pub async fn count(
    pool: &PgPool,
    table: &'static str,
    account: Uuid,
    player: Uuid,
) -> Result<i64, sqlx::Error> {
    debug_assert!(COUNTED.contains(&table), "{table} has no player index");
    sqlx::query_scalar(&format!(
        "SELECT count(*) FROM (SELECT 1 FROM {table} \
           WHERE account_id = $1 AND player_uuid = $2 LIMIT {COUNT_CAP}) c"
    ))
    .bind(account)
    .bind(player)
    .fetch_one(pool)
    .await
}
