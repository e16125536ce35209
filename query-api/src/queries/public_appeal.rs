//! What the public appeal form reads: whether the account a link names exists, the punishment
//! it names, and the appeal already sent for it (never the member who decided it).

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// Whether `account_id` is an account (a link naming any other is not worth a key lookup).
pub async fn account_exists(pool: &PgPool, account_id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar::<_, bool>("SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)")
        .bind(account_id)
        .fetch_one(pool)
        .await
}

/// The punishment an appeal link names, as its player sees it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppealedPunishment {
    /// Its id.
    pub id: Uuid,
    /// Its player: the appeal is theirs, whoever sends the form.
    pub player_uuid: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    #[sqlx(rename = "type")]
    pub punishment_type: String,
    /// Why, as staff wrote it.
    pub reason: Option<String>,
    /// When it was issued.
    pub issued_at: DateTime<Utc>,
    /// When it ends; None: permanent (or a kick or warning, which has no length).
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was lifted early, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Whether it is in force now.
    pub is_active: bool,
}

impl AppealedPunishment {
    /// Whether it is a ban or mute, the kinds an accepted appeal can lift.
    pub fn lasts(&self) -> bool {
        matches!(self.punishment_type.as_str(), "ban" | "mute")
    }
}

/// Punishment `id` of `account_id`, if there is one.
pub async fn punishment(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
) -> Result<Option<AppealedPunishment>, sqlx::Error> {
    sqlx::query_as::<_, AppealedPunishment>(&format!(
        "SELECT p.id, p.player_uuid, p.type, p.reason, p.issued_at, p.expires_at, p.revoked_at,
                {} AS is_active
         FROM punishments p WHERE p.account_id = $1 AND p.id = $2",
        crate::routes::punishments::IS_ACTIVE
    ))
    .bind(account_id)
    .bind(id)
    .fetch_optional(pool)
    .await
}

/// The appeal of a punishment, as its player sees it: no member name.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SentAppeal {
    /// `new`, `under_review`, `accepted` or `denied`.
    pub status: String,
    /// The player's words.
    pub message: String,
    /// When the player sent it.
    pub submitted_at: DateTime<Utc>,
    /// When its latest step was taken.
    pub updated_at: DateTime<Utc>,
    /// Staff's words to the player.
    pub reply: Option<String>,
}

impl SentAppeal {
    /// Whether staff decided it (accepted or denied).
    pub fn decided(&self) -> bool {
        matches!(self.status.as_str(), "accepted" | "denied")
    }
}

/// The appeal sent for punishment `punishment_id` of `account_id`, if one was.
pub async fn appeal_of(
    pool: &PgPool,
    account_id: Uuid,
    punishment_id: Uuid,
) -> Result<Option<SentAppeal>, sqlx::Error> {
    sqlx::query_as::<_, SentAppeal>(
        "SELECT status, message, submitted_at, updated_at, reply
         FROM appeals WHERE account_id = $1 AND punishment_id = $2",
    )
    .bind(account_id)
    .bind(punishment_id)
    .fetch_optional(pool)
    .await
}
