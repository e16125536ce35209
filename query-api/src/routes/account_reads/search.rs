//! `GET /api/players`: find players by name or UUID, optionally only those online now or
//! seen recently; newest-seen first.
//!
//! The read model keeps each player's latest name only (`players.username`), so past names
//! are not searched.

use super::params::{self, ListParams, like_literal};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::admin_settings::AccountSettings;
use crate::routes::history::HistoryCursor;
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// Shortest name fragment searched as a substring: a trigram index needs three characters;
/// a shorter one is matched as a prefix (a btree range) instead of scanning every player.
pub const MIN_SUBSTRING: usize = 3;

/// A player found.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct PlayerSummary {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen; null until a record carried one.
    pub username: Option<String>,
    /// First record about them (UTC).
    pub first_seen: DateTime<Utc>,
    /// Latest record about them (UTC).
    pub last_seen: DateTime<Utc>,
    /// An open session on an online server.
    pub is_online: bool,
}

/// A page of players.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerSearchPage {
    /// Newest-seen first (`last_seen`, then `uuid`, descending).
    pub items: Vec<PlayerSummary>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// What `?search` asks for.
#[derive(Debug, PartialEq)]
enum Search {
    Uuid(Uuid),
    /// A LIKE pattern over `lower(username)`.
    Name(String),
}

impl Search {
    fn new(text: &str) -> Search {
        if let Ok(uuid) = Uuid::parse_str(text) {
            return Search::Uuid(uuid);
        }
        let literal = like_literal(&text.to_lowercase());
        if text.chars().count() < MIN_SUBSTRING {
            Search::Name(format!("{literal}%"))
        } else {
            Search::Name(format!("%{literal}%"))
        }
    }
}

/// The list's filters.
#[derive(Debug, Default)]
struct Filter {
    search: Option<Search>,
    online: Option<bool>,
}

fn parse(query: Option<&str>) -> Result<(ListParams, Filter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = Filter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "search" => {
                filter.search =
                    params::text(&mut errors, key, value.trim()).map(|t| Search::new(&t));
            }
            "online" => filter.online = params::boolean(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// Search the account's players by name (case-insensitive substring; fragments shorter than
/// 3 characters match as a prefix) or exact UUID, newest-seen first.
#[utoipa::path(get, path = "/api/players", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("search" = Option<String>, Query, description = "A UUID (exact), or part of the current name (case-insensitive; under 3 characters: the name's start); 1..=100 characters once trimmed"),
        ("online" = Option<bool>, Query, description = "Only players online now (true) or not (false)"),
        ("from" = Option<DateTime<Utc>>, Query, description = "Only players last seen at or after this time (RFC 3339): recently seen"),
        ("to" = Option<DateTime<Utc>>, Query, description = "Only players last seen before this time (RFC 3339)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of players", body = PlayerSearchPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn search_players(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<PlayerSearchPage>, ApiError> {
    let (list, filter) = parse(query.as_deref())?;
    let settings = AccountSettings::load(&state.reads, caller.account_id).await?;
    let search = Query {
        account_id: caller.account_id,
        offline_after: settings.offline_after_seconds(),
        list: &list,
        filter: &filter,
    };
    // A name pattern is tried first against the newest-seen players only: a common fragment
    // fills the page there in a few milliseconds. Only when it does not is the whole account
    // searched through the name index, which is then fast because the fragment is rare.
    let mut rows = Vec::new();
    if matches!(filter.search, Some(Search::Name(_))) {
        rows = search.run(&state.reads, Some(RECENT_WINDOW)).await?;
    }
    if rows.len() <= usize::try_from(list.page.limit).unwrap_or(usize::MAX) {
        rows = search.run(&state.reads, None).await?;
    }
    let (items, next_cursor) = list.page.finish(rows, |p| HistoryCursor {
        at: p.last_seen,
        key: p.uuid,
    });
    Ok(Json(PlayerSearchPage { items, next_cursor }))
}

/// How many of the newest-seen players (past the cursor) a name search reads first.
const RECENT_WINDOW: i64 = 4000;

/// One search, ready to run.
struct Query<'a> {
    account_id: Uuid,
    offline_after: f64,
    list: &'a ListParams,
    filter: &'a Filter,
}

impl Query<'_> {
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

    /// The page (`limit + 1` rows): among the `window` newest-seen players past the cursor
    /// when given, else among all of them.
    async fn run(
        &self,
        pool: &sqlx::PgPool,
        window: Option<i64>,
    ) -> Result<Vec<PlayerSummary>, sqlx::Error> {
        let mut sql =
            QueryBuilder::<Postgres>::new("SELECT c.uuid, c.username, c.first_seen, c.last_seen, ");
        self.push_online(&mut sql, "c");
        sql.push(
            " AS is_online FROM (SELECT * FROM (SELECT * FROM players p WHERE p.account_id = ",
        )
        .push_bind(self.account_id);
        self.list.push_range(&mut sql, "p.last_seen");
        if let Some(cursor) = self.list.page.cursor {
            sql.push(" AND (p.last_seen, p.uuid) < (")
                .push_bind(cursor.at)
                .push(", ")
                .push_bind(cursor.key)
                .push(")");
        }
        let name = |sql: &mut QueryBuilder<'_, Postgres>| match &self.filter.search {
            Some(Search::Uuid(uuid)) => {
                sql.push(" AND p.uuid = ").push_bind(*uuid);
            }
            Some(Search::Name(pattern)) => {
                sql.push(" AND lower(p.username) LIKE ")
                    .push_bind(pattern.clone());
            }
            None => {}
        };
        match window {
            // The window is one range of players_account_last_seen_idx; the name is then
            // matched within it.
            Some(window) => {
                sql.push(" ORDER BY p.last_seen DESC, p.uuid DESC LIMIT ")
                    .push_bind(window)
                    .push(") p WHERE true");
                name(&mut sql);
            }
            // For a name, OFFSET 0 keeps the match inside, where the trigram or prefix index
            // serves it, instead of letting the planner walk every player newest first.
            // Without one, that walk (players_account_last_seen_idx) is the plan wanted.
            None => {
                name(&mut sql);
                if matches!(self.filter.search, Some(Search::Name(_))) {
                    sql.push(" OFFSET 0");
                }
                sql.push(") p WHERE true");
            }
        }
        // Online status is worked out for the page only, unless it filters.
        if let Some(online) = self.filter.online {
            sql.push(" AND ");
            self.push_online(&mut sql, "p");
            sql.push(" = ").push_bind(online);
        }
        sql.push(" ORDER BY p.last_seen DESC, p.uuid DESC LIMIT ")
            .push_bind(self.list.page.limit + 1)
            .push(") c ORDER BY c.last_seen DESC, c.uuid DESC");
        sql.build_query_as::<PlayerSummary>().fetch_all(pool).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_fragments_are_prefixes_and_uuids_are_exact() {
        assert_eq!(Search::new("St"), Search::Name("st%".into()));
        assert_eq!(Search::new("Steve_1"), Search::Name("%steve\\_1%".into()));
        let id = Uuid::new_v4();
        assert_eq!(Search::new(&id.to_string()), Search::Uuid(id));
    }
}
