//! Liveness, readiness and metrics routes, and the finishing layers every router gets.
//!
//! Each service registers readiness probes (NATS reachable, PostgreSQL reachable, keys loaded,
//! projector lag); the all-in-one process merges the probes of all three services. Every probe
//! runs under [`PROBE_TIMEOUT`]: a dependency that hangs makes its probe fail ("timed out
//! after 2 s") and `/readyz` answer 503 in time, instead of hanging the orchestrator's check.

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
use std::time::Duration;

/// How long one readiness probe may take before it counts as failed.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One readiness check: `Ok(detail)` when ready, `Err(reason)` when not.
pub type Probe = Arc<dyn Fn() -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// The readiness probes of a process.
#[derive(Clone)]
pub struct Readiness {
    probes: Vec<(&'static str, Probe)>,
    timeout: Duration,
}

impl Default for Readiness {
    fn default() -> Self {
        Self {
            probes: Vec::new(),
            timeout: PROBE_TIMEOUT,
        }
    }
}

impl Readiness {
    /// No probes yet; each probe added gets [`PROBE_TIMEOUT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives every probe `timeout` instead of [`PROBE_TIMEOUT`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
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

    /// Runs every probe at once, each under the timeout; ready when all pass in time.
    pub async fn check(&self) -> (bool, Value) {
        let timeout = self.timeout;
        let results = futures::future::join_all(self.probes.iter().map(|(_, probe)| async move {
            tokio::time::timeout(timeout, probe())
                .await
                .unwrap_or_else(|_| Err(format!("timed out after {} s", timeout.as_secs_f64())))
        }))
        .await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use std::time::Instant;
    use tower::ServiceExt;

    fn hanging_and_healthy(timeout: Duration) -> Readiness {
        Readiness::new()
            .with_timeout(timeout)
            .with("hangs", std::future::pending::<Result<Value, String>>)
            .with("fine", || async { Ok(json!("connected")) })
    }

    #[tokio::test]
    async fn a_probe_that_never_answers_fails_within_the_timeout() {
        let readiness = hanging_and_healthy(Duration::from_millis(100));
        let (ready, body) = tokio::time::timeout(Duration::from_secs(2), readiness.check())
            .await
            .expect("the check answered although a probe never does");
        assert!(!ready);
        assert_eq!(body["checks"]["hangs"]["ok"], false);
        assert_eq!(body["checks"]["hangs"]["error"], "timed out after 0.1 s");
        assert_eq!(body["checks"]["fine"]["ok"], true);
    }

    #[tokio::test]
    async fn readyz_answers_503_while_a_probe_hangs() {
        let started = Instant::now();
        let request = Request::get("/readyz")
            .body(Body::empty())
            .expect("request");
        let answer = ops_router(hanging_and_healthy(Duration::from_millis(100))).oneshot(request);
        let response = tokio::time::timeout(Duration::from_secs(2), answer)
            .await
            .expect("/readyz answered although a probe never does")
            .expect("response");
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(started.elapsed() >= Duration::from_millis(100));
    }

    #[test]
    fn the_default_timeout_reads_as_two_seconds() {
        assert_eq!(format!("{} s", PROBE_TIMEOUT.as_secs_f64()), "2 s");
    }

    #[tokio::test]
    async fn all_probes_passing_is_ready() {
        let readiness = Readiness::new().with("fine", || async { Ok(json!({})) });
        let (ready, body) = readiness.check().await;
        assert!(ready);
        assert_eq!(body["ready"], true);
    }
}
