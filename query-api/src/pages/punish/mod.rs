//! Punishing and revoking from the dashboard: the Investigate page's "Punish" section (a
//! form, and a revoke form on each punishment in force) and the Punishments page's revoke.
//!
//! `POST /players/{uuid}/punishments` issues and `POST /punishments/{id}/revoke` revokes,
//! each as an `action` record of the event log ([`write`]): the projector applies it as it
//! applies a plugin's punishment, and the servers' plugins read it from ingest's action feed
//! and enforce it. Who may do what: [`rules`].

mod rules;
mod write;

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use crate::routes::history::PageRequest;
use crate::routes::punishments;
use crate::state::AppState;
use crate::team::Area;
use askama::Template;
use axum::Router;
use axum::routing::post;
use uuid::Uuid;

pub use rules::MODERATOR_BAN_DAYS;
pub(crate) use write::{LogId, action_id, commit, log, refused, revoke_of, see_other, shown};

/// Punishments in force offered for revoking on the Investigate page (the newest).
const REVOCABLE_SHOWN: i64 = 100;

/// The routes that punish and revoke.
pub fn router() -> PageRoutes {
    Router::new()
        .route("/players/{uuid}/punishments", post(write::issue))
        .route("/punishments/{id}/revoke", post(write::revoke))
}

/// A punishment in force, with its revoke form.
#[derive(Debug, Clone)]
struct Revocable {
    id: Uuid,
    /// E.g. `ban until 2025-03-08 10:00 UTC: x-ray`.
    label: String,
}

/// The section's data.
#[derive(Template)]
#[template(path = "partials/punish.html")]
struct Section {
    player: Uuid,
    /// A new action id for the issue form (a form sent twice is one action).
    action_id: Uuid,
    lengths: &'static [(&'static str, &'static str, Option<i64>)],
    /// Whether the member may issue permanent and long bans (shown as a hint otherwise).
    unlimited: bool,
    revocable: Vec<Revocable>,
}

/// The Punish section of `player`'s Investigate page, rendered (escaped) HTML; empty when the
/// member's role may not punish.
pub async fn player_section(
    state: &AppState,
    caller: &SignedIn,
    player: Uuid,
) -> Result<String, PageError> {
    let role = caller.member().role;
    if !role.allows(Area::Punish) {
        return Ok(String::new());
    }
    let page = PageRequest {
        limit: REVOCABLE_SHOWN,
        cursor: None,
    };
    let account_id = caller.member().account_id;
    let issued = punishments::fetch(&state.reads, account_id, player, &page).await?;
    let revocable = issued
        .into_iter()
        .filter(|p| p.is_active)
        .map(|p| {
            let mut label = match p.expires_at {
                Some(end) => format!(
                    "{} until {}",
                    p.punishment_type,
                    super::display::date_time(&end)
                ),
                None => format!("{}, permanent", p.punishment_type),
            };
            if let Some(reason) = p.reason.filter(|r| !r.is_empty()) {
                label.push_str(": ");
                label.extend(reason.chars().take(60));
            }
            Revocable { id: p.id, label }
        })
        .collect();
    Ok(Section {
        player,
        action_id: Uuid::now_v7(),
        lengths: &rules::LENGTHS,
        unlimited: role.allows(Area::PunishWithoutLimit),
        revocable,
    }
    .render()?)
}
