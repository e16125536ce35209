//! Player search, shared by `GET /api/players` and the `/players` page: find the account's
//! players by a UUID or by part of any name they have or had, newest-seen first, and who is
//! online now.
//!
//! Speed over 1M players (the target: p99 <= 20 ms, in `docs/benchmarks.md`). Exact
//! newest-first order has two good plans, and which one is good depends on how common the
//! fragment is:
//! - a rare fragment: read its few matches through a name index, then sort them: a prefix
//!   through `player_names` (btree `text_pattern_ops` over each name), a substring through
//!   the players' own rows (trigram GIN over all of a player's names, migration 0020, so no
//!   match is joined back to `players`);
//! - a common one: walk the newest-seen players (`players_account_last_seen_idx`, at most
//!   [`RECENT_WINDOW`]) matching the names inside each row (`players.names`); the page fills
//!   after a few hundred rows, where the index plan would sort tens of thousands of matches.
//!
//! The planner's own estimate of the matches (its statistics on the index's expression, one
//! `EXPLAIN`, well under a millisecond) picks which to try first. A wrong guess costs time,
//! never results: the walk answers only when it holds more than a page, else the index plan
//! runs too.

use crate::routes::account_reads::params::push_range;
use crate::routes::history::HistoryCursor;
use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

/// Shortest name fragment searched as a substring: a trigram index needs three characters;
/// a shorter one is matched as a prefix (a btree range) instead of scanning every player.
pub const MIN_SUBSTRING: usize = 3;
/// Shortest search text: one character would match a large part of any account.
pub const MIN_SEARCH: usize = 2;
/// Longest search text, in characters.
pub const MAX_SEARCH: usize = 100;
/// How many of the newest-seen players (past the cursor) a name search reads first.
pub const RECENT_WINDOW: i64 = 4000;

/// What a search text asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerSearch {
    /// Exactly this player.
    Uuid(Uuid),
    /// Players with a name (current or past) matching this LIKE pattern over `lower(name)`.
    Name {
        /// `%fragment%`, or `fragment%` under [`MIN_SUBSTRING`] characters (escaped).
        pattern: String,
        /// True for a prefix pattern.
        prefix: bool,
    },
}

/// Why a search text is refused (the API answers 422, the page shows the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchRefused {
    /// Under [`MIN_SEARCH`] or over [`MAX_SEARCH`] characters once trimmed.
    Length,
    /// Contains NUL, which no stored name can.
    Nul,
}

impl SearchRefused {
    /// The stable error code.
    pub fn code(self) -> &'static str {
        match self {
            SearchRefused::Length => "out_of_range",
            SearchRefused::Nul => "invalid_characters",
        }
    }

    /// What is wrong and how to fix it.
    pub fn message(self) -> String {
        match self {
            SearchRefused::Length => {
                format!("must be a UUID or {MIN_SEARCH} to {MAX_SEARCH} characters of a name")
            }
            SearchRefused::Nul => shared::validation::NUL_MESSAGE.to_owned(),
        }
    }
}

impl PlayerSearch {
    /// Reads a search text (trimmed): a UUID is exact, else a name fragment.
    pub fn parse(text: &str) -> Result<PlayerSearch, SearchRefused> {
        let text = text.trim();
        if let Ok(uuid) = Uuid::parse_str(text) {
            return Ok(PlayerSearch::Uuid(uuid));
        }
        if text.contains('\0') {
            return Err(SearchRefused::Nul);
        }
        let length = text.chars().count();
        if !(MIN_SEARCH..=MAX_SEARCH).contains(&length) {
            return Err(SearchRefused::Length);
        }
        let literal = like_literal(&text.to_lowercase());
        Ok(if length < MIN_SUBSTRING {
            PlayerSearch::Name {
                pattern: format!("{literal}%"),
                prefix: true,
            }
        } else {
            PlayerSearch::Name {
                pattern: format!("%{literal}%"),
                prefix: false,
            }
        })
    }

    fn name_pattern(&self) -> Option<&str> {
        match self {
            PlayerSearch::Name { pattern, .. } => Some(pattern),
            PlayerSearch::Uuid(_) => None,
        }
    }
}

/// `text` with LIKE's wildcards and escape character escaped.
fn like_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A player found.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct PlayerMatch {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen; None until a record carried one.
    pub username: Option<String>,
    /// The past name that matched, when the current name did not (the most recently used).
    pub matched_past_name: Option<String>,
    /// First record about them.
    pub first_seen: DateTime<Utc>,
    /// Latest record about them.
    pub last_seen: DateTime<Utc>,
    /// An open session on an online server.
    pub is_online: bool,
}

