//! What the dashboard's punish and revoke forms read: the player's name, and the punishment a
//! revoke names with what the revoke record copies from it.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The player's latest name: `None` when the account has never seen the player, `Some(None)`
/// when it has but knows no name (an erased player).
pub async fn player_name(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
) -> Result<Option<Option<String>>, sqlx::Error> {
    sqlx::query_scalar::<_, Option<String>>(
        "SELECT username FROM players WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account_id)
    .bind(player)
    .fetch_optional(pool)
    .await
}

/// A punishment as a revoke needs it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RevokeTarget {
    /// The punishment's id.
    pub id: Uuid,
    /// Its player.
    pub player_uuid: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    #[sqlx(rename = "type")]
    pub punishment_type: String,
    /// When it was issued.
    pub issued_at: DateTime<Utc>,
    /// When it ends; None: permanent.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Whether it is in force now.
    pub is_active: bool,
    /// The plugin that issued it (`warden` for the dashboard).
    pub source_plugin: Option<String>,
    /// That plugin's own id.
    pub external_id: Option<String>,
}

/// The account's punishment `id`, if it has one.
pub async fn revoke_target(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
) -> Result<Option<RevokeTarget>, sqlx::Error> {
    sqlx::query_as::<_, RevokeTarget>(&format!(
        "SELECT p.id, p.player_uuid, p.type, p.issued_at, p.expires_at, p.revoked_at,
                {} AS is_active, p.source_plugin, p.external_id
         FROM punishments p WHERE p.account_id = $1 AND p.id = $2",
        crate::routes::punishments::IS_ACTIVE
    ))
    .bind(account_id)
    .bind(id)
    .fetch_optional(pool)
    .await
}

/// Whether the projector has applied action `id`: an issue's punishment is stored, or a
/// revoke's punishment is ended.
pub async fn applied(
    pool: &PgPool,
    account_id: Uuid,
    punishment_id: Uuid,
    revoke: bool,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM punishments
                        WHERE account_id = $1 AND id = $2 AND ($3 = false OR revoked_at IS NOT NULL))",
    )
    .bind(account_id)
    .bind(punishment_id)
    .bind(revoke)
    .fetch_one(pool)
    .await
}

/// Whether the revoke action `action_id` of punishment `punishment_id` is stored (a form sent
/// again after its revoke landed and the rest did not).
pub async fn revoke_stored(
    pool: &PgPool,
    account_id: Uuid,
    punishment_id: Uuid,
    action_id: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM punishment_revokes
                        WHERE account_id = $1 AND id = $2 AND punishment_id = $3)",
    )
    .bind(account_id)
    .bind(action_id)
    .bind(punishment_id)
    .fetch_one(pool)
    .await
}
