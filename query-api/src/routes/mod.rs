//! Every HTTP route of the service, one module per resource.

pub mod account_reads;
pub mod admin_accounts;
pub mod admin_keys;
pub mod admin_settings;
pub mod admin_team;
pub mod alerts;
pub mod chatlog;
pub mod erasure;
pub mod events;
pub mod events_stream;
pub mod exchange_rates;
pub mod flags;
pub mod funnels;
pub mod history;
pub mod liveness;
pub mod openapi;
pub mod overview;
pub mod paging;
pub mod player_export;
pub mod players;
pub mod privacy;
pub mod punishments;
pub mod retention;
pub mod reviews;
pub mod server_history;
pub mod servers;
pub mod staff;
pub mod staff_leaderboard;
pub mod trends;

use crate::auth::{AdminRoutes, DashboardRoutes, PublicRoutes};
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use shared::gate::mount;
use shared::serve::MAX_BODY_BYTES;

/// The API routes with `state` applied (no ops routes, no fallbacks): each family behind its
/// gate (`crate::auth`), plus the static documentation pages.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(mount(admin(), state.clone()))
        .merge(mount(dashboard(), state.clone()))
        .merge(mount(public(), state.clone()))
        // The staff dashboard's pages, behind a session (`crate::pages`), and their assets.
        .merge(crate::pages::router(state))
        // Static, keyless and unmetered: the API reference.
        .merge(openapi::router())
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Every route of the admin API.
fn admin() -> AdminRoutes {
    Router::new()
        .merge(admin_accounts::router())
        .merge(admin_keys::router())
        .merge(admin_settings::router())
        .merge(admin_team::router())
        .merge(reviews::admin_router())
        .merge(exchange_rates::admin_router())
        .merge(alerts::router())
        .merge(privacy::router())
        .merge(player_export::router())
        .merge(erasure::router())
}

/// Every dashboard read, the live stream included.
fn dashboard() -> DashboardRoutes {
    Router::new()
        .merge(events::router())
        .merge(events_stream::router())
        .merge(funnels::router())
        .merge(retention::router())
        .merge(trends::router())
        .merge(players::router())
        .merge(account_reads::router())
        .merge(punishments::router())
        .merge(flags::router())
        .merge(chatlog::router())
        .merge(servers::router())
        .merge(server_history::router())
        .merge(staff::router())
        .merge(staff_leaderboard::router())
        .merge(overview::router())
}

/// Every public read.
fn public() -> PublicRoutes {
    Router::new()
        .merge(reviews::public_router())
        .merge(exchange_rates::public_router())
}
