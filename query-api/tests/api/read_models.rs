//! Rows written straight into the projector's read-model tables, as the projector would.

use crate::helpers::{TestApp, text};
use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// An app with one account and a working dashboard key.
pub(crate) struct Dashboard {
    pub(crate) app: TestApp,
    pub(crate) account: Uuid,
    pub(crate) key: String,
}

impl Dashboard {
    pub(crate) async fn start() -> anyhow::Result<Dashboard> {
        Self::start_with(|vars| vars).await
    }

    /// Like [`Self::start`], with the service's settings changed by `adjust`.
    pub(crate) async fn start_with(
        adjust: impl FnOnce(shared::config::Vars) -> shared::config::Vars,
    ) -> anyhow::Result<Dashboard> {
        let app = TestApp::spawn_with(adjust).await?;
        let (account, key) = app.account_with_dashboard_key().await?;
        Ok(Dashboard {
            account: account.parse()?,
            key: text(&key["key"]),
            app,
        })
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.app.db.pool
    }

    /// `GET path` with the dashboard key: status and JSON body.
    pub(crate) async fn get(&self, path: &str) -> anyhow::Result<(StatusCode, Value)> {
        let response = self.app.get_with(path, Some(&self.key)).await?;
        Ok((response.status(), response.json().await?))
    }

    /// `GET path`, asserting a 200.
    pub(crate) async fn ok(&self, path: &str) -> anyhow::Result<Value> {
        let (status, body) = self.get(path).await?;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        Ok(body)
    }
}

/// Now, at PostgreSQL's precision (microseconds), so stored times compare equal.
pub(crate) fn now() -> DateTime<Utc> {
    let micros = Utc::now().timestamp_micros();
    DateTime::from_timestamp_micros(micros).unwrap_or_default()
}

/// `now - seconds`.
pub(crate) fn ago(now: DateTime<Utc>, seconds: i64) -> DateTime<Utc> {
    now - Duration::seconds(seconds)
}

/// The RFC 3339 form the API returns (UTC, `Z`).
pub(crate) fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// A JSON timestamp parsed back; asserts it is UTC with `Z`.
pub(crate) fn time(value: &Value) -> DateTime<Utc> {
    let text = value.as_str().unwrap_or_default();
    assert!(text.ends_with('Z'), "not UTC with Z: {value}");
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

pub(crate) async fn player(
    pool: &PgPool,
    account: Uuid,
    name: &str,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
) -> anyhow::Result<Uuid> {
    let uuid = Uuid::new_v4();
    // As the players model writes them: the row with its set of names, and the name's span.
    sqlx::query(
        "WITH p AS (INSERT INTO players (account_id, uuid, username, username_at, first_seen, \
                last_seen, names) VALUES ($1, $2, $3, $5, $4, $5, ARRAY[$3]) RETURNING 1) \
         INSERT INTO player_names (account_id, player_uuid, name, first_seen, last_seen) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(account)
    .bind(uuid)
    .bind(name)
    .bind(first_seen)
    .bind(last_seen)
    .execute(pool)
    .await?;
    Ok(uuid)
}

/// Sets a player's rank: `(rank, previous_rank, rank_expires_at)`.
pub(crate) async fn rank(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    rank: (&str, Option<&str>, Option<DateTime<Utc>>),
) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE players SET rank = $3, previous_rank = $4, rank_expires_at = $5, \
         rank_changed_at = now() WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(player)
    .bind(rank.0)
    .bind(rank.1)
    .bind(rank.2)
    .execute(pool)
    .await?;
    Ok(())
}

/// A server with a name and figures; `online_flag` and `last_heartbeat_at` decide its status.
pub(crate) async fn server(
    pool: &PgPool,
    account: Uuid,
    name: Option<&str>,
    online_flag: bool,
    last_heartbeat_at: DateTime<Utc>,
) -> anyhow::Result<Uuid> {
    let id = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO servers (account_id, id, name, version, online_flag, tps, player_count, \
           max_players, first_seen, last_heartbeat_at, last_heartbeat_seq) \
         VALUES ($1, $2, $3, 'Paper 1.21.4', $4, 19.5, 3, 100, $5, $5, 1)",
    )
    .bind(account)
    .bind(id)
    .bind(name)
    .bind(online_flag)
    .bind(last_heartbeat_at)
    .execute(pool)
    .await?;
    Ok(id)
}

pub(crate) async fn session(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    server: Uuid,
    joined_at: DateTime<Utc>,
    left_at: Option<DateTime<Utc>>,
) -> anyhow::Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (account_id, id, player_uuid, server_id, joined_at, left_at, \
           closed_by, opened_seq) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 IS NULL THEN NULL ELSE 'quit' END, 1)",
    )
    .bind(account)
    .bind(id)
    .bind(player)
    .bind(server)
    .bind(joined_at)
    .bind(left_at)
    .execute(pool)
    .await?;
    Ok(id)
}

/// A closed session from the IP with hash `ip_hash`.
pub(crate) async fn join_from(
    pool: &PgPool,
    account: Uuid,
    (player, server): (Uuid, Uuid),
    ip_hash: &str,
    joined_at: DateTime<Utc>,
) -> anyhow::Result<()> {
    let id = session(pool, account, player, server, joined_at, Some(joined_at)).await?;
    sqlx::query("UPDATE sessions SET ip_hash = $3 WHERE account_id = $1 AND id = $2")
        .bind(account)
        .bind(id)
        .bind(ip_hash)
        .execute(pool)
        .await?;
    Ok(())
}

