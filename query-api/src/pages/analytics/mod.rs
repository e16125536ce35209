//! The analytics pages: `/analytics/retention` in [`retention`] and
//! `/analytics/trends` in [`trends`].

pub mod retention;
pub mod trends;

use super::gate::PageRoutes;
use axum::Router;

/// Both analytics pages.
pub fn router() -> PageRoutes {
    Router::new()
        .merge(retention::router())
        .merge(trends::router())
}
