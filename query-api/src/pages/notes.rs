//! Staff notes on a player or a punishment (issue 15): being built.
//!
//! The Investigate page shows a player's notes with [`player_section`]: this module renders
//! its own section (list and add form) to HTML, which the page embeds.

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use crate::state::AppState;
use axum::Router;
use uuid::Uuid;

/// The routes that write notes.
pub fn router() -> PageRoutes {
    Router::new()
}

/// The notes section of `player`'s Investigate page, rendered (escaped) HTML; empty when the
/// member's role does not allow notes.
pub async fn player_section(
    _state: &AppState,
    _caller: &SignedIn,
    _player: Uuid,
) -> Result<String, PageError> {
    Ok(String::new())
}
