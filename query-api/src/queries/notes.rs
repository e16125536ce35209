//! Staff notes as read back (the `notes` read model): a player's notes newest first, for
//! `GET /api/players/{uuid}/notes` and the notes section of the Investigate page.

use crate::routes::history::{HistoryCursor, PageRequest};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One note about a player or one of their punishments.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct NoteItem {
    /// The note's id (its record's event id).
    pub id: Uuid,
    /// The player it is about.
    pub player_uuid: Uuid,
    /// The punishment it is about; null for a note on the player.
    pub punishment_id: Option<Uuid>,
    /// That punishment's type (`ban`, `mute`, `kick`, `warning`); null when the note is on
    /// the player, or the punishment is not (yet) in the read model.
    pub punishment_type: Option<String>,
    /// The note.
    #[schema(min_length = 1, max_length = 2000)]
    pub text: String,
    /// Links to evidence (http or https), at most 5.
    #[schema(value_type = Vec<String>, max_items = 5)]
    pub evidence: Json<Vec<String>>,
    /// The team member who wrote it.
    pub author_member_id: Uuid,
    /// Their display name when they wrote it.
    #[schema(min_length = 1, max_length = 100)]
    pub author_name: String,
    /// When it was written (UTC).
    pub written_at: DateTime<Utc>,
}

/// A page of a player's notes.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotePage {
    /// Newest first (`written_at`, then `id`, descending).
    pub items: Vec<NoteItem>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// One page of `player`'s notes in `account_id` (on the player and on their punishments),
/// newest first; read by `notes_player_time_idx`, one index range per page.
pub async fn player_notes(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    page: &PageRequest,
) -> Result<NotePage, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(
        "SELECT n.id, n.player_uuid, n.punishment_id, p.type AS punishment_type, n.text, \
           n.evidence, n.author_member_id, n.author_name, n.written_at \
         FROM notes n \
         LEFT JOIN punishments p ON p.account_id = n.account_id AND p.id = n.punishment_id \
         WHERE n.account_id = ",
    );
    sql.push_bind(account_id)
        .push(" AND n.player_uuid = ")
        .push_bind(player);
    page.push_keyset(&mut sql, "n.written_at", "n.id");
    let rows = sql.build_query_as::<NoteItem>().fetch_all(pool).await?;
    let (items, next_cursor) = page.finish(rows, |n| HistoryCursor {
        at: n.written_at,
        key: n.id,
    });
    Ok(NotePage { items, next_cursor })
}

/// Whether `punishment` is one of `player`'s punishments in `account_id`: a note names only
/// a punishment of the player it is about.
pub async fn is_players_punishment(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    punishment: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM punishments \
           WHERE account_id = $1 AND id = $2 AND player_uuid = $3)",
    )
    .bind(account_id)
    .bind(punishment)
    .bind(player)
    .fetch_one(pool)
    .await
}

/// Whether a note with this id is in the read model yet (the projector has applied it).
pub async fn note_exists(pool: &PgPool, account_id: Uuid, id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM notes WHERE account_id = $1 AND id = $2)")
        .bind(account_id)
        .bind(id)
        .fetch_one(pool)
        .await
}
