//! `POST /api/v1/trends` (issue 16): being built.

use crate::auth::DashboardRoutes;
use axum::Router;

/// The route.
pub fn router() -> DashboardRoutes {
    Router::new()
}
