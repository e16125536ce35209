//! Account-wide dashboard reads for bots and the staff pages: player search, a player's
//! alts and staff notes, and the whole account's punishments, anti-cheat flags and chat,
//! each filtered and paged by keyset.

pub mod alts;
pub mod chat;
pub mod flags;
pub mod keyword_search;
pub mod notes;
pub mod params;
pub mod punishments;
pub mod search;

use crate::auth::DashboardRoutes;
use axum::Router;
use axum::routing::get;

/// The routes of these reads.
pub fn router() -> DashboardRoutes {
    Router::new()
        .route("/api/players", get(search::search_players))
        .route("/api/players/{uuid}/alts", get(alts::list_alts))
        .route("/api/players/{uuid}/notes", get(notes::list_notes))
        .route("/api/punishments", get(punishments::list_punishments))
        .route("/api/flags", get(flags::list_flags))
        .route("/api/chat", get(chat::list_chat))
}
