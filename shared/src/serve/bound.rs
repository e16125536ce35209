//! A service's router bound to its port: what ingest's, query-api's, the projector's and the
//! stack's `App` each are, written once.

use super::{ServeLimits, serve};
use crate::health::{Readiness, finish_router, ops_router};
use crate::shutdown::within_deadline;
use anyhow::Context;
use axum::Router;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A router with the ops routes and fallbacks, bound and ready to [`serve`].
pub struct BoundRouter {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    limits: ServeLimits,
}

impl BoundRouter {
    /// Binds `addr` (port 0 picks a free port) for `api` plus `/healthz`, `/readyz` (over
    /// `readiness`) and `/metrics`, with the problem-details fallbacks every router gets.
    pub async fn bind(
        addr: SocketAddr,
        api: Router,
        readiness: Readiness,
        limits: ServeLimits,
    ) -> anyhow::Result<BoundRouter> {
        let router = finish_router(api.merge(ops_router(readiness)));
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local_addr = listener.local_addr()?;
        Ok(BoundRouter {
            listener,
            local_addr,
            router,
            limits,
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown`, then waits for in-flight requests with no deadline of its
    /// own: for a caller that runs more beside it under one [`within_deadline`].
    pub async fn serve(self, shutdown: CancellationToken) -> std::io::Result<()> {
        serve(self.listener, self.router, &self.limits, shutdown).await
    }

    /// Serves until `shutdown`, then gives in-flight requests the shutdown deadline
    /// ([`crate::shutdown::SHUTDOWN_DEADLINE`]) to finish; `what` names them in the log.
    pub async fn run_until_stopped(
        self,
        what: &str,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        let server = self.serve(shutdown.clone());
        within_deadline(what, &shutdown, server)
            .await
            .context("serving HTTP")
    }
}
