//! Sign-in sessions: an opaque 256-bit token in a cookie, stored only as its SHA-256 (like API
//! keys), with an idle and an absolute expiry. Every request looks its session up, so ending a
//! session (sign-out, removal, role or password change) takes effect on the next request.

use super::members::{MEMBER_COLUMNS, Member};
use super::{Role, TeamError};
use axum::http::HeaderMap;
use chrono::{DateTime, Utc};
use shared::keys::hash_secret;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use uuid::Uuid;

/// The cookie's name when it is `Secure`. The `__Host-` prefix makes the browser refuse it
/// unless it is Secure, has `Path=/` and no `Domain`: no subdomain can set or shadow it.
pub const SECURE_COOKIE: &str = "__Host-warden_session";
/// The cookie's name when `COOKIE_SECURE=false` (plain http on a non-loopback address, where a
/// browser would drop a Secure cookie): the prefix would not be honoured there.
pub const PLAIN_COOKIE: &str = "warden_session";
/// What every session token starts with.
const TOKEN_PREFIX: &str = "wdn_session_";
/// A session's `last_seen_at` is written at most this often (seconds): enough for the idle
/// expiry, and most page views then write nothing.
const TOUCH_EVERY_SECONDS: f64 = 60.0;

/// How long sessions live, and how their cookie is sent.
#[derive(Debug, Clone, Copy)]
pub struct SessionPolicy {
    /// `SESSION_IDLE_SECONDS` (default 12 h): a session unused this long ends.
    pub idle: Duration,
    /// `SESSION_ABSOLUTE_SECONDS` (default 7 d): a session ends this long after sign-in.
    pub absolute: Duration,
    /// `COOKIE_SECURE` (default true): send the cookie `Secure` under the `__Host-` name.
    pub cookie_secure: bool,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(12 * 3600),
            absolute: Duration::from_secs(7 * 24 * 3600),
            cookie_secure: true,
        }
    }
}

impl SessionPolicy {
    /// The cookie's name under this policy.
    pub fn cookie_name(&self) -> &'static str {
        if self.cookie_secure {
            SECURE_COOKIE
        } else {
            PLAIN_COOKIE
        }
    }

    /// The `Set-Cookie` value that hands `token` to the browser until the absolute expiry.
    pub fn set_cookie(&self, token: &str) -> String {
        self.cookie(token, self.absolute.as_secs())
    }

    /// The `Set-Cookie` value that makes the browser forget the session.
    pub fn clear_cookie(&self) -> String {
        self.cookie("", 0)
    }

    fn cookie(&self, value: &str, max_age: u64) -> String {
        let secure = if self.cookie_secure { "; Secure" } else { "" };
        format!(
            "{}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Lax{secure}",
            self.cookie_name()
        )
    }

    /// The session token the request's `Cookie` headers carry, if any.
    pub fn token<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        let name = self.cookie_name();
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|line| line.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(key, value)| *key == name && value.starts_with(TOKEN_PREFIX))
            .map(|(_, value)| value)
    }
}

/// A live session and its member (with the account's name, which every page shows).
#[derive(Debug, Clone)]
pub struct Session {
    /// The SHA-256 of the token: what sign-out deletes.
    pub token_hash: String,
    /// Who is signed in.
    pub member: Member,
    /// Their account's name.
    pub account_name: String,
}

/// Starts a session for `member_id` and returns its token (for the cookie; never stored).
pub async fn start(
    conn: &mut PgConnection,
    member_id: Uuid,
    policy: &SessionPolicy,
) -> Result<String, TeamError> {
    let token = super::new_token(TOKEN_PREFIX);
    sqlx::query(
        "INSERT INTO team_sessions (token_hash, member_id, expires_at) \
         VALUES ($1, $2, now() + make_interval(secs => $3))",
    )
    .bind(hash_secret(&token))
    .bind(member_id)
    .bind(policy.absolute.as_secs_f64())
    .execute(&mut *conn)
    .await?;
    Ok(token)
}

