//! `/analytics/trends` (issue 16): being built.

use crate::pages::gate::PageRoutes;
use axum::Router;

/// The page's routes.
pub fn router() -> PageRoutes {
    Router::new()
}
