//! Every HTTP route of the service, one module per resource.

pub mod admin_accounts;
pub mod admin_keys;
pub mod admin_settings;
pub mod chatlog;
pub mod events;
pub mod events_page;
pub mod events_stream;
pub mod exchange_rates;
pub mod flags;
pub mod funnels;
pub mod history;
pub mod liveness;
pub mod openapi;
pub mod paging;
pub mod players;
pub mod punishments;
pub mod reviews;
pub mod servers;
pub mod staff;

use crate::extract::MAX_BODY_BYTES;
use crate::rate_limit::rate_limit_headers;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;

/// The API routes with `state` applied (no ops routes, no fallbacks).
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(admin_accounts::router())
        .merge(admin_keys::router())
        .merge(admin_settings::router())
        .merge(reviews::router())
        .merge(exchange_rates::router())
        .merge(events::router())
        .merge(events_stream::router())
        .merge(events_page::router())
        .merge(funnels::router())
        .merge(players::router())
        .merge(punishments::router())
        .merge(flags::router())
        .merge(chatlog::router())
        .merge(servers::router())
        .merge(staff::router())
        .with_state(state)
        .merge(openapi::router())
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(rate_limit_headers))
}
