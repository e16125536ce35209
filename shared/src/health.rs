//! Liveness, readiness and metrics routes, and the finishing layers every router gets.
//!
//! Each service registers readiness probes (NATS reachable, PostgreSQL reachable, keys loaded,
//! projector lag); the all-in-one process merges the probes of all three services.

use crate::problem::{unknown_path, wrong_method};
use crate::telemetry::{metrics_endpoint, record_http_metrics};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router, middleware};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// One readiness check: `Ok(detail)` when ready, `Err(reason)` when not.
pub type Probe = Arc<dyn Fn() -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// The readiness probes of a process.
#[derive(Clone, Default)]
pub struct Readiness {
    probes: Vec<(&'static str, Probe)>,
}

impl Readiness {
    /// No probes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a named probe.
    pub fn with<F, Fut>(mut self, name: &'static str, probe: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, String>> + Send + 'static,
    {
        self.probes
            .push((name, Arc::new(move || Box::pin(probe()))));
        self
    }

    /// Adds every probe of `other`.
    pub fn merge(mut self, other: Readiness) -> Self {
        self.probes.extend(other.probes);
        self
    }

    /// Runs every probe; ready when all pass.
    pub async fn check(&self) -> (bool, Value) {
        let results = futures::future::join_all(self.probes.iter().map(|(_, p)| p())).await;
        let mut checks = Map::new();
        let mut ready = true;
        for ((name, _), result) in self.probes.iter().zip(results) {
            let value = match result {
                Ok(detail) => json!({"ok": true, "detail": detail}),
                Err(reason) => {
                    ready = false;
                    json!({"ok": false, "error": reason})
                }
            };
            checks.insert((*name).to_owned(), value);
        }
        (ready, json!({"ready": ready, "checks": checks}))
    }
}

async fn healthz() -> impl IntoResponse {
    Json(json!({"status": "ok"}))
}

async fn readyz(State(readiness): State<Readiness>) -> impl IntoResponse {
    let (ready, body) = readiness.check().await;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body))
}

/// `/healthz` (the process is alive), `/readyz` (every probe passes) and `/metrics`.
pub fn ops_router(readiness: Readiness) -> Router {
    // Install the recorder now, so metrics recorded before the first scrape are kept.
    crate::telemetry::prometheus();
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(readiness)
        .route("/metrics", get(metrics_endpoint))
}

/// Adds what every served router needs: problem-details 404/405 and request metrics.
pub fn finish_router(router: Router) -> Router {
    router
        .fallback(unknown_path)
        .method_not_allowed_fallback(wrong_method)
        .layer(middleware::from_fn(record_http_metrics))
}