/// One search: what to match, filters, and the page wanted.
#[derive(Debug, Clone)]
pub struct PlayerQuery<'a> {
    /// The caller's account.
    pub account_id: Uuid,
    /// The account's offline rule (`AccountSettings::offline_after_seconds`).
    pub offline_after: f64,
    /// A UUID or name fragment; None lists every player.
    pub search: Option<&'a PlayerSearch>,
    /// Only players online now (true) or not (false).
    pub online: Option<bool>,
    /// Only players last seen at or after this time.
    pub from: Option<DateTime<Utc>>,
    /// Only players last seen before this time.
    pub to: Option<DateTime<Utc>>,
    /// Continue after this player (`last_seen`, `uuid`).
    pub after: Option<HistoryCursor>,
    /// Page size: up to `limit + 1` rows come back (the extra one says there is more).
    pub limit: i64,
}

/// Estimated matching names from which the walk of the newest-seen players is tried first.
/// PostgreSQL's floor for a pattern it knows nothing about is ~0.01% of the rows (130 of
/// 1.3M names); a fragment in 0.2% of names or more fills a page within the window.
pub const COMMON_ESTIMATE: f64 = 2000.0;

/// Players matching `query`, newest-seen first (`last_seen`, then `uuid`, descending).
pub async fn search_players(
    pool: &PgPool,
    query: &PlayerQuery<'_>,
) -> Result<Vec<PlayerMatch>, sqlx::Error> {
    if let Some(PlayerSearch::Name { pattern, prefix }) = query.search
        && estimated_names(pool, query.account_id, pattern, *prefix).await? >= COMMON_ESTIMATE
    {
        // The window answers exactly when it holds more than a page of matches: every
        // player outside it was seen before every player in it.
        let rows = query.run(pool, Some(RECENT_WINDOW)).await?;
        if rows.len() > usize::try_from(query.limit).unwrap_or(usize::MAX) {
            return Ok(rows);
        }
    }
    query.run(pool, None).await
}

/// The planner's estimate of the account's names (a prefix) or players (a substring)
/// matching `pattern` (no rows are read).
async fn estimated_names(
    pool: &PgPool,
    account_id: Uuid,
    pattern: &str,
    prefix: bool,
) -> Result<f64, sqlx::Error> {
    // A prefix is looked up name by name (player_names_prefix_idx), a substring in the
    // players' joined names (players_names_trgm_idx): each estimate comes from its index's
    // statistics.
    let sql = if prefix {
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM player_names n
         WHERE n.account_id = $1 AND lower(n.name) LIKE $2"
    } else {
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM players p
         WHERE p.account_id = $1 AND player_names_text(p.names) LIKE $2"
    };
    let plan: sqlx::types::JsonValue = sqlx::query_scalar(sql)
        .bind(account_id)
        .bind(pattern)
        .persistent(false)
        .fetch_one(pool)
        .await?;
    Ok(plan
        .pointer("/0/Plan/Plan Rows")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(COMMON_ESTIMATE))
}

