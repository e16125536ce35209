//! How every request is authenticated and metered: one gate per route family.
//!
//! A route family (plugin writes, dashboard reads, admin, public, ...) is a caller type that
//! implements [`Family`]: how a request proves it belongs (401, 403) and which quota it counts
//! against (429). Its routes are a `Router<Gated<S, F>>`, and [`mount`] is the only way to turn
//! one into a servable router: it puts [`gate`] in front of every route, in the contract's
//! order (route, then 401, 403, 429, then whatever the handler checks: 415, 413, 400, 422), and
//! writes the quota's `RateLimit-*` headers on the answer.
//!
//! The gate leaves the admitted caller in the request's extensions; the caller type's extractor
//! (declared with [`gated_callers!`](crate::gated_callers)) reads it from there and exists only
//! for routers of its own family. So a handler that takes a dashboard caller does not compile
//! in an admin router, nor in a plain router without a gate.

use crate::rate_limit::{Limiter, Quota};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::future::Future;
use std::marker::PhantomData;

/// What a request of a family is metered under.
#[derive(Debug)]
pub struct Meter<'a> {
    /// Where the windows are counted.
    pub limiter: &'a Limiter,
    /// Which quota.
    pub quota: Quota,
    /// Who is counted: a key id, a client IP, a member.
    pub client: String,
}

impl<'a> Meter<'a> {
    /// `quota` counted per key: each key has its own window.
    pub fn per_key(limiter: &'a Limiter, quota: Quota, caller: &crate::keys::Caller) -> Self {
        Meter {
            limiter,
            quota,
            client: caller.key_id.to_string(),
        }
    }
}

/// A route family: the caller its routes serve, and how a request becomes one.
pub trait Family<S>: Clone + Send + Sync + Sized + 'static {
    /// Authenticates the request (401, 403); `Err` is the whole answer.
    fn admit(parts: &Parts, state: &S) -> impl Future<Output = Result<Self, Response>> + Send;

    /// The quota the admitted caller counts against, if any (429 past it).
    fn meter<'a>(&self, state: &'a S) -> Option<Meter<'a>>;
}

/// The state of a family's routes: the service's state, typed by the family so that only that
/// family's caller can be extracted. Only [`mount`] makes one, so a family's routes always run
/// behind its gate.
pub struct Gated<S, F> {
    state: S,
    family: PhantomData<fn() -> F>,
}

impl<S: Clone, F> Clone for Gated<S, F> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            family: PhantomData,
        }
    }
}

impl<S, F> Gated<S, F> {
    /// The service's state.
    pub fn state(&self) -> &S {
        &self.state
    }
}

/// Puts `F`'s gate in front of every route of `routes` and gives them `state`.
pub fn mount<S, F>(routes: Router<Gated<S, F>>, state: S) -> Router
where
    S: Clone + Send + Sync + 'static,
    F: Family<S>,
{
    routes
        .route_layer(middleware::from_fn_with_state(state.clone(), gate::<S, F>))
        .with_state(Gated {
            state,
            family: PhantomData,
        })
}

/// Admits the request as an `F` (401, 403), counts it against `F`'s quota (429), then runs the
/// route with the caller in its extensions; the quota's headers go on whatever it answers.
async fn gate<S, F>(State(state): State<S>, request: Request, next: Next) -> Response
where
    S: Clone + Send + Sync + 'static,
    F: Family<S>,
{
    let (mut parts, body) = request.into_parts();
    let caller = match F::admit(&parts, &state).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let decision = match caller.meter(&state) {
        Some(meter) => Some(meter.limiter.check(meter.quota, &meter.client).await),
        None => None,
    };
    if let Some(decision) = decision.filter(|d| !d.allowed) {
        return decision.refusal();
    }
    parts.extensions.insert(caller);
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if let Some(decision) = decision {
        decision.apply_headers(response.headers_mut());
    }
    response
}

/// The caller `F`'s gate admitted. Only reachable from routes [`mount`]ed as `F`, which always
/// run behind the gate; were it missing anyway, the answer is a logged 500, never a pass.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the whole answer, as axum wants it"
)]
pub fn admitted<F: Clone + Send + Sync + 'static>(parts: &Parts) -> Result<F, Response> {
    parts.extensions.get::<F>().cloned().ok_or_else(|| {
        tracing::error!(
            caller = std::any::type_name::<F>(),
            "a handler ran without its family's gate"
        );
        crate::problem::Problem::internal().into_response()
    })
}

/// Declares, for each caller type, the extractor that reads it from its own family's routes
/// (`$state` is the service's state; each caller type must implement [`Family<$state>`]), and
/// lets those routes extract `State<$state>`.
#[macro_export]
macro_rules! gated_callers {
    ($state:ty: $($caller:ty),+ $(,)?) => {
        $(
            impl ::axum::extract::FromRequestParts<$crate::gate::Gated<$state, $caller>> for $caller {
                type Rejection = ::axum::response::Response;

                async fn from_request_parts(
                    parts: &mut ::axum::http::request::Parts,
                    _state: &$crate::gate::Gated<$state, $caller>,
                ) -> Result<Self, Self::Rejection> {
                    $crate::gate::admitted::<$caller>(parts)
                }
            }
        )+

        impl<F> ::axum::extract::FromRef<$crate::gate::Gated<$state, F>> for $state {
            fn from_ref(gated: &$crate::gate::Gated<$state, F>) -> Self {
                gated.state().clone()
            }
        }
    };
}

/// The caller behind the request's bearer key, which must be of `kind`; the refusal (401 or
/// 403 problem details) otherwise. What every key-authenticated family's `admit` starts with.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the whole answer, as axum wants it"
)]
pub fn key_caller(
    headers: &axum::http::HeaderMap,
    directory: &crate::key_directory::KeyDirectory,
    kind: crate::keys::KeyKind,
) -> Result<crate::keys::Caller, Response> {
    crate::keys::authorization_header(headers)
        .and_then(|header| directory.authenticate(header, kind, chrono::Utc::now()))
        .map_err(|error| crate::problem::Problem::from_auth(error, kind).into_response())
}

/// [`key_caller`] for the families whose keys report `last_used_at` (plugin, dashboard): an
/// admitted key's use is recorded in `usage`.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the whole answer, as axum wants it"
)]
pub fn key_caller_in_use(
    headers: &axum::http::HeaderMap,
    directory: &crate::key_directory::KeyDirectory,
    usage: &crate::key_usage::KeyUsage,
    kind: crate::keys::KeyKind,
) -> Result<crate::keys::Caller, Response> {
    let caller = key_caller(headers, directory, kind)?;
    usage.record(caller.key_id, chrono::Utc::now());
    Ok(caller)
}
