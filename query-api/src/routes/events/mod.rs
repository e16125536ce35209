//! `GET /api/v1/events`: the account's event timeline, newest first, with keyset paging.

mod filter;

pub use filter::{Cursor, DEFAULT_LIMIT, EventFilter, MAX_LIMIT, MAX_NAMES};

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::state::AppState;
use crate::team::Visibility;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::value::RawValue;
use shared::problem::Problem;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One event on the timeline.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventItem {
    /// The event's id (client-chosen or assigned at ingest).
    pub id: Uuid,
    /// Position in the event log: stream sequence * 1000 + index in the log message.
    pub seq: i64,
    /// Event name; internal events use the reserved prefixes.
    pub name: String,
    /// The player it is tied to.
    pub player_uuid: Option<Uuid>,
    /// Exactly the JSON the client sent (numbers, key order and all).
    #[schema(value_type = Object)]
    pub properties: Box<RawValue>,
    /// When it happened (UTC).
    pub occurred_at: DateTime<Utc>,
    /// When the service received it (UTC).
    pub received_at: DateTime<Utc>,
    /// Whether `properties` were withheld from the reader ([`Visibility::properties`]); never
    /// for a key, so never on the wire.
    #[serde(skip)]
    pub withheld: bool,
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// Newest first (`occurred_at`, then `seq`, descending).
    pub items: Vec<EventItem>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

#[derive(Debug, sqlx::FromRow)]
struct EventRow {
    id: Uuid,
    seq: i64,
    name: String,
    player_uuid: Option<Uuid>,
    properties: String,
    occurred_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/v1/events", get(list_events))
}

/// List the account's events, newest first.
#[utoipa::path(get, path = "/api/v1/events", tag = "events",
    security(("dashboard_key" = [])),
    params(
        ("name" = Option<Vec<String>>, Query, explode = true,
            description = "Only these event names; repeat for several (`?name=a&name=b`)"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only this player's events"),
        ("from" = Option<DateTime<Utc>>, Query, description = "occurred_at at or after (RFC 3339)"),
        ("to" = Option<DateTime<Utc>>, Query, description = "occurred_at before (RFC 3339)"),
        ("internal" = Option<bool>, Query, description = "Include internal events (session_, chat_, punish_, rank_...); default false"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of events", body = EventPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_events(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<EventPage>, ApiError> {
    let filter = EventFilter::parse(query.as_deref().unwrap_or(""))?;
    Ok(Json(
        read_page(&state.reads, caller.account_id, &filter, Visibility::KEY).await?,
    ))
}

/// One page of `account_id`'s events under `filter`, as `visibility` may see them: what the
/// API answers and the Events page shows (`crate::pages::events`).
pub async fn read_page(
    reads: &PgPool,
    account_id: Uuid,
    filter: &EventFilter,
    visibility: Visibility,
) -> Result<EventPage, ApiError> {
    let mut sql = QueryBuilder::<Postgres>::new(
        "SELECT id, seq, name, player_uuid, properties::text AS properties, occurred_at, \
         received_at FROM events WHERE account_id = ",
    );
    sql.push_bind(account_id);
    // One name is compared with `=`: PostgreSQL (before 17) reads `name = ANY(...)` with the
    // time index and filters, so a rare name scanned thousands of rows (measured by
    // `./deploy/bench.sh`: event search p99 61 ms on 1M events); with `=` the
    // (account_id, name, occurred_at, seq) index serves the page in order (~0.1 ms).
    match filter.names.as_slice() {
        [] => {}
        [name] => {
            sql.push(" AND name = ").push_bind(name.clone());
        }
        names => {
            sql.push(" AND name = ANY(")
                .push_bind(names.to_vec())
                .push(")");
        }
    }
    if let Some(player) = filter.player_uuid {
        sql.push(" AND player_uuid = ").push_bind(player);
    }
    if let Some(from) = filter.from {
        sql.push(" AND occurred_at >= ").push_bind(from);
    }
    if let Some(to) = filter.to {
        sql.push(" AND occurred_at < ").push_bind(to);
    }
    if !filter.internal {
        sql.push(" AND NOT is_internal");
    }
    if let Some(cursor) = &filter.cursor {
        sql.push(" AND (occurred_at, seq) < (")
            .push_bind(cursor.at)
            .push(", ")
            .push_bind(cursor.key)
            .push(")");
    }
    // One row past the page says whether there is a next page.
    sql.push(" ORDER BY occurred_at DESC, seq DESC LIMIT ")
        .push_bind(filter.limit + 1);
    let mut rows = sql.build_query_as::<EventRow>().fetch_all(reads).await?;
    let more = rows.len() > usize::try_from(filter.limit).unwrap_or(usize::MAX);
    rows.truncate(usize::try_from(filter.limit).unwrap_or(0));
    let next_cursor = more.then(|| rows.last()).flatten().map(|last| {
        Cursor {
            at: last.occurred_at,
            key: last.seq,
        }
        .encode()
    });
    let items = rows
        .into_iter()
        .map(|row| {
            let withheld = !visibility.shows(&row.name);
            let shown = visibility.properties(&row.name, &row.properties).to_owned();
            Ok(EventItem {
                properties: RawValue::from_string(shown)
                    .map_err(|e| ApiError::Internal(e.into()))?,
                withheld,
                id: row.id,
                seq: row.seq,
                name: row.name,
                player_uuid: row.player_uuid,
                occurred_at: row.occurred_at,
                received_at: row.received_at,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(EventPage { items, next_cursor })
}
