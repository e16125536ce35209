//! `GET /api/flags`: the whole account's anti-cheat flags, newest first, filtered.

use super::params::{self, ListParams, PlayerRef};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::flags::{COLUMNS, FlagItem};
use crate::routes::history::{HistoryCursor, PageRequest};
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use shared::records::AnticheatFlag;
use shared::validation::FieldErrors;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One flag of the account, with the player it was raised against.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct AccountFlag {
    /// The flagged player.
    pub player_uuid: Uuid,
    /// Their latest name; null until a record carried one.
    pub player_username: Option<String>,
    /// The flag, as in a player's history.
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub flag: FlagItem,
}

/// A page of the account's flags.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountFlagPage {
    /// Newest first (`flagged_at`, then `id`, descending).
    pub items: Vec<AccountFlag>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// What the account's flags are filtered by: every field narrows them, none is required.
/// `GET /api/flags`, the Anti-cheat page and its live feed ([`FlagFilter::matches`]) all
/// apply the same filter.
#[derive(Debug, Default, Clone)]
pub struct FlagFilter {
    /// This check (case-insensitive, exact).
    pub check_name: Option<String>,
    /// Raised against this player.
    pub player: Option<PlayerRef>,
    /// Raised on this server.
    pub server: Option<Uuid>,
    /// At least this violation level.
    pub min_vl: Option<f64>,
    /// Raised at or after.
    pub from: Option<DateTime<Utc>>,
    /// Raised before.
    pub to: Option<DateTime<Utc>>,
}

impl FlagFilter {
    /// Whether a flag as logged passes the filter; `players` are the UUIDs a player name was
    /// resolved to when the feed started (a name the flag itself carries matches too).
    pub fn matches(&self, flag: &AnticheatFlag, at: DateTime<Utc>, players: &[Uuid]) -> bool {
        let check = self
            .check_name
            .as_ref()
            .is_none_or(|check| check.to_lowercase() == flag.check_name.to_lowercase());
        let player = match &self.player {
            None => true,
            Some(PlayerRef::Uuid(uuid)) => flag.player_uuid == *uuid,
            Some(PlayerRef::Name(name)) => {
                players.contains(&flag.player_uuid)
                    || flag
                        .player_name
                        .as_ref()
                        .is_some_and(|own| own.to_lowercase() == name.to_lowercase())
            }
        };
        check
            && player
            && self.server.is_none_or(|server| flag.server_id == server)
            && self.min_vl.is_none_or(|vl| flag.violation_level >= vl)
            && self.from.is_none_or(|from| at >= from)
            && self.to.is_none_or(|to| at < to)
    }
}

/// Reads `min_vl`: a finite number, or an `invalid_number` error.
pub fn min_vl(errors: &mut FieldErrors, field: &str, value: &str) -> Option<f64> {
    match value.trim().parse::<f64>() {
        Ok(vl) if vl.is_finite() => Some(vl),
        _ => {
            errors.push(field, "invalid_number", "must be a finite number");
            None
        }
    }
}

