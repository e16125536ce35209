//! Being built (issue 15).

use crate::pages::gate::PageRoutes;
use axum::Router;

/// The page's routes.
pub fn router() -> PageRoutes {
    Router::new()
}
