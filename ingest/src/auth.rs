//! Ingest's one route family, plugin writes (see [`shared::gate`] for the pattern): a plugin
//! key (401, 403), then the plugin key's quota (429); every answer after that carries
//! `RateLimit-*`.

use crate::state::AppState;
use axum::Router;
use axum::http::request::Parts;
use axum::response::Response;
use shared::gate::{Family, Gated, Meter, key_caller_in_use};
use shared::keys::{Caller, KeyKind};
use shared::rate_limit::Quota;

/// The plugin write routes.
pub type PluginRoutes = Router<Gated<AppState, PluginCaller>>;

/// A request made with a valid plugin key, within its quota.
#[derive(Debug, Clone, Copy)]
pub struct PluginCaller(pub Caller);

shared::gated_callers!(AppState: PluginCaller);

impl Family<AppState> for PluginCaller {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        let (keys, usage) = (&state.keys, &state.key_usage);
        key_caller_in_use(&parts.headers, keys, usage, KeyKind::Plugin).map(PluginCaller)
    }

    fn meter<'a>(&self, state: &'a AppState) -> Option<Meter<'a>> {
        Some(Meter::per_key(&state.limiter, Quota::Plugin, &self.0))
    }
}
