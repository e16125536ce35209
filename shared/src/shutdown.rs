//! Process shutdown: one cancellation token, cancelled by Ctrl-C or SIGTERM, and a deadline
//! for the service to finish after it.

use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a service may take to drain after a shutdown signal: the one deadline every
/// binary and every in-process `run_until_stopped` uses. Below the 30 s an orchestrator waits
/// before SIGKILL (`terminationGracePeriodSeconds` in `deploy/k8s`), so a process that
/// overruns it still exits on its own and says so.
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

/// Drives `service` to its end, but once `token` is cancelled gives it only
/// [`SHUTDOWN_DEADLINE`] more; past it, logs that `what` was cut short and returns `Ok(())`
/// (what was still open is dropped). Every `run_until_stopped` drains through this.
pub async fn within_deadline<E>(
    what: &str,
    token: &CancellationToken,
    service: impl Future<Output = Result<(), E>>,
) -> Result<(), E> {
    tokio::pin!(service);
    tokio::select! {
        result = &mut service => return result,
        () = token.cancelled() => {}
    }
    match tokio::time::timeout(SHUTDOWN_DEADLINE, service).await {
        Ok(result) => result,
        Err(_) => {
            tracing::warn!(
                deadline_s = SHUTDOWN_DEADLINE.as_secs(),
                "{what} did not finish within the shutdown deadline"
            );
            Ok(())
        }
    }
}
