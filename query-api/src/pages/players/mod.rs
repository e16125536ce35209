//! The player pages: `/players` (search, online now, recently seen) in
//! [`search`], one player's Investigate page `/players/{uuid}` in [`investigate`], and the
//! download of their data `/players/{uuid}/export` in [`export`], and the header's player
//! search of every page (`/players/find`, `/players/suggestions`) in [`find`].

pub mod erase;
pub mod export;
pub mod find;
pub mod investigate;
pub mod search;

use super::gate::PageRoutes;
use axum::Router;

/// Both player pages.
pub fn router() -> PageRoutes {
    Router::new()
        .merge(search::router())
        .merge(find::router())
        .merge(investigate::router())
        .merge(export::router())
        .merge(erase::router())
}
