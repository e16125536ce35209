//! `/`: the Overview. Servers online of total and players online now, each server's TPS, the
//! network's players online over the last 24 hours (a chart, and its points as a table), staff online
//! now, and the activity feed (the latest items as rendered; `activity_stream.rs` adds new ones
//! live). Everything comes from [`crate::queries::overview`], as `GET /api/overview` does.
//! `/overview/summary` is the partial htmx refreshes every 30 seconds.

use super::activity::{ActivityItem, mark_banned_alts, sees_alts, visible_to};
use super::charts::{self, NetworkRow};
use super::display;
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, activity_stream, render};
use crate::queries::overview::{overview as read_overview, players_online};
use crate::routes::alerts::destinations::Destination;
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::routes::staff::StaffMember;
use crate::state::AppState;
use crate::team::Area;
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use chrono::Utc;
use std::collections::HashMap;
use uuid::Uuid;

/// The network at a glance, and each server now.
#[derive(Debug)]
pub struct Summary {
    /// Servers online now.
    pub servers_online: usize,
    /// Servers that ever sent a heartbeat.
    pub servers_total: usize,
    /// Players on the online game servers at their last heartbeat (proxies left out).
    pub players_online: i64,
    /// Every server, ordered by name.
    pub servers: Vec<ServerStatus>,
}

impl Summary {
    fn of(servers: Vec<ServerStatus>) -> Summary {
        Summary {
            servers_online: servers.iter().filter(|s| s.is_online).count(),
            servers_total: servers.len(),
            players_online: players_online(&servers),
            servers,
        }
    }

    /// The name of the account's server `id`, as pages write it.
    fn server_name(&self, id: &Uuid) -> Option<String> {
        self.servers
            .iter()
            .find(|s| s.id == *id)
            .map(|s| display::server_name(s.name.as_deref(), &s.id))
    }
}

/// A staff member online now, as the Overview lists them.
#[derive(Debug)]
struct OnDuty {
    member: StaffMember,
    server: Option<String>,
    /// How long their current session has lasted.
    session: Option<String>,
}

/// The Overview page.
#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    shell: Shell,
    summary: Summary,
    /// The network chart's data (JSON).
    network_json: String,
    /// The same points as a table.
    network_rows: Vec<NetworkRow>,
    staff: Vec<OnDuty>,
    activity: Vec<ActivityItem>,
    /// Where the feed's live items come from, starting after what the page shows.
    stream_url: String,
    /// Alert destinations disabled (by a person or after failing for days): announced to
    /// owners and admins, who can enable them again.
    disabled_destinations: Vec<Destination>,
}

/// The summary alone, for htmx.
#[derive(Template)]
#[template(path = "partials/overview_summary.html")]
struct SummaryPartial {
    summary: Summary,
}

/// `/`, `/overview/summary` and the activity stream.
pub fn router() -> PageRoutes {
    Router::new()
        .route("/", get(overview))
        .route("/overview/summary", get(summary_partial))
        .merge(activity_stream::router())
}

async fn overview(caller: SignedIn, State(state): State<AppState>) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, "/")?;
    let member = caller.member();
    // Read before the read models: the live feed starts after this point of the log, so an
    // item written while the page loads comes over the stream rather than falling between.
    let stream_url = match state.live.log_position().await {
        Ok(position) => format!("{}?after={position}", activity_stream::PATH),
        Err(error) => {
            tracing::warn!(%error, "no log position for the activity feed; it starts live");
            activity_stream::PATH.to_owned()
        }
    };
    let disabled_destinations = async {
        if member.role.allows(Area::Alerts) {
            crate::routes::alerts::destinations::list(&state.pool, member.account_id)
                .await
                .map(|all| all.into_iter().filter(|d| !d.enabled).collect())
        } else {
            Ok(Vec::new())
        }
    };
    // The alert destinations come from the main pool: the two waits overlap.
    let now = Utc::now();
    let (data, disabled_destinations) = tokio::join!(
        read_overview(&state.reads, member.account_id, now),
        disabled_destinations,
    );
    let (data, disabled_destinations): (_, Vec<_>) = (data?, disabled_destinations?);
    let summary = Summary::of(data.servers);
    let staff = data
        .staff_online
        .into_iter()
        .map(|member| OnDuty {
            server: member
                .current_server_id
                .and_then(|id| summary.server_name(&id)),
            session: member
                .session_started_at
                .map(|start| display::duration((now - start).num_seconds())),
            member,
        })
        .collect();
    let mut activity: Vec<ActivityItem> = data
        .activity
        .into_iter()
        .filter(|a| visible_to(member.role, a.kind))
        .map(|activity| {
            let server_name = activity.server_id.and_then(|id| summary.server_name(&id));
            ActivityItem::new(activity, server_name)
        })
        .collect();
    if sees_alts(member.role) {
        mark_banned_alts(
            &state.reads,
            member.account_id,
            &mut activity,
            &HashMap::new(),
        )
        .await?;
    }
    render(&OverviewPage {
        disabled_destinations,
        shell,
        network_json: display::json(&charts::network(&data.network)),
        network_rows: charts::network_rows(&data.network),
        summary,
        staff,
        activity,
        stream_url,
    })
}

async fn summary_partial(
    caller: SignedIn,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, "/")?;
    let servers = server_statuses(&state.reads, caller.member().account_id).await?;
    render(&SummaryPartial {
        summary: Summary::of(servers),
    })
}
