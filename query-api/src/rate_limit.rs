//! The dashboard quota (60 requests per rolling minute per dashboard key) and the public
//! quota (30 per client IP), decided by the extractors that admit a request, with the
//! `RateLimit-*` headers put on the response by [`rate_limit_headers`].
//!
//! The extractors run before any body extractor, after authentication: the contract's order
//! (401, 403, 429, then 415 ...). An SSE stream is one request, so it counts once, when it opens.

use crate::error::ApiError;
use axum::extract::{ConnectInfo, FromRef, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use shared::rate_limit::{Decision, Limiter, Quota, TrustedProxy, client_ip};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

/// Where an extractor leaves its decision for the response headers.
#[derive(Clone, Default)]
struct DecisionSlot(Arc<Mutex<Option<Decision>>>);

/// Gives every request a slot for its rate-limit decision, and writes the decision's
/// `RateLimit-*` headers on the response.
pub async fn rate_limit_headers(mut request: Request, next: Next) -> Response {
    let slot = DecisionSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    let decision = *slot.0.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(decision) = decision {
        decision.apply_headers(response.headers_mut());
    }
    response
}

/// Decides one request of `client` under `quota`; a refusal is the request's answer.
pub(crate) async fn enforce(
    parts: &Parts,
    limiter: &Limiter,
    quota: Quota,
    client: &str,
) -> Result<(), ApiError> {
    let decision = limiter.check(quota, client).await;
    if let Some(slot) = parts.extensions.get::<DecisionSlot>() {
        *slot.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(decision);
    }
    if decision.allowed {
        Ok(())
    } else {
        Err(ApiError::RateLimited(decision))
    }
}

/// A public (keyless) request, admitted under the client IP's quota.
#[derive(Debug, Clone, Copy)]
pub struct PublicClient(pub IpAddr);

impl<S> FromRequestParts<S> for PublicClient
where
    Arc<Limiter>: FromRef<S>,
    Arc<[TrustedProxy]>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
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
        let trusted = Arc::<[TrustedProxy]>::from_ref(state);
        let client = client_ip(peer, forwarded, &trusted);
        enforce(
            parts,
            &Arc::<Limiter>::from_ref(state),
            Quota::Public,
            &client.to_string(),
        )
        .await?;
        Ok(PublicClient(client))
    }
}
