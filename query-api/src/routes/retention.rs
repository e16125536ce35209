//! `POST /api/v1/retention` (issue 16): being built.

use crate::auth::DashboardRoutes;
use axum::Router;

/// The route.
pub fn router() -> DashboardRoutes {
    Router::new()
}
