//! The plugin endpoints: the writes, the action feed and its appeal links.

mod action_acks;
mod actions;
mod appeal_links;
mod custom_events;
pub mod openapi;
mod plugin_records;

use crate::auth::PluginRoutes;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use shared::gate::mount;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tower::limit::GlobalConcurrencyLimitLayer;

pub use actions::PATH as ACTIONS_PATH;

/// Every plugin write route behind the plugin gate (`crate::auth`), with state applied; a
/// write is processed only while it holds one of `slots`' permits.
pub fn router(state: AppState, slots: Arc<Semaphore>) -> Router {
    let writes: PluginRoutes = Router::new()
        .merge(plugin_records::router())
        .merge(custom_events::router())
        .merge(action_acks::router())
        .merge(appeal_links::router())
        // Bodies are read and limited by `body::read_json_body`, after the auth check.
        .layer(DefaultBodyLimit::disable())
        // Inside the gate (`mount` puts it outside every route layer added here): only
        // authenticated writes within their quota wait for a slot, so a flood of bad keys
        // cannot crowd out good ones. A waiting write's body stays in the socket, so memory is
        // bounded by the slots, not by the number of clients.
        .route_layer(GlobalConcurrencyLimitLayer::with_semaphore(slots))
        // Added after the slot layer: a long-poll waiting for an action holds no write slot.
        .merge(actions::router());
    mount(writes, state)
        // Outside the gate: the document is public, like query-api's.
        .merge(openapi::router())
}
