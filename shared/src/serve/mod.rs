//! Serving a router over HTTP with the limits an internet-facing service needs: a cap on
//! concurrent connections, a deadline for the request head (slowloris), a whole-request
//! deadline, and a graceful stop. Every binary serves through [`serve`].
//!
//! **Connection cap.** The accept loop takes a permit before it accepts, so over the cap new
//! connections wait in the kernel's listen backlog (their TCP handshake completes, but no byte
//! is read) until a connection closes; when the backlog itself is full the kernel refuses
//! them. Nothing is accepted only to be closed, and a burst is served as soon as it can be.
//!
//! **Head deadline.** A connection must deliver a complete request head within
//! `header_read_timeout`: hyper's HTTP/1 header timer (driven by a [`TokioTimer`]) covers a
//! head sent too slowly, and the wait for the first request is bounded by the same timeout,
//! because hyper's timer does not cover a connection that never sends a byte (nor one that
//! trickles an HTTP/2 preface). An idle keep-alive connection is closed by the same timer.
//!
//! **Request deadline.** A response must start within `request_timeout`, or the request gets
//! 503 `request_timeout`. Only the response head is timed: an open SSE stream, whose body
//! runs for as long as the client stays, is not cut (and the paths the service names in
//! [`ServeLimits::long_lived_paths`] are exempt anyway).
//! Slow request bodies are bounded where bodies are read: [`serve`] hands every request its
//! `body_read_timeout` as a [`BodyReadTimeout`] (408 past it), and no body is larger than
//! [`MAX_BODY_BYTES`].
//!
//! **Heads hyper refuses.** A request head over [`MAX_HEAD_BYTES`] (or over 100 fields) is 431,
//! an unparsable one 400; hyper answers those itself, and [`head_errors`] gives the answers a
//! problem-details body like every other error.
//!
//! **Every response** carries `X-Content-Type-Options: nosniff`: bodies are JSON, problem
//! details, HTML, CSS or scripts we label exactly, and a browser must not guess otherwise.

use crate::config::{ConfigError, Vars};
use crate::problem::Problem;
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::{Service, ServiceExt};

mod bound;
mod head_errors;

pub use bound::BoundRouter;

#[cfg(test)]
mod tests;

/// The largest request head (request line and header fields) served: 64 KiB, well above any
/// real client's and far below hyper's default (~400 KiB), which bounds what each of up to
/// `max_connections` connections may buffer before its request is seen.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The largest request body accepted, after decompression (contract §1): ingest reads its
/// bodies up to this, query-api sets its router's body limit to it.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The serving limits, from `MAX_CONNECTIONS`, `HEADER_READ_TIMEOUT_SECS`,
/// `BODY_READ_TIMEOUT_SECS`, `REQUEST_TIMEOUT_SECS` and `SLOW_REQUEST_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections served at once; more wait in the kernel backlog (default 10,000).
    pub max_connections: usize,
    /// Time to deliver a complete request head, counted from the connection's start or the
    /// end of its previous response (default 10 s).
    pub header_read_timeout: Duration,
    /// Time to deliver a request body once its head is in (default 30 s; 408 past it).
    pub body_read_timeout: Duration,
    /// Time for a response to start (default 30 s; 503 past it).
    pub request_timeout: Duration,
    /// Paths whose responses are long-lived streams, exempt from `request_timeout`. The service
    /// that routes them names them (none by default; not read from the environment).
    pub long_lived_paths: &'static [&'static str],
    /// A response that takes at least this long to start is logged as a slow request, with its
    /// route, and counted in `http_slow_requests_total` (default 500 ms; zero: never). The
    /// long-lived paths are never slow.
    pub slow_request: Duration,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_connections: 10_000,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            long_lived_paths: &[],
            slow_request: Duration::from_millis(500),
        }
    }
}

impl ServeLimits {
    /// Reads the limits from `vars`, defaulting each one.
    pub fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let d = Self::default();
        let secs = |name, default: Duration| -> Result<Duration, ConfigError> {
            Ok(Duration::from_secs(
                vars.or_default(name, default.as_secs())?,
            ))
        };
        Ok(Self {
            max_connections: vars
                .or_default("MAX_CONNECTIONS", d.max_connections)?
                .max(1),
            header_read_timeout: secs("HEADER_READ_TIMEOUT_SECS", d.header_read_timeout)?,
            body_read_timeout: secs("BODY_READ_TIMEOUT_SECS", d.body_read_timeout)?,
            request_timeout: secs("REQUEST_TIMEOUT_SECS", d.request_timeout)?,
            long_lived_paths: d.long_lived_paths,
            slow_request: Duration::from_millis(
                vars.or_default("SLOW_REQUEST_MS", d.slow_request.as_millis() as u64)?,
            ),
        })
    }
}

/// Every request's body read timeout: [`serve`] puts it in the request's extensions, and
/// handlers and extractors that read bodies take it as an extractor (the one way it reaches
/// them). A router served some other way (a test calling it directly) gets the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyReadTimeout(pub Duration);

