//! `/servers`: every server with its status, TPS, players and version (as `GET /api/servers`).
//! `/servers/{id}?range=1h|24h|7d|30d`: one server's TPS and player-count charts (min-max band
//! and average, downsampled on the server by [`server_chart`]), its downtime and low-TPS spells
//! marked on the charts and listed below, and the same figures as a table. A server of another
//! account, or none, is the 404 page.

use super::charts::{self, ChartData, SummaryRow};
use super::display;
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, params, render};
use crate::queries::{
    ChartRange, Downtime, LOW_TPS_THRESHOLD, LowTpsSpell, ServerChart, server_chart,
};
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use chrono::{DateTime, Utc};
use uuid::Uuid;

const PATH: &str = "/servers";

/// The servers list.
#[derive(Template)]
#[template(path = "servers.html")]
struct ServersPage {
    shell: Shell,
    servers: Vec<ServerStatus>,
}

/// One server's page.
#[derive(Template)]
#[template(path = "server.html")]
struct ServerPage {
    shell: Shell,
    /// Its name as pages write it.
    name: String,
    chart: ServerChart,
    /// The ranges to switch to, with whether each is the one shown.
    ranges: Vec<(ChartRange, bool)>,
    tps_json: String,
    players_json: String,
    rows: Vec<SummaryRow>,
    /// The table's row width, in words.
    row_width: String,
    threshold: f64,
}

impl ServerPage {
    /// How long a downtime lasted (so far, while it goes on).
    fn downtime_length(&self, downtime: &Downtime) -> String {
        let to = downtime.to.unwrap_or_else(Utc::now);
        display::duration((to - downtime.from).num_seconds())
    }

    fn spell_length(&self, spell: &LowTpsSpell) -> String {
        display::duration((spell.to - spell.from).num_seconds())
    }

    /// One bucket's width in words.
    fn bucket_text(&self) -> String {
        display::duration(self.chart.bucket_seconds)
    }

    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn range_label(&self, range: &ChartRange) -> &'static str {
        match range {
            ChartRange::Hour => "1 hour",
            ChartRange::Day => "24 hours",
            ChartRange::Week => "7 days",
            ChartRange::Month => "30 days",
        }
    }
}

/// `/servers` and `/servers/{id}`.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(list))
        .route("/servers/{id}", get(one))
}

async fn list(caller: SignedIn, State(state): State<AppState>) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let servers = server_statuses(&state.reads, caller.member().account_id).await?;
    render(&ServersPage { shell, servers })
}

async fn one(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    // Not a UUID: no such server, like one of another account.
    let id: Uuid = id.parse().map_err(|_| PageError::NotFound)?;
    let range = params::value(query.as_deref(), "range")
        .and_then(|name| ChartRange::parse(&name))
        .unwrap_or_default();
    let account = caller.member().account_id;
    let chart = server_chart(&state.reads, account, id, range, Utc::now())
        .await?
        .ok_or(PageError::NotFound)?;
    let marks = (&chart.downtime[..], &chart.low_tps[..], chart.to);
    let tps: ChartData = charts::band("TPS", &chart.points, |p| p.tps, marks);
    let players = charts::band("players", &chart.points, |p| p.players, marks);
    let row_width = match range {
        ChartRange::Hour => "5 minutes",
        ChartRange::Day => "hour",
        ChartRange::Week => "6 hours",
        ChartRange::Month => "day",
    };
    render(&ServerPage {
        shell,
        name: display::server_name(chart.server.name.as_deref(), &chart.server.id),
        ranges: ChartRange::ALL.map(|r| (r, r == range)).to_vec(),
        tps_json: display::json(&tps),
        players_json: display::json(&players),
        rows: charts::summarize(&chart.points, range),
        row_width: row_width.to_owned(),
        threshold: LOW_TPS_THRESHOLD,
        chart,
    })
}
