//! What the appeals inbox reads: an account's appeals by status (with the punishment appealed
//! and the player's name), the count of each status, and one appeal.

use crate::routes::history::PageRequest;
use crate::routes::punishments::IS_ACTIVE;
use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

/// The statuses of an appeal, in the inbox's order.
pub const STATUSES: [&str; 4] = ["new", "under_review", "accepted", "denied"];

/// One appeal with the punishment it is about.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppealRow {
    /// The appeal's id.
    pub id: Uuid,
    /// The punishment appealed.
    pub punishment_id: Uuid,
    /// Its player.
    pub player_uuid: Uuid,
    /// The player's latest name (None: never known, or erased).
    pub player_name: Option<String>,
    /// The player's words.
    pub message: String,
    /// `new`, `under_review`, `accepted` or `denied`.
    pub status: String,
    /// When the player sent it.
    pub submitted_at: DateTime<Utc>,
    /// When the latest step was taken.
    pub updated_at: DateTime<Utc>,
    /// Who took the latest staff step.
    pub member_name: Option<String>,
    /// Staff's words to the player.
    pub reply: Option<String>,
    /// The revoke written with an acceptance.
    pub revoke_action: Option<Uuid>,
    /// The punishment's type (None when the account holds no such punishment).
    pub punishment_type: Option<String>,
    /// Why it was issued.
    pub reason: Option<String>,
    /// Who issued it, as reported.
    pub staff_name: Option<String>,
    /// When it was issued.
    pub issued_at: Option<DateTime<Utc>>,
    /// When it ends (None: permanent, or no end for a kick or warning).
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Whether it is in force now.
    pub is_active: bool,
}

/// The columns of an [`AppealRow`] from appeal `a`, punishment `p` and player `pl`.
fn select() -> String {
    format!(
        "SELECT a.id, a.punishment_id, a.player_uuid, pl.username AS player_name, a.message,
                a.status, a.submitted_at, a.updated_at, a.member_name, a.reply, a.revoke_action,
                p.type AS punishment_type, p.reason, p.staff_name, p.issued_at,
                p.expires_at, p.revoked_at, coalesce({IS_ACTIVE}, false) AS is_active
         FROM appeals a
         LEFT JOIN punishments p ON p.account_id = a.account_id AND p.id = a.punishment_id
         LEFT JOIN players pl ON pl.account_id = a.account_id AND pl.uuid = a.player_uuid
         WHERE a.account_id = "
    )
}

/// The account's appeals of `status`, newest first, `page.limit + 1` rows from `page.cursor`.
pub async fn page(
    pool: &PgPool,
    account_id: Uuid,
    status: &str,
    page: &PageRequest,
) -> Result<Vec<AppealRow>, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(select());
    sql.push_bind(account_id)
        .push(" AND a.status = ")
        .push_bind(status.to_owned());
    page.push_keyset(&mut sql, "a.submitted_at", "a.id");
    sql.build_query_as::<AppealRow>().fetch_all(pool).await
}

/// The account's appeal `id`, if it has one.
pub async fn one(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
) -> Result<Option<AppealRow>, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(select());
    sql.push_bind(account_id).push(" AND a.id = ").push_bind(id);
    sql.build_query_as::<AppealRow>().fetch_optional(pool).await
}

/// How many appeals the account has of each of [`STATUSES`], in that order.
pub async fn counts(pool: &PgPool, account_id: Uuid) -> Result<[i64; 4], sqlx::Error> {
    let rows = sqlx::query_as::<_, (String, i64)>(
        "SELECT status, count(*) FROM appeals WHERE account_id = $1 GROUP BY status",
    )
    .bind(account_id)
    .fetch_all(pool)
    .await?;
    let mut counts = [0; 4];
    for (status, count) in rows {
        if let Some(at) = STATUSES.iter().position(|s| *s == status) {
            counts[at] = count;
        }
    }
    Ok(counts)
}

/// How many new appeals the account has (the navigation's badge).
pub async fn new_count(pool: &PgPool, account_id: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar::<_, i64>(
        "SELECT count(*) FROM appeals WHERE account_id = $1 AND status = 'new'",
    )
    .bind(account_id)
    .fetch_one(pool)
    .await
}

/// The status of the account's appeal `id` (None: no such appeal).
pub async fn status(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar::<_, String>("SELECT status FROM appeals WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .fetch_optional(pool)
        .await
}
