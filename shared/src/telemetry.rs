//! Tracing and metrics set-up, shared by every binary.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Instant;
use tracing::Instrument;
use tracing_subscriber::EnvFilter;

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, for a terminal.
    Pretty,
    /// One JSON object per line, for production.
    Json,
}

impl LogFormat {
    /// `json` means JSON; anything else is pretty.
    pub fn parse(value: &str) -> Self {
        if value.eq_ignore_ascii_case("json") {
            LogFormat::Json
        } else {
            LogFormat::Pretty
        }
    }
}

/// Installs the global tracing subscriber (`RUST_LOG` filters; default `info`).
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    // A second call (tests, the all-in-one process) keeps the first subscriber.
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

/// Logging for tests: silent unless `TEST_LOG=1`.
pub fn init_test_tracing() {
    if std::env::var_os("TEST_LOG").is_some() {
        init_tracing(LogFormat::Pretty);
    }
}

const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The process-wide Prometheus recorder (installed on first use).
pub fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets(LATENCY_BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (e.g. by an embedding process); then
        // this handle renders an empty page rather than failing start-up.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// `GET /metrics`: Prometheus text.
pub async fn metrics_endpoint() -> impl IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        prometheus().render(),
    )
}

/// The route that answered a request (its pattern, e.g. `/api/v1/players/{uuid}`), put in
/// the response's extensions by [`record_http_metrics`] for the layers outside the router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteName(pub String);

/// Middleware recording `http_requests_total` and `http_request_duration_seconds` by route,
/// method and status. The handler runs in a `request` span naming the route and method, so
/// whatever it logs (a slow SQL statement included) says which route it served.
pub async fn record_http_metrics(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = request.method().as_str().to_owned();
    let span = tracing::info_span!("request", route = %route, method = %method);
    let mut response = next.run(request).instrument(span).await;
    let status = response.status().as_u16().to_string();
    response.extensions_mut().insert(RouteName(route.clone()));
    let labels = [("route", route), ("method", method), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    response
}
