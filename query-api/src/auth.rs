//! Query-api's route families and who may call them (see [`shared::gate`] for the pattern).
//!
//! | family | caller | who | quota |
//! |---|---|---|---|
//! | admin | [`AdminCaller`] | the operator's admin key | none |
//! | dashboard (and the live stream) | [`DashboardCaller`] | a dashboard key; `.0.account_id` scopes every read | 60/min per key; a stream counts once, when it opens |
//! | public | [`PublicClient`] | anyone | 30/min per client IP |
//! | dashboard pages | [`SignedIn`](crate::pages::gate::SignedIn) | a team member's session cookie; state-changing requests same-origin only | none, but the events list, its live stream and a funnel run count against the dashboard quota per member ([`crate::pages::quota`]); sign-in has its own: 10/min per login, 30/min per IP |
//! | sign-in and invite pages | [`Visitor`](crate::pages::gate::Visitor) | anyone; state-changing requests same-origin only | none here (see above) |
//!
//! Each family's routes are a router of its own type ([`AdminRoutes`], ...), mounted in
//! `routes::router` behind its gate. The documentation pages (`/api/docs`) and the dashboard's
//! assets are the only routes outside a family: static, keyless and unmetered.

use crate::state::AppState;
use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::response::Response;
use shared::gate::{Family, Gated, Meter, key_caller, key_caller_in_use};
use shared::keys::{Caller, KeyKind};
use shared::rate_limit::{Quota, client_ip};
use std::net::{IpAddr, SocketAddr};

/// The admin API's routes.
pub type AdminRoutes = Router<Gated<AppState, AdminCaller>>;
/// The dashboard reads' routes (the live stream included).
pub type DashboardRoutes = Router<Gated<AppState, DashboardCaller>>;
/// The public routes.
pub type PublicRoutes = Router<Gated<AppState, PublicClient>>;

/// A request made with the operator's admin key.
#[derive(Debug, Clone, Copy)]
pub struct AdminCaller(pub Caller);

/// A request made with a dashboard key, within its quota; `.0.account_id` scopes every read.
#[derive(Debug, Clone, Copy)]
pub struct DashboardCaller(pub Caller);

/// A public (keyless) request, admitted under the client IP's quota.
#[derive(Debug, Clone, Copy)]
pub struct PublicClient(pub IpAddr);

shared::gated_callers!(
    AppState: AdminCaller,
    DashboardCaller,
    PublicClient,
    crate::pages::gate::SignedIn,
    crate::pages::gate::Visitor,
);

impl Family<AppState> for AdminCaller {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        key_caller(&parts.headers, &state.keys, KeyKind::Admin).map(AdminCaller)
    }

    fn meter<'a>(&self, _: &'a AppState) -> Option<Meter<'a>> {
        None
    }
}

impl Family<AppState> for DashboardCaller {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        let (keys, usage) = (&state.keys, &state.key_usage);
        key_caller_in_use(&parts.headers, keys, usage, KeyKind::Dashboard).map(DashboardCaller)
    }

    fn meter<'a>(&self, state: &'a AppState) -> Option<Meter<'a>> {
        Some(Meter::per_key(&state.limiter, Quota::Dashboard, &self.0))
    }
}

/// The client behind a request: the socket peer, or what a trusted proxy says it saw.
pub fn request_client_ip(parts: &Parts, state: &AppState) -> IpAddr {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    // Every line of the header, in order; one that is not text stops the walk there.
    let forwarded = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().unwrap_or("?"));
    client_ip(peer, forwarded, &state.trusted_proxies)
}

impl Family<AppState> for PublicClient {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        Ok(PublicClient(request_client_ip(parts, state)))
    }

    fn meter<'a>(&self, state: &'a AppState) -> Option<Meter<'a>> {
        Some(Meter {
            limiter: &state.limiter,
            quota: Quota::Public,
            client: self.0.to_string(),
        })
    }
}
