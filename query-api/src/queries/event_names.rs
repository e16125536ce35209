//! The distinct event names an account has logged: what the Funnels page offers as you type
//! and builds its example funnel from.
//!
//! A skip scan over `event_hours`' primary key (account_id, name, hour, server_id): each
//! step is one index probe for the next name after the previous one, so the cost grows with
//! the number of names returned, not with the hours, servers or events behind them.

use sqlx::PgPool;
use uuid::Uuid;

/// Most names offered (an account with more sees the first ones alphabetically).
pub const MAX_NAMES: i64 = 200;

/// The statement: $1 the account, $2 the most names. Public for the test that checks its plan.
pub const STATEMENT: &str = "WITH RECURSIVE names(name) AS ( \
             (SELECT name FROM event_hours WHERE account_id = $1 ORDER BY name LIMIT 1) \
             UNION ALL \
             SELECT (SELECT h.name FROM event_hours h \
                     WHERE h.account_id = $1 AND h.name > names.name \
                     ORDER BY h.name LIMIT 1) \
             FROM names WHERE names.name IS NOT NULL \
         ) \
         SELECT name FROM names WHERE name IS NOT NULL LIMIT $2";

/// `account_id`'s event names (custom and internal), alphabetically, at most `limit`.
pub async fn event_names(
    pool: &PgPool,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(STATEMENT)
        .bind(account_id)
        .bind(limit)
        .fetch_all(pool)
        .await
}