/// The live session behind `token`, refreshing its idle clock; `None` when it is unknown,
/// ended, idle too long or past its absolute expiry.
pub async fn resolve(
    pool: &PgPool,
    token: &str,
    policy: &SessionPolicy,
) -> Result<Option<Session>, TeamError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: Uuid,
        account_id: Uuid,
        login: String,
        display_name: String,
        role: String,
        created_at: DateTime<Utc>,
        account_name: String,
        stale: bool,
    }
    let token_hash = hash_secret(token);
    let columns = MEMBER_COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let row = sqlx::query_as::<_, Row>(&format!(
        "SELECT {columns}, a.name AS account_name, \
                s.last_seen_at < now() - make_interval(secs => $3) AS stale \
         FROM team_sessions s JOIN team_members m ON m.id = s.member_id \
         JOIN accounts a ON a.id = m.account_id \
         WHERE s.token_hash = $1 AND s.expires_at > now() \
           AND s.last_seen_at > now() - make_interval(secs => $2)"
    ))
    .bind(&token_hash)
    .bind(policy.idle.as_secs_f64())
    .bind(TOUCH_EVERY_SECONDS)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    if row.stale {
        sqlx::query("UPDATE team_sessions SET last_seen_at = now() WHERE token_hash = $1")
            .bind(&token_hash)
            .execute(pool)
            .await?;
    }
    let role = Role::parse(&row.role)
        .ok_or_else(|| TeamError::Corrupt(format!("member {} has role {}", row.id, row.role)))?;
    Ok(Some(Session {
        token_hash,
        member: Member {
            id: row.id,
            account_id: row.account_id,
            login: row.login,
            display_name: row.display_name,
            role,
            created_at: row.created_at,
        },
        account_name: row.account_name,
    }))
}

/// Whether the session whose token hashes to `token_hash` is still live (not ended, idle too
/// long or expired), without touching its idle clock: an open live stream asks this every
/// second, and a tab left open is not activity. Asking the database (not an in-process
/// registry) sees an end made on any replica, whatever ended it.
pub async fn is_live(
    pool: &PgPool,
    token_hash: &str,
    policy: &SessionPolicy,
) -> Result<bool, TeamError> {
    let live: Option<i32> = sqlx::query_scalar(
        "SELECT 1 FROM team_sessions WHERE token_hash = $1 AND expires_at > now() \
           AND last_seen_at > now() - make_interval(secs => $2)",
    )
    .bind(token_hash)
    .bind(policy.idle.as_secs_f64())
    .fetch_optional(pool)
    .await?;
    Ok(live.is_some())
}

/// Ends the session whose token hashes to `token_hash` (sign-out, or the old one at sign-in).
pub async fn end(conn: &mut PgConnection, token_hash: &str) -> Result<(), TeamError> {
    sqlx::query("DELETE FROM team_sessions WHERE token_hash = $1")
        .bind(token_hash)
        .execute(conn)
        .await?;
    Ok(())
}

/// Ends every session of a member.
pub async fn end_all(conn: &mut PgConnection, member_id: Uuid) -> Result<(), TeamError> {
    sqlx::query("DELETE FROM team_sessions WHERE member_id = $1")
        .bind(member_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The SHA-256 of a token as stored (for ending the session a request presented).
pub fn token_hash(token: &str) -> String {
    hash_secret(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_cookie_has_every_flag() {
        let policy = SessionPolicy::default();
        let cookie = policy.set_cookie("wdn_session_ab");
        assert_eq!(
            cookie,
            "__Host-warden_session=wdn_session_ab; Max-Age=604800; Path=/; HttpOnly; \
             SameSite=Lax; Secure"
        );
        let plain = SessionPolicy {
            cookie_secure: false,
            ..policy
        };
        assert!(
            plain
                .clear_cookie()
                .starts_with("warden_session=; Max-Age=0;")
        );
        assert!(!plain.clear_cookie().contains("Secure"));
    }

    #[test]
    fn the_token_is_read_from_any_cookie_header() {
        let policy = SessionPolicy::default();
        let mut headers = HeaderMap::new();
        headers.append("cookie", HeaderValue::from_static("a=1; b=2"));
        headers.append(
            "cookie",
            HeaderValue::from_static("x=y; __Host-warden_session=wdn_session_ff"),
        );
        assert_eq!(policy.token(&headers), Some("wdn_session_ff"));
        let mut other = HeaderMap::new();
        other.append(
            "cookie",
            HeaderValue::from_static("warden_session=wdn_session_ff"),
        );
        assert_eq!(policy.token(&other), None);
    }
}