impl PlayerQuery<'_> {
    /// Whether `player` (a `players` row alias) is online: an open session on a server that
    /// is online or has not sent a heartbeat yet, the rule of `crate::routes::liveness`,
    /// spelled out here so that binds number in order.
    fn push_online(&self, sql: &mut QueryBuilder<'_, Postgres>, player: &str) {
        sql.push(format!(
            "EXISTS (SELECT 1 FROM sessions se LEFT JOIN servers s \
               ON s.account_id = se.account_id AND s.id = se.server_id \
             WHERE se.account_id = {player}.account_id AND se.player_uuid = {player}.uuid \
               AND se.left_at IS NULL AND COALESCE(s.online_flag AND s.last_heartbeat_at > \
                 now() - make_interval(secs => "
        ))
        .push_bind(self.offline_after)
        .push("::float8), true))");
    }

    /// ` AND <player p has a name matching>`, from the names in its own row (`window`) or
    /// through the name indexes of `player_names`.
    fn push_name(&self, sql: &mut QueryBuilder<'_, Postgres>, window: bool) {
        match self.search {
            Some(PlayerSearch::Uuid(uuid)) => {
                sql.push(" AND p.uuid = ").push_bind(*uuid);
            }
            Some(PlayerSearch::Name { pattern, prefix }) if window => {
                // A cheap test on all the names joined by newlines first (a name matching
                // implies the joined text matches), then the exact test name by name.
                let joined = if *prefix {
                    format!("%\n{pattern}")
                } else {
                    pattern.clone()
                };
                sql.push(" AND (lower(p.username) LIKE ")
                    .push_bind(pattern.clone())
                    .push(" OR (E'\\n' || lower(array_to_string(p.names, E'\\n')) LIKE ")
                    .push_bind(joined)
                    .push(" AND EXISTS (SELECT 1 FROM unnest(p.names) AS n WHERE lower(n) LIKE ")
                    .push_bind(pattern.clone())
                    .push(")))");
            }
            Some(PlayerSearch::Name {
                pattern,
                prefix: true,
            }) => {
                sql.push(" AND p.uuid IN (SELECT n.player_uuid FROM player_names n WHERE n.account_id = ")
                    .push_bind(self.account_id)
                    .push(" AND lower(n.name) LIKE ")
                    .push_bind(pattern.clone())
                    .push(")");
            }
            // The joined names through players_names_trgm_idx (migration 0020), then the exact
            // test name by name: a fragment holding a newline could match across two names.
            Some(PlayerSearch::Name {
                pattern,
                prefix: false,
            }) => {
                sql.push(" AND player_names_text(p.names) LIKE ")
                    .push_bind(pattern.clone())
                    .push(" AND EXISTS (SELECT 1 FROM unnest(p.names) AS n WHERE lower(n) LIKE ")
                    .push_bind(pattern.clone())
                    .push(")");
            }
            None => {}
        }
    }

    /// The page (`limit + 1` rows): among the `window` newest-seen players past the cursor
    /// when given, else among all of them.
    async fn run(
        &self,
        pool: &PgPool,
        window: Option<i64>,
    ) -> Result<Vec<PlayerMatch>, sqlx::Error> {
        let mut sql = QueryBuilder::<Postgres>::new("SELECT c.uuid, c.username, ");
        match self.search.and_then(PlayerSearch::name_pattern) {
            // Which past name matched, for the page's rows only: the most recently used.
            Some(pattern) => {
                sql.push("CASE WHEN lower(c.username) LIKE ")
                    .push_bind(pattern.to_owned())
                    .push(
                        " THEN NULL ELSE (SELECT n.name FROM player_names n \
                         WHERE n.account_id = c.account_id AND n.player_uuid = c.uuid \
                           AND lower(n.name) LIKE ",
                    )
                    .push_bind(pattern.to_owned())
                    .push(" ORDER BY n.last_seen DESC, n.name LIMIT 1) END");
            }
            None => {
                sql.push("NULL::text");
            }
        }
        sql.push(" AS matched_past_name, c.first_seen, c.last_seen, ");
        self.push_online(&mut sql, "c");
        sql.push(
            " AS is_online FROM (SELECT * FROM (SELECT * FROM players p WHERE p.account_id = ",
        )
        .push_bind(self.account_id);
        push_range(&mut sql, "p.last_seen", self.from, self.to);
        if let Some(cursor) = self.after {
            sql.push(" AND (p.last_seen, p.uuid) < (")
                .push_bind(cursor.at)
                .push(", ")
                .push_bind(cursor.key)
                .push(")");
        }
        match window {
            // The window is one range of players_account_last_seen_idx; the names are then
            // matched within it.
            Some(window) => {
                sql.push(" ORDER BY p.last_seen DESC, p.uuid DESC LIMIT ")
                    .push_bind(window)
                    .push(") p WHERE true");
                self.push_name(&mut sql, true);
            }
            // For a name, OFFSET 0 keeps the match inside, where the name indexes serve it,
            // instead of letting the planner walk every player newest first. Without one,
            // that walk (players_account_last_seen_idx) is the plan wanted.
            None => {
                self.push_name(&mut sql, false);
                if self.search.and_then(PlayerSearch::name_pattern).is_some() {
                    sql.push(" OFFSET 0");
                }
                sql.push(") p WHERE true");
            }
        }
        // Online status is worked out for the page only, unless it filters.
        if let Some(online) = self.online {
            sql.push(" AND ");
            self.push_online(&mut sql, "p");
            sql.push(" = ").push_bind(online);
        }
        sql.push(" ORDER BY p.last_seen DESC, p.uuid DESC LIMIT ")
            .push_bind(self.limit + 1)
            .push(") c ORDER BY c.last_seen DESC, c.uuid DESC");
        // Unprepared: planned with the pattern's value each time, so a prefix becomes an
        // index range (a cached generic plan cannot use LIKE's prefix).
        sql.build_query_as::<PlayerMatch>()
            .persistent(false)
            .fetch_all(pool)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(pattern: &str, prefix: bool) -> Result<PlayerSearch, SearchRefused> {
        Ok(PlayerSearch::Name {
            pattern: pattern.into(),
            prefix,
        })
    }

    #[test]
    fn short_fragments_are_prefixes_longer_ones_substrings_and_uuids_exact() {
        assert_eq!(PlayerSearch::parse(" St "), name("st%", true));
        assert_eq!(PlayerSearch::parse("Steve_1"), name("%steve\\_1%", false));
        assert_eq!(PlayerSearch::parse("50%"), name("%50\\%%", false));
        let id = Uuid::new_v4();
        assert_eq!(
            PlayerSearch::parse(&id.to_string().to_uppercase()),
            Ok(PlayerSearch::Uuid(id))
        );
    }

    #[test]
    fn too_short_too_long_and_nul_are_refused() {
        assert_eq!(PlayerSearch::parse("a"), Err(SearchRefused::Length));
        assert_eq!(PlayerSearch::parse("   "), Err(SearchRefused::Length));
        assert_eq!(
            PlayerSearch::parse(&"x".repeat(MAX_SEARCH + 1)),
            Err(SearchRefused::Length)
        );
        assert!(PlayerSearch::parse(&"é".repeat(MAX_SEARCH)).is_ok());
        assert_eq!(PlayerSearch::parse("ab\0c"), Err(SearchRefused::Nul));
    }
}
