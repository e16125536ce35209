//! Extractors that authenticate the caller's bearer key against the key directory.
//!
//! They implement `FromRequestParts`, so they run before any body extractor: a request with a
//! bad key gets its 401/403 before its body is looked at (contract §2's check order).

use crate::error::ApiError;
use crate::rate_limit::enforce;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use chrono::Utc;
use shared::key_usage::KeyUsage;
use shared::keys::{Caller, KeyDirectory, KeyKind, authorization_header};
use shared::rate_limit::{Limiter, Quota};
use std::sync::Arc;

/// A request made with the operator's admin key.
#[derive(Debug, Clone, Copy)]
pub struct AdminCaller(pub Caller);

/// A request made with a dashboard key, within its quota; `.0.account_id` scopes every read.
#[derive(Debug, Clone, Copy)]
pub struct DashboardCaller(pub Caller);

fn authenticate(
    parts: &Parts,
    directory: &KeyDirectory,
    kind: KeyKind,
) -> Result<Caller, ApiError> {
    authorization_header(&parts.headers)
        .and_then(|header| directory.authenticate(header, kind, Utc::now()))
        .map_err(|error| ApiError::Auth {
            error,
            needed: kind,
        })
}

impl<S> FromRequestParts<S> for AdminCaller
where
    Arc<KeyDirectory>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let directory = Arc::<KeyDirectory>::from_ref(state);
        authenticate(parts, &directory, KeyKind::Admin).map(AdminCaller)
    }
}

impl<S> FromRequestParts<S> for DashboardCaller
where
    Arc<KeyDirectory>: FromRef<S>,
    Arc<Limiter>: FromRef<S>,
    Arc<KeyUsage>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let directory = Arc::<KeyDirectory>::from_ref(state);
        let caller = authenticate(parts, &directory, KeyKind::Dashboard)?;
        Arc::<KeyUsage>::from_ref(state).record(caller.key_id, Utc::now());
        let limiter = Arc::<Limiter>::from_ref(state);
        enforce(
            parts,
            &limiter,
            Quota::Dashboard,
            &caller.key_id.to_string(),
        )
        .await?;
        Ok(DashboardCaller(caller))
    }
}
