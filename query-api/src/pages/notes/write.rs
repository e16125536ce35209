//! `POST /players/{uuid}/notes`: a moderator's note, read from the form, checked with the
//! record's own rules ([`Note::validate`]), logged to JetStream and audited.
//!
//! The note is published on its own subject (`<prefix>.part.<k>.<account>.note`, the
//! account's partition of the stream as opened), and the page answers only after the stream's
//! ack: a redirect means the note is durable. Without an ack the page comes back with the draft
//! and says which of two things happened: the log was known to be down, so nothing was sent and
//! nothing was written; or the note was sent and not confirmed in time, so it may still be
//! stored (a client buffers what it sent while the server was away and delivers it when it is
//! back). The note's id comes with the form (made when the form was shown), and its
//! `Nats-Msg-Id` and the read model's key are built from it, so sending the same form again
//! never adds the note twice.

use super::{Draft, allowed, refused};
use crate::pages::error::PageError;
use crate::pages::form::Form;
use crate::pages::gate::SignedIn;
use crate::pages::log_append::{NotAppended, append};
use crate::queries::notes::{is_players_punishment, note_exists};
use crate::routes::history::require_player;
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use axum::extract::{Path, State};
use axum::http::header::{LOCATION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;
use serde_json::json;
use shared::envelope::{LogMessage, Logged};
use shared::records::{Note, NoteAuthor};
use shared::validation::FieldError;
use std::time::Duration;
use uuid::Uuid;

/// How long the redirect waits for the projector to show the new note (then it goes anyway:
/// the note is durable, and appears on the next load).
const SHOW_WITHIN: Duration = Duration::from_secs(3);
/// Seconds a client is told to wait when the event log did not take the note.
const RETRY_AFTER_SECONDS: u32 = 5;

/// The add-note form.
#[derive(Debug, Deserialize)]
pub(super) struct NoteForm {
    #[serde(default)]
    text: String,
    /// One link per line.
    #[serde(default)]
    evidence: String,
    /// A punishment of the player, or empty for the player.
    #[serde(default)]
    punishment_id: String,
    /// The note's id, made with the form (empty: a new one).
    #[serde(default)]
    note_id: String,
}

impl NoteForm {
    fn draft(&self, note_id: Uuid) -> Draft {
        Draft {
            note_id,
            text: self.text.clone(),
            evidence: self.evidence.clone(),
            punishment_id: self.punishment_id.clone(),
        }
    }

    /// The evidence links: one per non-blank line, trimmed.
    fn links(&self) -> Vec<String> {
        self.evidence
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// The field errors as one sentence for the page.
fn sentence(errors: &[FieldError]) -> String {
    let parts: Vec<String> = errors
        .iter()
        .map(|e| {
            let field = match e.field.split('.').next().unwrap_or("") {
                "text" => "Note".to_owned(),
                "evidence" => match e.field.split_once('.') {
                    Some((_, i)) => {
                        format!("Evidence link {}", i.parse::<usize>().map_or(0, |i| i + 1))
                    }
                    None => "Evidence".to_owned(),
                },
                "punishment_id" => "About".to_owned(),
                "note_id" => "Form".to_owned(),
                other => other.to_owned(),
            };
            format!("{field}: {}", e.message)
        })
        .collect();
    format!("The note was not added. {}.", parts.join("; "))
}

pub(super) async fn add_note(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(player): Path<String>,
    Form(form): Form<NoteForm>,
) -> Result<Response, PageError> {
    if !allowed(&caller) {
        return Err(PageError::Forbidden {
            title: "Notes",
            role: caller.member().role,
        });
    }
    let player = Uuid::parse_str(&player).map_err(|_| PageError::NotFound)?;
    let member = caller.member();
    let account_id = member.account_id;
    require_player(&state.pool, account_id, player).await?;

    let mut errors = Vec::new();
    let id = match note_id(&form.note_id) {
        Ok(id) => id,
        Err(error) => {
            errors.push(error);
            Uuid::now_v7()
        }
    };
    let punishment_id = match form.punishment_id.trim() {
        "" => None,
        id => match Uuid::parse_str(id) {
            Ok(id) if is_players_punishment(&state.pool, account_id, player, id).await? => Some(id),
            _ => {
                errors.push(FieldError {
                    field: "punishment_id".into(),
                    code: "not_found".into(),
                    message: "choose one of this player's punishments, or the player".into(),
                });
                None
            }
        },
    };
    let now = Utc::now();
    let note = Note {
        player_uuid: player,
        punishment_id,
        text: form.text.trim().to_owned(),
        evidence: form.links(),
        author: NoteAuthor {
            member_id: member.id,
            name: member.display_name.clone(),
        },
        written_at: now,
    };
    if let Err(rules) = note.validate(now) {
        errors.extend(rules);
    }
    if !errors.is_empty() {
        let status = StatusCode::UNPROCESSABLE_ENTITY;
        let message = sentence(&errors);
        return refused(&state, &caller, player, form.draft(id), status, message).await;
    }

    let subject = state.subjects.for_records(account_id, Note::KIND, None);
    let batch = Note::into_batch(vec![Logged {
        id,
        record: note.clone(),
    }]);
    let mut message = LogMessage::new(account_id, now, batch);
    if let Err(failure) = append(&state, subject, &mut message, "note", id).await {
        let message = match &failure {
            NotAppended::Unsent(error) => {
                tracing::warn!(%error, "a note could not be appended to the event log");
                "The note was not added: the event log is unavailable right now. \
                 Nothing was saved; try again in a moment."
            }
            NotAppended::Unconfirmed(error) => {
                tracing::warn!(%error, "a note sent to the event log was not confirmed");
                "The event log did not confirm the note in time, so it may or may not have \
                 been saved. Send the form again in a moment: if it was saved, it is not added \
                 twice."
            }
        };
        let status = StatusCode::SERVICE_UNAVAILABLE;
        let draft = form.draft(id);
        let mut page = refused(&state, &caller, player, draft, status, message.to_owned()).await?;
        page.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        return Ok(page);
    }

    // Durable from here on; the audit row follows the change, as for every dashboard write.
    let actor = caller.actor(&state);
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor: &actor,
        action: "note_added",
        target: Some(player.to_string()),
        detail: json!({
            "note_id": id,
            "punishment_id": note.punishment_id,
            "evidence_links": note.evidence.len(),
        }),
    };
    audit::record(&state.pool, entry).await?;
    shown(&state, account_id, id).await;
    Ok((
        StatusCode::SEE_OTHER,
        [(LOCATION, format!("/players/{player}#notes"))],
    )
        .into_response())
}

/// The form's note id: empty for a new one, else a UUID v7 (what forms are given).
fn note_id(sent: &str) -> Result<Uuid, FieldError> {
    match sent.trim() {
        "" => Ok(Uuid::now_v7()),
        sent => Uuid::parse_str(sent)
            .ok()
            .filter(|id| id.get_version_num() == 7)
            .ok_or_else(|| FieldError {
                field: "note_id".into(),
                code: "invalid".into(),
                message: "this form's note id is not one the dashboard made; \
                          the form below has a new one, send it again"
                    .into(),
            }),
    }
}

/// Waits (at most [`SHOW_WITHIN`]) until the projector has stored the note, so the page the
/// redirect opens shows it; a slow projector only means it shows on a later load.
async fn shown(state: &AppState, account_id: Uuid, id: Uuid) {
    let deadline = tokio::time::Instant::now() + SHOW_WITHIN;
    while tokio::time::Instant::now() < deadline {
        match note_exists(&state.pool, account_id, id).await {
            Ok(true) | Err(_) => return,
            Ok(false) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::note_id;
    use uuid::Uuid;

    #[test]
    fn a_form_without_a_note_id_gets_a_new_one() {
        let (first, second) = (note_id("").unwrap(), note_id("  ").unwrap());
        assert_eq!(first.get_version_num(), 7);
        assert_ne!(first, second);
    }

    #[test]
    fn the_note_id_a_form_was_given_is_kept() {
        let given = Uuid::now_v7();
        assert_eq!(note_id(&given.to_string()).unwrap(), given);
        assert_eq!(note_id(&format!(" {given}\n")).unwrap(), given);
    }

    #[test]
    fn a_note_id_the_dashboard_did_not_make_is_refused() {
        for sent in [
            "not-a-uuid",
            &Uuid::new_v4().to_string(),
            &Uuid::nil().to_string(),
        ] {
            let error = note_id(sent).expect_err(sent);
            assert_eq!(
                (error.field.as_str(), error.code.as_str()),
                ("note_id", "invalid")
            );
        }
    }
}
