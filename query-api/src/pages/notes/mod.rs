//! Staff notes on a player or a punishment.
//!
//! The Investigate page shows a player's notes with [`player_section`]: this module renders
//! its own section (the notes, newest first, and the add form) to escaped HTML, which the page
//! embeds. `POST /players/{uuid}/notes` writes a note to the event log ([`write`]); a note
//! that breaks a rule, or that the log could not take, comes back on a page of its own with
//! the draft and the reason.

mod write;

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::queries::notes::{NoteItem, player_notes};
use crate::routes::history::PageRequest;
use crate::routes::punishments;
use crate::state::AppState;
use crate::team::Area;
use askama::Template;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use uuid::Uuid;

/// Notes shown on the Investigate page (the newest; the API pages through all of them).
const SHOWN_NOTES: i64 = 50;
/// Punishments offered in the form's "About" list (the newest).
const PUNISHMENT_CHOICES: i64 = 100;

/// The routes that write notes.
pub fn router() -> PageRoutes {
    Router::new().route("/players/{uuid}/notes", post(write::add_note))
}

/// What the form held, shown again when the note was refused.
#[derive(Debug, Clone)]
struct Draft {
    /// The id the note gets, made with the form and sent back with it (a hidden field): a
    /// form sent again after the log did not confirm it in time is the same note, so it is
    /// never added twice.
    note_id: Uuid,
    text: String,
    /// The links as typed, one per line.
    evidence: String,
    /// The chosen punishment's id as sent ("" for the player).
    punishment_id: String,
}

impl Draft {
    /// An empty form with a new note id.
    fn fresh() -> Self {
        Self {
            note_id: Uuid::now_v7(),
            text: String::new(),
            evidence: String::new(),
            punishment_id: String::new(),
        }
    }
}

/// One of the player's punishments, as the form offers it.
#[derive(Debug, Clone)]
struct PunishmentChoice {
    id: Uuid,
    /// E.g. `ban, 2025-03-01 10:17 UTC: griefing`.
    label: String,
}

/// The section's data.
#[derive(Debug, Clone)]
struct NotesSection {
    player: Uuid,
    notes: Vec<NoteItem>,
    /// Whether older notes exist than those shown.
    more: bool,
    punishments: Vec<PunishmentChoice>,
    draft: Draft,
    error: Option<String>,
}

/// The section alone, as the Investigate page embeds it.
#[derive(Template)]
#[template(path = "partials/notes.html")]
struct SectionHtml {
    section: NotesSection,
}

/// The section on a page of its own: a refused note, with the draft and the reason.
#[derive(Template)]
#[template(path = "note_form.html")]
struct RefusedNotePage {
    shell: Shell,
    section: NotesSection,
}

/// Whether the member's role may read and write notes.
fn allowed(caller: &SignedIn) -> bool {
    caller.member().role.allows(Area::Notes)
}

/// The notes section of `player`'s Investigate page, rendered (escaped) HTML; empty when the
/// member's role does not allow notes.
pub async fn player_section(
    state: &AppState,
    caller: &SignedIn,
    player: Uuid,
) -> Result<String, PageError> {
    if !allowed(caller) {
        return Ok(String::new());
    }
    let section = section(state, caller, player, Draft::fresh(), None).await?;
    Ok(SectionHtml { section }.render()?)
}

/// Gathers the section: the newest notes and the punishments a note may be about.
async fn section(
    state: &AppState,
    caller: &SignedIn,
    player: Uuid,
    draft: Draft,
    error: Option<String>,
) -> Result<NotesSection, PageError> {
    let account_id = caller.member().account_id;
    let page = PageRequest {
        limit: SHOWN_NOTES,
        cursor: None,
    };
    let notes = player_notes(&state.reads, account_id, player, &page).await?;
    let choices = PageRequest {
        limit: PUNISHMENT_CHOICES,
        cursor: None,
    };
    let mut issued = punishments::fetch(&state.reads, account_id, player, &choices).await?;
    issued.truncate(PUNISHMENT_CHOICES as usize);
    let punishments = issued
        .into_iter()
        .map(|p| {
            let mut label = format!(
                "{}, {}",
                p.punishment_type,
                super::display::date_time(&p.issued_at)
            );
            if let Some(reason) = p.reason.filter(|r| !r.is_empty()) {
                label.push_str(": ");
                label.extend(reason.chars().take(60));
            }
            PunishmentChoice { id: p.id, label }
        })
        .collect();
    Ok(NotesSection {
        player,
        more: notes.next_cursor.is_some(),
        notes: notes.items,
        punishments,
        draft,
        error,
    })
}

/// The refused note's page: the section with the draft and `error`, answered with `status`.
async fn refused(
    state: &AppState,
    caller: &SignedIn,
    player: Uuid,
    draft: Draft,
    status: StatusCode,
    error: String,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, "/players")?;
    let section = section(state, caller, player, draft, Some(error)).await?;
    Ok((status, render(&RefusedNotePage { shell, section })?).into_response())
}
