//! Ingest's one route family, plugin writes (see [`shared::gate`] for the pattern): a plugin
//! key (401, 403), then the plugin key's quota (429); every answer after that carries
//! `RateLimit-*`.

use crate::state::AppState;
use axum::Router;
use axum::http::request::Parts;
use axum::response::Response;
use chrono::Utc;
use shared::gate::{Family, Gated, Meter, key_caller};
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
        let caller = key_caller(&parts.headers, &state.keys, KeyKind::Plugin)?;
        state.key_usage.record(caller.key_id, Utc::now());
        Ok(PluginCaller(caller))
    }

    fn meter<'a>(&self, state: &'a AppState) -> Option<Meter<'a>> {
        Some(Meter {
            limiter: &state.limiter,
            quota: Quota::Plugin,
            client: self.0.key_id.to_string(),
        })
    }
}
