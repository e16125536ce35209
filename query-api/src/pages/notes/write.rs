//! `POST /players/{uuid}/notes`: a moderator's note, read from the form, checked with the
//! record's own rules ([`Note::validate`]), logged to JetStream and audited.
//!
//! The note is published on its own subject (`<prefix>.part.<k>.<account>.note`, the
//! account's partition of the stream as opened) with its id as `Nats-Msg-Id`, and the page answers only after the stream's ack: a redirect means the note
//! is durable; no ack means nothing was written, and the page says so with the draft intact.

use super::{Draft, allowed, refused};
use crate::pages::error::PageError;
use crate::pages::form::Form;
use crate::pages::gate::SignedIn;
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
use shared::privacy::PrivacyPolicy;
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
}

impl NoteForm {
    fn draft(&self) -> Draft {
        Draft {
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
        return refused(&state, &caller, player, form.draft(), status, message).await;
    }

    let id = Uuid::now_v7();
    let subject = state.subjects.for_records(account_id, Note::KIND, None);
    let batch = Note::into_batch(vec![Logged {
        id,
        record: note.clone(),
    }]);
    // Notes are personal (text and links): sealed with the player's key before the append, so
    // erasing the player shreds them in the log too.
    let mut message = LogMessage::new(account_id, now, batch);
    let appended: Result<(), String> = async {
        // Refused at once while disconnected, as the append would be: fetching the player's
        // key would wait for the reconnect.
        if !state.publisher.is_connected() {
            return Err("not connected to NATS".to_owned());
        }
        let policy = PrivacyPolicy::default();
        let sealed = state.keyring.seal(&mut message, &policy).await;
        sealed.map_err(|error| format!("sealing: {error}"))?;
        let payload = message.encode();
        state
            .publisher
            .append(subject, Some(id.to_string()), payload)
            .await?;
        Ok(())
    }
    .await;
    if let Err(error) = appended {
        tracing::warn!(%error, "a note could not be appended to the event log");
        let message = "The note was not added: the event log is unavailable right now. \
                       Nothing was saved; try again in a moment."
            .to_owned();
        let status = StatusCode::SERVICE_UNAVAILABLE;
        let mut page = refused(&state, &caller, player, form.draft(), status, message).await?;
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