impl BodyReadTimeout {
    /// The timeout [`serve`] set on this request, or the default one.
    pub fn of(extensions: &axum::http::Extensions) -> Duration {
        extensions
            .get::<BodyReadTimeout>()
            .map_or(ServeLimits::default().body_read_timeout, |t| t.0)
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for BodyReadTimeout {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(BodyReadTimeout(BodyReadTimeout::of(&parts.extensions)))
    }
}

/// 408 `request_timeout`: the client did not send its request body in time.
pub fn body_timeout_problem(limit: Duration) -> Problem {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "request_timeout",
        "Request timeout",
        format!(
            "the request body did not arrive within {} s; send it without pauses",
            limit.as_secs_f64()
        ),
    )
    .with_header(header::CONNECTION, HeaderValue::from_static("close"))
}

/// Serves `router` on `listener` under `limits` until `shutdown`, then stops accepting, lets
/// in-flight requests finish (open SSE streams end on the same token) and returns once every
/// connection has closed. Handlers see the peer as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ServeLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let router = router
        .layer(middleware::from_fn_with_state(*limits, request_deadline))
        .layer(middleware::map_response(nosniff));
    let mut make_service = router.into_make_service_with_connect_info::<SocketAddr>();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(MAX_HEAD_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(MAX_HEAD_BYTES as u32);
    let builder = Arc::new(builder);
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let connections = TaskTracker::new();
    loop {
        // The permit comes first: over the cap, connections wait unaccepted in the backlog.
        let permit = tokio::select! {
            () = shutdown.cancelled() => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
        };
        let service = match make_service.call(peer).await {
            Ok(service) => service,
            Err(never) => match never {},
        };
        connections.spawn(serve_connection(
            Connection {
                stream,
                peer,
                permit,
                header_read_timeout: limits.header_read_timeout,
            },
            builder.clone(),
            service,
            shutdown.clone(),
        ));
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

/// One accepted connection and the permit it holds until it closes.
struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
    header_read_timeout: Duration,
}

type ConnService = axum::middleware::AddExtension<Router, ConnectInfo<SocketAddr>>;

async fn serve_connection(
    conn: Connection,
    builder: Arc<Builder<TokioExecutor>>,
    service: ConnService,
    shutdown: CancellationToken,
) {
    let Connection {
        stream,
        peer,
        permit,
        header_read_timeout,
    } = conn;
    // hyper's HTTP/1 header timer only runs once hyper-util has read enough to tell HTTP/1
    // from HTTP/2; a connection that sends nothing (or an HTTP/2 preface a byte at a time)
    // would wait forever. So the first request must reach the service within the timeout.
    let started = Arc::new(AtomicBool::new(false));
    let seen = started.clone();
    let service = TowerToHyperService::new(service.map_request(move |request: Request<_>| {
        seen.store(true, Ordering::Relaxed);
        request
    }));
    let io = TokioIo::new(head_errors::ProblemAnswers::new(stream));
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let first_request = tokio::time::sleep(header_read_timeout);
    tokio::pin!(first_request);
    let (mut stopping, mut waiting_for_first) = (false, true);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
                break;
            }
            () = &mut first_request, if waiting_for_first => {
                waiting_for_first = false;
                if !started.load(Ordering::Relaxed) {
                    metrics::counter!("http_connections_timed_out_total").increment(1);
                    tracing::debug!(%peer, "no request head within the header timeout; closed");
                    break;
                }
            }
            () = shutdown.cancelled(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
    drop(permit);
}

/// Errors of `accept` on one connection are that connection's; others (out of file
/// descriptors) get a pause so the loop does not spin.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!(%error, "accept failed; pausing");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Logs and counts a response that took `took` to start, by the route that answered it
/// ([`crate::telemetry::RouteName`]; `unmatched` for a fallback).
fn slow_request(response: &Response, method: &axum::http::Method, took: Duration) {
    let route = response
        .extensions()
        .get::<crate::telemetry::RouteName>()
        .map_or("unmatched", |r| r.0.as_str());
    metrics::counter!("http_slow_requests_total", "route" => route.to_owned()).increment(1);
    tracing::warn!(
        route,
        method = %method,
        status = response.status().as_u16(),
        took_ms = took.as_millis() as u64,
        "slow request"
    );
}

/// Adds `X-Content-Type-Options: nosniff` to every response that lacks it.
async fn nosniff(mut response: Response) -> Response {
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// The whole-request deadline: a response must start within the limit. Also hands the body
/// read timeout to the extractors, and logs a response that was slow to start.
async fn request_deadline(
    State(limits): State<ServeLimits>,
    mut request: Request,
    next: Next,
) -> Response {
    request
        .extensions_mut()
        .insert(BodyReadTimeout(limits.body_read_timeout));
    let limit = limits.request_timeout;
    if limits.long_lived_paths.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let started = std::time::Instant::now();
    let method = request.method().clone();
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => {
            let took = started.elapsed();
            if !limits.slow_request.is_zero() && took >= limits.slow_request {
                slow_request(&response, &method, took);
            }
            response
        }
        Err(_) => {
            metrics::counter!("http_request_timeouts_total").increment(1);
            Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "request_timeout",
                "Request timed out",
                "the request took too long to answer; retry shortly",
            )
            .with_header(header::RETRY_AFTER, HeaderValue::from_static("1"))
            .into_response()
        }
    }
}
