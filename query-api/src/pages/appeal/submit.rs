//! `POST /appeal/{token}`: a player's appeal, read from the form, checked with the record's own
//! rules ([`Appeal::validate`]) and logged to JetStream; then 303 back to the link, which shows
//! the appeal's status.
//!
//! Anyone holding a link can send this, so it is guarded before anything is read: at most
//! [`Quota::Appeal`] posts a minute per client address (the limiter the sign-in page uses), a
//! body of at most [`MAX_BODY_BYTES`], and a honeypot field (`website`, off-screen and hidden
//! from assistive technology) that a person leaves empty and a form-filling bot does not: a
//! filled one is answered exactly like an accepted appeal and nothing is stored.
//!
//! One appeal per punishment: once one is on record the form only redirects to it. The log
//! message's id is built from the account and the punishment, so two posts racing each other
//! are one message to the stream's duplicate window, and the read model keeps the first appeal
//! of a punishment after that. The player is the punishment's, never anything the form says.
//! There is no member to audit: the appeal record itself is the trail.

use super::{Refusal, open_link, page, refused};
use crate::pages::error::PageError;
use crate::pages::gate::Visitor;
use crate::pages::log_append::{NotAppended, append};
use crate::queries::public_appeal::appeal_of;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;
use shared::envelope::{LogMessage, Logged};
use shared::rate_limit::Quota;
use shared::records::{Appeal, AppealStep};
use std::time::Duration;
use uuid::Uuid;

/// The largest form body taken: a 2,000-character message, percent-encoded, with room to spare.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// How long the redirect waits for the projector to show the appeal (then it goes anyway: the
/// appeal is durable, and shows on the next load).
const SHOW_WITHIN: Duration = Duration::from_secs(3);
/// Seconds a visitor is told to wait when the event log did not take the appeal.
const RETRY_AFTER_SECONDS: u32 = 5;

/// The appeal form.
#[derive(Debug, Default, Deserialize)]
struct AppealForm {
    /// The player's words.
    #[serde(default)]
    message: String,
    /// The honeypot: a person never sees it, so it must stay empty.
    #[serde(default)]
    website: String,
}

pub(super) async fn submit(
    visitor: Visitor,
    State(state): State<AppState>,
    token: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, PageError> {
    let decision = state
        .limiter
        .check(Quota::Appeal, &visitor.client_ip.to_string())
        .await;
    if !decision.allowed {
        let mut page = refused(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many attempts",
            "Too many appeals were sent from your network just now. Wait a minute, then open \
             the link again.",
        );
        decision.apply_headers(page.headers_mut());
        return Ok(page);
    }
    let form = match read_form(&headers, body).await {
        Ok(form) => form,
        Err(refusal) => return Ok(refusal.into_response()),
    };
    let (token, claims, punishment) = match open_link(&state, token).await {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal.into_response()),
    };
    let account_id = claims.account_id;
    // A token that verified is 71 URL-safe characters: safe as it is in a header.
    let back = format!("/appeal/{token}");
    if appeal_of(&state.pool, account_id, punishment.id)
        .await?
        .is_some()
    {
        return Ok(see_other(&back));
    }

    let now = Utc::now();
    let text = form.message.trim();
    let appeal = Appeal {
        id: Uuid::now_v7(),
        step: AppealStep::Submitted,
        punishment_id: punishment.id,
        player_uuid: punishment.player_uuid,
        message: Some(text.to_owned()),
        reply: None,
        by: None,
        revoke_action: None,
        at: now,
    };
    if let Err(errors) = appeal.validate(now) {
        let said: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
        let error = format!("Your appeal was not sent: it {}.", said.join("; it "));
        let status = StatusCode::BAD_REQUEST;
        return page(status, &punishment, None, &form.message, Some(&error), None);
    }
    if !form.website.is_empty() {
        // Answered like an accepted appeal, so a bot learns nothing; nothing is stored.
        tracing::info!("an appeal with the honeypot filled was dropped");
        metrics::counter!("appeal_honeypot_total").increment(1);
        return Ok(see_other(&back));
    }

    let subject = state.subjects.for_records(account_id, Appeal::KIND, None);
    let batch = Appeal::into_batch(vec![Logged {
        id: appeal.id,
        record: appeal,
    }]);
    let mut message = LogMessage::new(account_id, now, batch);
    // The punishment's id, not the appeal's: racing posts are one message to the stream.
    if let Err(failure) = append(&state, subject, &mut message, "appeal", punishment.id).await {
        let notice = match &failure {
            NotAppended::Unsent(error) => {
                tracing::warn!(%error, "an appeal could not be appended to the event log");
                "Your appeal was not sent: appeals cannot be taken right now. Nothing was \
                 saved; send it again in a moment."
            }
            NotAppended::Unconfirmed(error) => {
                tracing::warn!(%error, "an appeal sent to the event log was not confirmed");
                "Your appeal may or may not have been received. Send it again in a moment: if \
                 it was received, it is not sent twice."
            }
        };
        let status = StatusCode::SERVICE_UNAVAILABLE;
        let mut answer = page(status, &punishment, None, &form.message, None, Some(notice))?;
        answer
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        return Ok(answer);
    }
    metrics::counter!("appeals_submitted_total").increment(1);
    shown(&state, account_id, punishment.id).await;
    Ok(see_other(&back))
}

/// The form: refused with 415 for another content type, 413 past [`MAX_BODY_BYTES`], 400 for
/// a body that is not a form.
async fn read_form(headers: &HeaderMap, body: Body) -> Result<AppealForm, Refusal> {
    let is_form = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            m.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !is_form {
        return Err(Refusal::NotAForm);
    }
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(Refusal::TooLarge);
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| Refusal::TooLarge)?;
    serde_urlencoded::from_bytes(&bytes).map_err(|_| Refusal::Unreadable)
}

fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(LOCATION, to.to_owned())]).into_response()
}

/// Waits (at most [`SHOW_WITHIN`]) until the projector has stored the appeal, so the page the
/// redirect opens shows it; a slow projector only means it shows on a later load.
async fn shown(state: &AppState, account_id: Uuid, punishment_id: Uuid) {
    let deadline = tokio::time::Instant::now() + SHOW_WITHIN;
    while tokio::time::Instant::now() < deadline {
        match appeal_of(&state.pool, account_id, punishment_id).await {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
