//! `/`: the Overview. For now the network at a glance (servers online of total, players online
//! now), read with the same query as `GET /api/servers`; `/overview/summary` is the partial htmx
//! refreshes every 30 seconds.

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::routes::servers::server_statuses;
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;

/// The network at a glance.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// Servers online now.
    pub servers_online: usize,
    /// Servers that ever sent a heartbeat.
    pub servers_total: usize,
    /// Players on the online servers at their last heartbeat.
    pub players_online: i64,
}

/// The Overview page.
#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    shell: Shell,
    summary: Summary,
}

/// The summary alone, for htmx.
#[derive(Template)]
#[template(path = "partials/overview_summary.html")]
struct SummaryPartial {
    summary: Summary,
}

/// `/` and `/overview/summary`.
pub fn router() -> PageRoutes {
    Router::new()
        .route("/", get(overview))
        .route("/overview/summary", get(summary_partial))
}

async fn summary(state: &AppState, caller: &SignedIn) -> Result<Summary, PageError> {
    let servers = server_statuses(&state.reads, caller.member().account_id).await?;
    let online = servers.iter().filter(|s| s.is_online);
    Ok(Summary {
        servers_online: online.clone().count(),
        servers_total: servers.len(),
        players_online: online.filter_map(|s| s.player_count).map(i64::from).sum(),
    })
}

async fn overview(caller: SignedIn, State(state): State<AppState>) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, "/")?;
    let summary = summary(&state, &caller).await?;
    render(&OverviewPage { shell, summary })
}

async fn summary_partial(
    caller: SignedIn,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, "/")?;
    let summary = summary(&state, &caller).await?;
    render(&SummaryPartial { summary })
}
