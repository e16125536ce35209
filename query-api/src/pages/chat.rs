//! `/chat` (issue 15): being built.

use super::gate::PageRoutes;
use axum::Router;

/// The page's routes.
pub fn router() -> PageRoutes {
    Router::new()
}
