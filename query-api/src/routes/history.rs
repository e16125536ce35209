//! What the per-player history lists (punishments, flags, chatlog) share: the "has this
//! account seen the player" check, and keyset paging with `?limit` and `?cursor`.

use crate::error::ApiError;
use sqlx::PgPool;
use uuid::Uuid;

pub use super::paging::{DEFAULT_LIMIT, MAX_LIMIT};

/// Where a history page ends: the last item's time and id.
pub type HistoryCursor = super::paging::KeysetCursor<Uuid>;

/// `?limit` and `?cursor` of a history list (parsed, bound and cut by [`super::paging`]).
pub type PageRequest = super::paging::PageRequest<Uuid>;

/// A 404 unless the account has seen the player (it has a `players` row).
pub async fn require_player(pool: &PgPool, account_id: Uuid, player: Uuid) -> Result<(), ApiError> {
    let seen = sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)",
    )
    .bind(account_id)
    .bind(player)
    .fetch_one(pool)
    .await?;
    if seen {
        Ok(())
    } else {
        Err(player_not_found(player))
    }
}

/// The 404 for a player the account has never seen.
pub fn player_not_found(player: Uuid) -> ApiError {
    ApiError::NotFound(format!("no player {player} has been seen on this account"))
}
