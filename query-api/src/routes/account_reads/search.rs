//! `GET /api/players`: find players by any name they have or had, or by UUID, optionally
//! only those online now or seen recently; newest-seen first. The SQL is shared with the
//! `/players` page ([`crate::queries::player_search`]).

use super::params::{self, ListParams};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::queries::player_search::{
    PlayerMatch, PlayerQuery, PlayerSearch, search_players as run,
};
use crate::routes::admin_settings::AccountSettings;
use crate::routes::history::HistoryCursor;
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use utoipa::ToSchema;
use uuid::Uuid;

/// A player found.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerSummary {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen; null until a record carried one.
    pub username: Option<String>,
    /// The past name that matched `search` when the current name did not (the most recently
    /// used of those that matched); null when the current name matched or there was no name
    /// search.
    pub matched_past_name: Option<String>,
    /// First record about them (UTC).
    pub first_seen: DateTime<Utc>,
    /// Latest record about them (UTC).
    pub last_seen: DateTime<Utc>,
    /// An open session on an online server.
    pub is_online: bool,
}

impl From<PlayerMatch> for PlayerSummary {
    fn from(m: PlayerMatch) -> PlayerSummary {
        PlayerSummary {
            uuid: m.uuid,
            username: m.username,
            matched_past_name: m.matched_past_name,
            first_seen: m.first_seen,
            last_seen: m.last_seen,
            is_online: m.is_online,
        }
    }
}

/// A page of players.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerSearchPage {
    /// Newest-seen first (`last_seen`, then `uuid`, descending).
    pub items: Vec<PlayerSummary>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// The list's filters.
#[derive(Debug, Default)]
struct Filter {
    search: Option<PlayerSearch>,
    online: Option<bool>,
}

fn parse(query: Option<&str>) -> Result<(ListParams, Filter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = Filter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "search" => match PlayerSearch::parse(value) {
                Ok(search) => filter.search = Some(search),
                Err(refused) => errors.push(key, refused.code(), refused.message()),
            },
            "online" => filter.online = params::boolean(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// Search the account's players by any name they have or had (case-insensitive substring;
/// 2-character fragments match the start of a name) or exact UUID, newest-seen first.
#[utoipa::path(get, path = "/api/players", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("search" = Option<String>, Query, description = "A UUID (exact), or part of a current or past name (case-insensitive; 2 characters: the start of a name; 3 or more: anywhere in it); 2..=100 characters once trimmed. `matched_past_name` says which past name matched"),
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
    let rows = run(
        &state.reads,
        &PlayerQuery {
            account_id: caller.account_id,
            offline_after: settings.offline_after_seconds(),
            search: filter.search.as_ref(),
            online: filter.online,
            from: list.from,
            to: list.to,
            after: list.page.cursor,
            limit: list.page.limit,
        },
    )
    .await?;
    let (items, next_cursor) = list.page.finish(rows, |p| HistoryCursor {
        at: p.last_seen,
        key: p.uuid,
    });
    Ok(Json(PlayerSearchPage {
        items: items.into_iter().map(PlayerSummary::from).collect(),
        next_cursor,
    }))
}
