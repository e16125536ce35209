//! The local stack's single process: ingest, projector and query-api behind one base URL.
//!
//! In a split deployment each service runs alone and an edge proxy routes the paths
//! (`/api/plugin/*` and `/api/v1/plugin/*` to ingest, everything else to query-api); here one
//! router serves them all, and the projector and the notifier (unless `NOTIFIER_ENABLED=false`)
//! run beside it.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use shared::config::Vars;
use shared::serve::{BoundRouter, ServeLimits};
use shared::shutdown::within_deadline;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[cfg(test)]
mod tests;

/// The three services' settings, and the one address they share.
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// Ingest's settings.
    pub ingest: ingest::Config,
    /// The projector's settings.
    pub projector: projector::Config,
    /// The notifier's settings; it runs only when `enabled` (`NOTIFIER_ENABLED`, default true).
    pub notifier: projector::alerts::NotifierConfig,
    /// Query-api's settings.
    pub query: query_api::Config,
    /// `BIND_ADDR` (default `127.0.0.1:8080`): the base URL's address.
    pub bind_addr: SocketAddr,
}

impl StackConfig {
    /// Reads every service's settings from the environment.
    pub fn from_env() -> anyhow::Result<StackConfig> {
        StackConfig::from_vars(&Vars::process())
    }

    /// Reads every service's settings from `vars` (each service's own loader).
    pub fn from_vars(vars: &Vars) -> anyhow::Result<StackConfig> {
        Ok(StackConfig {
            ingest: ingest::Config::from_vars(vars)?,
            projector: projector::Config::from_vars(vars)?,
            notifier: projector::alerts::NotifierConfig::from_vars(vars)?,
            query: query_api::Config::from_vars(vars)?,
            bind_addr: vars.or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8080)))?,
        })
    }
}

/// The running stack.
pub struct Stack {
    bound: BoundRouter,
    projector: projector::Projector,
    notifier: Option<projector::alerts::Notifier>,
}

impl Stack {
    /// Builds every service (the projector first: it applies the migrations) and binds.
    pub async fn build(config: StackConfig, shutdown: CancellationToken) -> anyhow::Result<Stack> {
        // Both services' long-lived paths; the few bytes of the joined list live as long as
        // the process (a stack is built once, or a few times in tests).
        let long_lived: Vec<&'static str> = ingest::Ingest::LONG_LIVED_PATHS
            .iter()
            .chain(query_api::QueryApi::LONG_LIVED_PATHS)
            .copied()
            .collect();
        let limits = ServeLimits {
            long_lived_paths: Box::leak(long_lived.into_boxed_slice()),
            ..config.ingest.common.serve
        };
        let projector = projector::Projector::build(&config.projector).await?;
        let notifier = match config.notifier.enabled {
            true => Some(projector::alerts::Notifier::build(&config.notifier).await?),
            false => None,
        };
        let ingest = ingest::Ingest::build(&config.ingest, shutdown.clone()).await?;
        let query = query_api::QueryApi::build(&config.query, shutdown).await?;
        let mut readiness = ingest
            .readiness
            .merge(query.readiness)
            .merge(projector.readiness.clone());
        if let Some(notifier) = &notifier {
            readiness = readiness.merge(notifier.readiness.clone());
        }
        let api = ingest
            .api
            .merge(query.api)
            .layer(middleware::from_fn_with_state(
                Arc::new(merged_document()),
                serve_merged_document,
            ));
        let bound = BoundRouter::bind(config.bind_addr, api, readiness, limits).await?;
        Ok(Stack {
            bound,
            projector,
            notifier,
        })
    }

    /// The base URL's socket address.
    pub fn local_addr(&self) -> SocketAddr {
        self.bound.local_addr()
    }

    /// Serves, projects and notifies until `shutdown` is cancelled, then gives them all the
    /// shutdown deadline ([`shared::shutdown::SHUTDOWN_DEADLINE`]) to finish.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let server = self.bound.serve(shutdown.clone());
        let notifying = async {
            match self.notifier {
                Some(notifier) => notifier.run(shutdown.clone()).await,
                None => Ok(()),
            }
        };
        let running = async {
            let (served, projected, notified) =
                tokio::join!(server, self.projector.run(shutdown.clone()), notifying);
            served?;
            projected?;
            notified
        };
        within_deadline("the stack", &shutdown, running).await
    }
}

/// Query-api's document with ingest's paths added: one document for the one base URL.
pub fn merged_document() -> Value {
    let mut doc = query_api::routes::openapi::document();
    shared::openapi::merge(&mut doc, ingest::routes::openapi::document());
    doc
}

/// Answers `GET /api/openapi.json` with [`merged_document`]. Query-api's router serves its own
/// document at that path (and `/api/docs` reads it from there); a second route for it would
/// clash, so the stack answers it before the router does.
async fn serve_merged_document(
    State(doc): State<Arc<Value>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::GET && request.uri().path() == "/api/openapi.json" {
        return Json(doc.as_ref().clone()).into_response();
    }
    next.run(request).await
}
