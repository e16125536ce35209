//! Process shutdown: one cancellation token, cancelled by Ctrl-C or SIGTERM, and a deadline
//! for the service to finish after it.

use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a service may take to drain after a shutdown signal.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(20);

/// Resolves on Ctrl-C or SIGTERM.
pub async fn signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// Cancels `token` on Ctrl-C or SIGTERM.
pub async fn cancel_on_signal(token: CancellationToken) {
    signal().await;
    tracing::info!("shutdown requested");
    token.cancel();
}

/// Drives `service` until it ends on its own, or until a signal arrives; then cancels
/// `token` and gives the service [`SHUTDOWN_DEADLINE`] to finish. `None` means it did not.
pub async fn run_until_signal<T>(
    token: CancellationToken,
    service: impl Future<Output = T>,
) -> Option<T> {
    tokio::pin!(service);
    tokio::select! {
        result = &mut service => return Some(result),
        () = signal() => tracing::info!("shutdown requested"),
    }
    token.cancel();
    tokio::time::timeout(SHUTDOWN_DEADLINE, service).await.ok()
}
