//! The request deadline spares exactly the paths the service names as long-lived.

use super::{ServeLimits, serve};
use axum::Router;
use axum::routing::get;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Longer than the deadline below, with room for a slow machine either way.
const HANDLER_DELAY: Duration = Duration::from_millis(600);

async fn slow() -> &'static str {
    tokio::time::sleep(HANDLER_DELAY).await;
    "done"
}

/// The status line of `GET path` on a fresh connection.
async fn status_of(addr: std::net::SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response.lines().next().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn only_the_named_long_lived_paths_escape_the_request_deadline() -> std::io::Result<()> {
    let router = Router::new()
        .route("/stream", get(slow))
        .route("/report", get(slow));
    let limits = ServeLimits {
        request_timeout: Duration::from_millis(100),
        long_lived_paths: &["/stream"],
        ..ServeLimits::default()
    };
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let server = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { serve(listener, router, &limits, shutdown).await }
    });

    let (stream, report) = tokio::join!(status_of(addr, "/stream"), status_of(addr, "/report"));
    assert_eq!(stream?, "HTTP/1.1 200 OK");
    assert_eq!(report?, "HTTP/1.1 503 Service Unavailable");

    shutdown.cancel();
    server.await.map_err(std::io::Error::other)??;
    Ok(())
}

/// A `Write` into a shared buffer, for a subscriber whose output the test reads.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn slow_and_logging() -> &'static str {
    tracing::warn!("inside the handler");
    tokio::time::sleep(HANDLER_DELAY).await;
    "done"
}

/// A response slow to start is logged with the route that answered it; whatever the handler
/// logs (a slow SQL statement, say) carries the route too; a long-lived path is never slow.
#[tokio::test(flavor = "current_thread")]
async fn a_slow_request_is_logged_with_its_route() -> std::io::Result<()> {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let router = crate::health::finish_router(
        Router::new()
            .route("/reports/{id}", get(slow_and_logging))
            .route("/stream", get(slow)),
    );
    let limits = ServeLimits {
        slow_request: HANDLER_DELAY / 2,
        long_lived_paths: &["/stream"],
        ..ServeLimits::default()
    };
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let server = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { serve(listener, router, &limits, shutdown).await }
    });
    assert_eq!(status_of(addr, "/reports/7").await?, "HTTP/1.1 200 OK");
    assert_eq!(status_of(addr, "/stream").await?, "HTTP/1.1 200 OK");
    shutdown.cancel();
    server.await.map_err(std::io::Error::other)??;

    let text =
        String::from_utf8_lossy(&captured.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let handler = lines.iter().find(|l| l.contains("inside the handler"));
    assert!(
        handler.is_some_and(|l| l.contains("route=/reports/{id}")),
        "{text}"
    );
    let slow: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("slow request"))
        .collect();
    assert_eq!(slow.len(), 1, "{text}");
    assert!(slow[0].contains("route=\"/reports/{id}\""), "{text}");
    assert!(slow[0].contains("status=200"), "{text}");
    Ok(())
}
