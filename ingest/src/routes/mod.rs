//! The plugin write endpoints.

mod custom_events;
mod plugin_records;

use crate::auth::plugin_gate;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;

/// Every plugin write route, with state applied.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(plugin_records::router())
        .merge(custom_events::router())
        // Bodies are read and limited by `body::read_json_body`, after the auth check.
        .layer(DefaultBodyLimit::disable())
        .route_layer(middleware::from_fn_with_state(state.clone(), plugin_gate))
        .with_state(state)
}
