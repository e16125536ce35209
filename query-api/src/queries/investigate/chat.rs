//! A player's chat as the Investigate page shows it: the latest lines, or the lines around a
//! moment ("jump to a time").

use super::COUNT_CAP;
use super::history::count;
use crate::routes::chatlog::{COLUMNS, ChatLogEntry};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// Lines shown on each side of the moment (twice as many when showing the latest).
pub const CHAT_AROUND: i64 = 10;

/// Which chat the Investigate page reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRequest {
    /// None at all: the caller's role may not read chat logs (admins and owners only), so
    /// nothing is fetched rather than fetched and hidden.
    Withheld,
    /// The latest lines.
    Latest,
    /// The lines around a moment ("jump to a time").
    Around(DateTime<Utc>),
}

impl ChatRequest {
    /// The window asked for, or `None` when chat is withheld.
    pub(super) async fn read(
        self,
        pool: &PgPool,
        account: Uuid,
        player: Uuid,
    ) -> Result<Option<ChatWindow>, sqlx::Error> {
        let at = match self {
            ChatRequest::Withheld => return Ok(None),
            ChatRequest::Latest => None,
            ChatRequest::Around(at) => Some(at),
        };
        window(pool, account, player, at).await.map(Some)
    }
}

/// The lines shown, in the order they were said.
#[derive(Debug)]
pub struct ChatWindow {
    /// The moment asked for; none for the latest lines.
    pub at: Option<DateTime<Utc>>,
    /// Lines said at or before the moment (all of them for the latest), oldest first.
    pub before: Vec<ChatLogEntry>,
    /// Lines said after the moment, oldest first.
    pub after: Vec<ChatLogEntry>,
    /// Lines the player has sent in all, up to [`COUNT_CAP`].
    pub total: i64,
}

impl ChatWindow {
    /// The total as people read it.
    pub fn total_text(&self) -> String {
        if self.total >= COUNT_CAP {
            format!("{COUNT_CAP}+")
        } else {
            self.total.to_string()
        }
    }
}

/// The player's lines around `at`, or their latest without one: each side is one range of
/// chat_messages_player_time_idx.
pub async fn window(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    at: Option<DateTime<Utc>>,
) -> Result<ChatWindow, sqlx::Error> {
    let side = |condition: &str, order: &str, limit: i64| {
        format!(
            "SELECT {COLUMNS} FROM chat_messages c WHERE c.account_id = $1 \
               AND c.player_uuid = $2 {condition} \
             ORDER BY c.sent_at {order}, c.id {order} LIMIT {limit}"
        )
    };
    let (mut before, after) = match at {
        None => {
            let latest = sqlx::query_as::<_, ChatLogEntry>(&side("", "DESC", 2 * CHAT_AROUND))
                .bind(account)
                .bind(player)
                .fetch_all(pool)
                .await?;
            (latest, Vec::new())
        }
        Some(at) => {
            let before = side("AND c.sent_at <= $3", "DESC", CHAT_AROUND);
            let after = side("AND c.sent_at > $3", "ASC", CHAT_AROUND);
            let (before, after) = tokio::try_join!(
                sqlx::query_as::<_, ChatLogEntry>(&before)
                    .bind(account)
                    .bind(player)
                    .bind(at)
                    .fetch_all(pool),
                sqlx::query_as::<_, ChatLogEntry>(&after)
                    .bind(account)
                    .bind(player)
                    .bind(at)
                    .fetch_all(pool),
            )?;
            (before, after)
        }
    };
    before.reverse();
    let total = count(pool, "chat_messages", account, player).await?;
    Ok(ChatWindow {
        at,
        before,
        after,
        total,
    })
}
