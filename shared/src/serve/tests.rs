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