/// A punishment; extra columns (reason, revoke, ...) are set by the caller with an UPDATE.
pub(crate) struct Punishment {
    pub(crate) player: Uuid,
    pub(crate) kind: &'static str,
    pub(crate) staff: Option<(Uuid, Option<&'static str>)>,
    pub(crate) server: Option<Uuid>,
    pub(crate) issued_at: DateTime<Utc>,
    pub(crate) expires_at: Option<DateTime<Utc>>,
}

pub(crate) async fn punishment(
    pool: &PgPool,
    account: Uuid,
    p: Punishment,
) -> anyhow::Result<Uuid> {
    let id = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO punishments (account_id, id, player_uuid, type, reason, staff_uuid, \
           staff_name, server_id, issued_at, expires_at, scope, source_plugin) \
         VALUES ($1, $2, $3, $4, 'rule breaking', $5, $6, $7, $8, $9, 'global', 'litebans')",
    )
    .bind(account)
    .bind(id)
    .bind(p.player)
    .bind(p.kind)
    .bind(p.staff.map(|s| s.0))
    .bind(p.staff.and_then(|s| s.1))
    .bind(p.server)
    .bind(p.issued_at)
    .bind(p.expires_at)
    .execute(pool)
    .await?;
    Ok(id)
}

pub(crate) async fn flag(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    server: Uuid,
    flagged_at: DateTime<Utc>,
) -> anyhow::Result<Uuid> {
    let id = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO anticheat_flags (account_id, id, player_uuid, server_id, check_name, \
           check_type, violation_level, detail, source_plugin, is_experimental, ping_ms, tps, \
           flagged_at) \
         VALUES ($1, $2, $3, $4, 'Reach', 'A', 4.5, 'reach 3.4', 'grim', true, 42, 19.9, $5)",
    )
    .bind(account)
    .bind(id)
    .bind(player)
    .bind(server)
    .bind(flagged_at)
    .execute(pool)
    .await?;
    Ok(id)
}

/// The Overview's `recent_events` and `recent_flags` of `account` as the projector keeps them
/// beside the rows seeded in `events` and `anticheat_flags`: the newest 100 of each.
pub(crate) async fn keep_recent_activity(pool: &PgPool, account: Uuid) -> anyhow::Result<()> {
    for statement in [
        "DELETE FROM recent_events WHERE account_id = $1",
        "INSERT INTO recent_events (account_id, id, seq, name, player_uuid, server_id, \
           properties, occurred_at) \
         SELECT account_id, id, seq, name, player_uuid, server_id, properties, occurred_at \
         FROM events WHERE account_id = $1 AND is_internal AND name = ANY($2) \
         ORDER BY occurred_at DESC, seq DESC, id DESC LIMIT 100",
        "DELETE FROM recent_flags WHERE account_id = $1",
        "INSERT INTO recent_flags (account_id, id, player_uuid, server_id, check_name, \
           check_type, flagged_at) \
         SELECT account_id, id, player_uuid, server_id, check_name, check_type, flagged_at \
         FROM anticheat_flags WHERE account_id = $1 \
         ORDER BY flagged_at DESC, id DESC LIMIT 100",
    ] {
        let query = sqlx::query(statement).bind(account);
        let query = if statement.contains("$2") {
            query.bind(&shared::timeline::ACTIVITY_EVENTS[..])
        } else {
            query
        };
        query.execute(pool).await?;
    }
    Ok(())
}

pub(crate) async fn chat(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    server: Uuid,
    message: &str,
    sent_at: DateTime<Utc>,
) -> anyhow::Result<Uuid> {
    let id = Uuid::new_v4();
    let entry_type = if message.starts_with('/') {
        "command"
    } else {
        "chat"
    };
    sqlx::query(
        "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message, \
           channel, sent_at) VALUES ($1, $2, $3, $4, $5, $6, 'global', $7)",
    )
    .bind(account)
    .bind(id)
    .bind(player)
    .bind(server)
    .bind(entry_type)
    .bind(message)
    .bind(sent_at)
    .execute(pool)
    .await?;
    Ok(id)
}

/// The `items` of a list response.
pub(crate) fn items(body: &Value) -> Vec<Value> {
    body["items"].as_array().cloned().unwrap_or_default()
}

/// Follows `next_cursor` from `path` (which has a `?`) to the end; returns every page.
pub(crate) async fn all_pages(dash: &Dashboard, path: &str) -> anyhow::Result<Vec<Vec<Value>>> {
    let mut pages = Vec::new();
    let mut next = path.to_owned();
    loop {
        let body = dash.ok(&next).await?;
        pages.push(items(&body));
        match body["next_cursor"].as_str() {
            Some(cursor) => next = format!("{path}&cursor={cursor}"),
            None => {
                assert!(body["next_cursor"].is_null(), "{body}");
                return Ok(pages);
            }
        }
        anyhow::ensure!(pages.len() < 100, "paging does not end");
    }
}
