//! The player pages (issue 15): `/players` (search, online now, recently seen) in
//! [`search`], and one player's Investigate page `/players/{uuid}` in [`investigate`].

pub mod investigate;
pub mod search;

use super::gate::PageRoutes;
use axum::Router;

/// Both player pages.
pub fn router() -> PageRoutes {
    Router::new()
        .merge(search::router())
        .merge(investigate::router())
}
