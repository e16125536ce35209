//! Who is calling: the plugin-key extractor, and the task that keeps the key directory current.

use crate::error::IngestError;
use crate::state::AppState;
use async_nats::jetstream::kv;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use futures::StreamExt;
use shared::keys::{Caller, KeyDirectory, KeyEntry, KeyKind, authorization_header};
use shared::problem::Problem;
use shared::rate_limit::Quota;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A request made with a valid plugin key (admitted by [`plugin_gate`]).
#[derive(Debug, Clone, Copy)]
pub struct PluginCaller(pub Caller);

impl FromRequestParts<AppState> for PluginCaller {
    type Rejection = IngestError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(PluginCaller(*caller));
        }
        authorization_header(&parts.headers)
            .and_then(|header| state.keys.authenticate(header, KeyKind::Plugin, Utc::now()))
            .map(PluginCaller)
            .map_err(|e| IngestError::Problem(Box::new(Problem::from_auth(e, KeyKind::Plugin))))
    }
}

/// Runs before every plugin write, in the contract's order: authentication (401), key type
/// (403), then the plugin key's quota (429). Every answer after it carries `RateLimit-*`.
pub async fn plugin_gate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = match authorization_header(request.headers())
        .and_then(|header| state.keys.authenticate(header, KeyKind::Plugin, Utc::now()))
    {
        Ok(caller) => caller,
        Err(error) => return Problem::from_auth(error, KeyKind::Plugin).into_response(),
    };
    state.key_usage.record(caller.key_id, Utc::now());
    let decision = state
        .limiter
        .check(Quota::Plugin, &caller.key_id.to_string())
        .await;
    if !decision.allowed {
        return decision.refusal();
    }
    request.extensions_mut().insert(caller);
    let mut response = next.run(request).await;
    decision.apply_headers(response.headers_mut());
    response
}

/// Mirrors the key bucket into `keys` until `shutdown`, re-watching after any error.
///
/// A revocation deletes the key's entry, which reaches this watch within milliseconds.
pub async fn sync_keys(bucket: kv::Store, keys: Arc<KeyDirectory>, shutdown: CancellationToken) {
    let mut backoff = Duration::from_millis(100);
    while !shutdown.is_cancelled() {
        match watch_keys(&bucket, &keys, &shutdown).await {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(error = %error, "key bucket watch failed; re-watching");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

async fn watch_keys(
    bucket: &kv::Store,
    keys: &KeyDirectory,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    if bucket.status().await?.values() == 0 {
        keys.mark_loaded();
    }
    let mut watch = bucket.watch_with_history(">").await?;
    loop {
        let entry = tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            next = watch.next() => match next {
                Some(entry) => entry?,
                None => anyhow::bail!("key bucket watch ended"),
            },
        };
        match entry.operation {
            kv::Operation::Put => match serde_json::from_slice::<KeyEntry>(&entry.value) {
                Ok(value) => keys.apply(&entry.key, Some(value)),
                Err(error) => tracing::error!(%error, "unreadable key entry skipped"),
            },
            kv::Operation::Delete | kv::Operation::Purge => keys.apply(&entry.key, None),
        }
        if entry.delta == 0 {
            keys.mark_loaded();
        }
    }
}