fn parse(query: Option<&str>) -> Result<(PageRequest, FlagFilter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = FlagFilter {
        from: list.from,
        to: list.to,
        ..FlagFilter::default()
    };
    for (key, value) in &list.rest {
        match key.as_str() {
            "check_name" => filter.check_name = params::text(&mut errors, key, value),
            "player_uuid" => {
                filter.player = params::uuid(&mut errors, key, value).map(PlayerRef::Uuid);
            }
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "min_vl" => filter.min_vl = min_vl(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list.page, filter))
}

/// One page of the account's flags that match `filter`, newest first.
pub async fn read_page(
    pool: &PgPool,
    account_id: Uuid,
    filter: &FlagFilter,
    page: &PageRequest,
) -> Result<AccountFlagPage, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT f.player_uuid, target.username AS player_username, {COLUMNS} \
         FROM anticheat_flags f \
         LEFT JOIN players target ON target.account_id = f.account_id \
           AND target.uuid = f.player_uuid \
         WHERE f.account_id = "
    ));
    sql.push_bind(account_id);
    if let Some(check) = &filter.check_name {
        sql.push(" AND lower(f.check_name) = lower(")
            .push_bind(check.clone())
            .push(")");
    }
    if let Some(player) = &filter.player {
        player.push_match(&mut sql, account_id, "f.player_uuid", None);
    }
    if let Some(server) = filter.server {
        sql.push(" AND f.server_id = ").push_bind(server);
    }
    if let Some(min_vl) = filter.min_vl {
        sql.push(" AND f.violation_level >= ").push_bind(min_vl);
    }
    params::push_range(&mut sql, "f.flagged_at", filter.from, filter.to);
    page.push_keyset(&mut sql, "f.flagged_at", "f.id");
    let rows = sql.build_query_as::<AccountFlag>().fetch_all(pool).await?;
    let (items, next_cursor) = page.finish(rows, |f| HistoryCursor {
        at: f.flag.flagged_at,
        key: f.flag.id,
    });
    Ok(AccountFlagPage { items, next_cursor })
}

/// The account's anti-cheat flags, newest first, with filters.
#[utoipa::path(get, path = "/api/flags", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("check_name" = Option<String>, Query, min_length = 1, max_length = 100, pattern = "^[^\\x00]*$", description = "Only this check (case-insensitive, exact; 1..=100 characters)"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only flags of this player"),
        ("server_id" = Option<Uuid>, Query, description = "Only flags raised on this server"),
        ("min_vl" = Option<f64>, Query, description = "Only flags with at least this violation level"),
        ("from" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Raised at or after (RFC 3339)"),
        ("to" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Raised before (RFC 3339)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of flags", body = AccountFlagPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_flags(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AccountFlagPage>, ApiError> {
    let (page, filter) = parse(query.as_deref())?;
    let page = read_page(&state.reads, caller.account_id, &filter, &page).await?;
    Ok(Json(page))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(check: &str, vl: f64, name: Option<&str>) -> AnticheatFlag {
        AnticheatFlag {
            server_id: Uuid::from_u128(1),
            player_uuid: Uuid::from_u128(2),
            player_name: name.map(str::to_owned),
            check_name: check.to_owned(),
            check_type: None,
            violation_level: vl,
            detail: None,
            source_plugin: None,
            is_experimental: None,
            ping_ms: None,
            tps: None,
            flagged_at: None,
        }
    }

    #[test]
    fn a_live_flag_passes_the_filter_the_list_applies() {
        let at = Utc::now();
        let filter = FlagFilter {
            check_name: Some("reach".into()),
            min_vl: Some(5.0),
            server: Some(Uuid::from_u128(1)),
            ..FlagFilter::default()
        };
        assert!(filter.matches(&flag("Reach", 5.0, None), at, &[]));
        assert!(!filter.matches(&flag("Reach", 4.9, None), at, &[]));
        assert!(!filter.matches(&flag("Timer", 9.0, None), at, &[]));
        let elsewhere = FlagFilter {
            server: Some(Uuid::from_u128(3)),
            ..FlagFilter::default()
        };
        assert!(!elsewhere.matches(&flag("Reach", 9.0, None), at, &[]));

        // A name: the players it was resolved to, or the name the flag itself carries.
        let named = FlagFilter {
            player: Some(PlayerRef::Name("hacker".into())),
            ..FlagFilter::default()
        };
        assert!(named.matches(&flag("Reach", 1.0, Some("Hacker")), at, &[]));
        assert!(named.matches(&flag("Reach", 1.0, None), at, &[Uuid::from_u128(2)]));
        assert!(!named.matches(&flag("Reach", 1.0, Some("Other")), at, &[]));

        let window = FlagFilter {
            to: Some(at),
            ..FlagFilter::default()
        };
        assert!(!window.matches(&flag("Reach", 1.0, None), at, &[]));
    }
}
