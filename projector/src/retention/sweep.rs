//! The rows each retention kind removes from the read models, in bounded statements.
//!
//! Every statement names its tables unqualified, so a rebuild's connection (whose
//! `search_path` puts the copy's schema first) sweeps the copy with the same SQL. Each
//! statement touches at most [`BATCH_ROWS`] rows and commits on its own: the first sweep after
//! a policy is set may remove years of chat, and one huge transaction would hold its locks and
//! its dead rows for as long as that takes.

use chrono::{DateTime, Utc};
use shared::event_name::reserved_prefix;
use shared::privacy::RetentionKind;
use sqlx::PgPool;
use uuid::Uuid;

/// Rows one statement removes (or blanks) at most.
pub const BATCH_ROWS: i64 = 10_000;

/// The timeline's names of chat records.
const CHAT_EVENTS: [&str; 2] = ["chat_message", "chat_command"];
/// The timeline's names of session records.
const SESSION_EVENTS: [&str; 2] = ["session_join", "session_quit"];

/// One bounded statement: `$1` the account, `$2` the cutoff, `$3` the batch size, `$4` the
/// event names (when it reads `events`).
struct Step {
    /// The table it changes (skipped when the sweep's scope leaves it out).
    table: &'static str,
    /// `DELETE FROM t` or `UPDATE t SET ...`.
    action: &'static str,
    /// The rows it changes, beside `account_id = $1`.
    filter: &'static str,
}

/// What `kind` removes, in order.
fn steps(kind: RetentionKind) -> &'static [Step] {
    match kind {
        RetentionKind::Chat => &[
            Step {
                table: "chat_messages",
                action: "DELETE FROM chat_messages",
                filter: "sent_at < $2",
            },
            Step {
                table: "events",
                action: "DELETE FROM events",
                filter: "name = ANY($4) AND is_internal AND occurred_at < $2",
            },
        ],
        // Sessions keep their other columns; the timeline's session events never hold the
        // hash (shared::timeline), so sessions are the only place it is stored.
        RetentionKind::IpHashes => &[Step {
            table: "sessions",
            action: "UPDATE sessions SET ip_hash = NULL",
            filter: "joined_at < $2 AND ip_hash IS NOT NULL",
        }],
        // Closed sessions only: an open one is a player online now, whenever they joined.
        RetentionKind::Sessions => &[
            Step {
                table: "sessions",
                action: "DELETE FROM sessions",
                filter: "joined_at < $2 AND left_at < $2",
            },
            Step {
                table: "events",
                action: "DELETE FROM events",
                filter: "name = ANY($4) AND is_internal AND occurred_at < $2",
            },
            Step {
                table: "recent_events",
                action: "DELETE FROM recent_events",
                filter: "name = ANY($4) AND occurred_at < $2",
            },
        ],
        RetentionKind::CustomEvents => &[Step {
            table: "events",
            action: "DELETE FROM events",
            filter: "name = ANY($4) AND NOT is_internal AND occurred_at < $2",
        }],
        RetentionKind::AnticheatFlags => &[
            Step {
                table: "anticheat_flags",
                action: "DELETE FROM anticheat_flags",
                filter: "flagged_at < $2",
            },
            Step {
                table: "recent_flags",
                action: "DELETE FROM recent_flags",
                filter: "flagged_at < $2",
            },
        ],
    }
}

/// Removes `account`'s rows of `kind` from before `cutoff` in the tables `in_scope` allows;
/// returns how many rows were removed (or blanked).
pub(crate) async fn sweep_kind(
    pool: &PgPool,
    account: Uuid,
    kind: RetentionKind,
    cutoff: DateTime<Utc>,
    in_scope: &(dyn Fn(&str) -> bool + Sync),
) -> Result<u64, sqlx::Error> {
    let mut removed = 0;
    for step in steps(kind).iter().filter(|s| in_scope(s.table)) {
        // The timeline's steps name the events they remove (`$4`).
        let names: Option<Vec<String>> = match (step.table, kind) {
            ("events", RetentionKind::Chat) => Some(CHAT_EVENTS.map(str::to_owned).to_vec()),
            ("events" | "recent_events", RetentionKind::Sessions) => {
                Some(SESSION_EVENTS.map(str::to_owned).to_vec())
            }
            ("events", _) => Some(custom_event_names(pool, account).await?),
            _ => None,
        };
        if names.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        // By primary key, so the inner read uses the (account_id, time) index and the outer
        // change finds each row by key; a row changed meanwhile is simply left for next time.
        let sql = format!(
            "{action} WHERE account_id = $1 AND id IN (
                 SELECT id FROM {table} WHERE account_id = $1 AND {filter} LIMIT $3)",
            action = step.action,
            table = step.table,
            filter = step.filter,
        );
        loop {
            let mut query = sqlx::query(&sql)
                .bind(account)
                .bind(cutoff)
                .bind(BATCH_ROWS);
            if let Some(names) = &names {
                query = query.bind(names);
            }
            let done = query.execute(pool).await?.rows_affected();
            removed += done;
            if done < BATCH_ROWS as u64 {
                break;
            }
        }
    }
    Ok(removed)
}

/// The account's custom event names (names without a reserved prefix), read as a loose scan
/// of `events_account_name_time_idx`: one index descent per distinct name, however many
/// events each has. Deleting name by name then reads that index too, never the account's
/// internal events.
async fn custom_event_names(pool: &PgPool, account: Uuid) -> Result<Vec<String>, sqlx::Error> {
    let names: Vec<String> = sqlx::query_scalar(
        "WITH RECURSIVE names(name) AS (
             (SELECT name FROM events WHERE account_id = $1 ORDER BY name LIMIT 1)
             UNION ALL
             SELECT (SELECT e.name FROM events e
                     WHERE e.account_id = $1 AND e.name > n.name ORDER BY e.name LIMIT 1)
             FROM names n WHERE n.name IS NOT NULL
         )
         SELECT name FROM names WHERE name IS NOT NULL",
    )
    .bind(account)
    .fetch_all(pool)
    .await?;
    Ok(names
        .into_iter()
        .filter(|name| reserved_prefix(name).is_none())
        .collect())
}
