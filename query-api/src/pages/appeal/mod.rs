//! `/appeal/{token}`: the public appeal form a punished player reaches from the link on their
//! kick screen. No sign-in: the signed, expiring token ([`shared::appeal_link`]) proves which
//! punishment of which account the holder may appeal.
//!
//! The page shows the punishment (type, reason, when, until when, whether still in force) and
//! either the form or, once an appeal was sent for that punishment, its status, the player's
//! words and, for a decision, staff's reply (never who decided). A link that is malformed or
//! forged is a plain 404 that says nothing of why; a genuine one past its expiry is a 410 that
//! says how to get a new one. Every answer is `noindex`, on top of the pages' headers
//! (`super::page_headers`). Sending the form is [`submit`].

mod submit;

use super::error::PageError;
use super::gate::{Visitor, VisitorRoutes};
use super::render;
use crate::queries::public_appeal::{self, AppealedPunishment, SentAppeal};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use shared::appeal_link::{AppealClaims, LinkError, Unverified};
use shared::records::{MAX_APPEAL_TEXT, MIN_APPEAL_MESSAGE};

/// Seconds a visitor is told to wait when a part the page needs is unavailable.
const RETRY_AFTER_SECONDS: u32 = 5;

/// `/appeal/{token}`: the page and the form's target.
pub fn router() -> VisitorRoutes {
    Router::new()
        .route("/appeal/{token}", get(show).post(submit::submit))
        .layer(axum::middleware::map_response(noindex))
}

/// Appeal pages are for the one player who holds the link: never in a search engine.
async fn noindex(mut response: Response) -> Response {
    response.headers_mut().insert(
        "x-robots-tag",
        HeaderValue::from_static("noindex, nofollow"),
    );
    response
}

/// The appeal page: the punishment, then the form or the appeal's status.
#[derive(Template)]
#[template(path = "appeal.html")]
struct AppealPage<'a> {
    punishment: &'a AppealedPunishment,
    appeal: Option<&'a SentAppeal>,
    /// The draft the form shows again (after a refusal).
    message: &'a str,
    /// What is wrong with the draft, shown next to the field.
    error: Option<&'a str>,
    /// What happened to a form that could not be taken (the log was unavailable).
    notice: Option<&'a str>,
    min: usize,
    max: usize,
}

impl AppealPage<'_> {
    fn kind(&self) -> &'static str {
        match self.punishment.punishment_type.as_str() {
            "ban" => "Ban",
            "mute" => "Mute",
            "kick" => "Kick",
            _ => "Warning",
        }
    }

    fn status_label(status: &str) -> &'static str {
        match status {
            "new" => "Received: waiting for staff",
            "under_review" => "Under review",
            "accepted" => "Accepted",
            _ => "Denied",
        }
    }

    fn when(at: &DateTime<Utc>) -> String {
        super::display::date_time(at)
    }

    fn iso(at: &DateTime<Utc>) -> String {
        super::display::iso(at)
    }
}

/// The page for `punishment` with its appeal, if any, a draft and what went wrong.
fn page(
    status: StatusCode,
    punishment: &AppealedPunishment,
    appeal: Option<&SentAppeal>,
    message: &str,
    error: Option<&str>,
    notice: Option<&str>,
) -> Result<Response, PageError> {
    let page = AppealPage {
        punishment,
        appeal,
        message,
        error,
        notice,
        min: MIN_APPEAL_MESSAGE,
        max: MAX_APPEAL_TEXT,
    };
    Ok((status, render(&page)?).into_response())
}

/// A page that only says why nothing more can be shown.
#[derive(Template)]
#[template(path = "appeal_refused.html")]
struct RefusedPage<'a> {
    title: &'a str,
    message: &'a str,
}

/// An answer that is not the appeal page: `status` with a title and what to do.
fn refused(status: StatusCode, title: &str, message: &str) -> Response {
    let page = RefusedPage { title, message };
    let body = page
        .render()
        .unwrap_or_else(|_| format!("{title}. {message}"));
    let mut response = (status, axum::response::Html(body)).into_response();
    if matches!(
        status,
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
    ) && response.headers().get(RETRY_AFTER).is_none()
    {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    }
    response
}

/// Why the appeal page is not shown: each its own status and words.
enum Refusal {
    /// 404, with no hint why: malformed, forged, or naming an account that is not one.
    NotValid,
    /// 410: a genuine link past its expiry.
    Expired,
    /// 404: a genuine link to a punishment not (yet) on record; the projector may trail the
    /// server that issued it by a moment.
    NotOnRecord,
    /// 503: the link keys did not answer.
    Unavailable,
    /// 415: a body that is not a form.
    NotAForm,
    /// 413: a body past the form's limit.
    TooLarge,
    /// 400: a form body that cannot be read.
    Unreadable,
    /// A failure of ours (logged once by the page error).
    Failed(Box<PageError>),
}

impl From<sqlx::Error> for Refusal {
    fn from(error: sqlx::Error) -> Self {
        Refusal::Failed(Box::new(error.into()))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, title, message) = match self {
            Refusal::NotValid => (
                StatusCode::NOT_FOUND,
                "This appeal link is not valid",
                "Check that you opened the whole link from the message you were shown.",
            ),
            Refusal::Expired => (
                StatusCode::GONE,
                "This appeal link has expired",
                "This appeal link has expired: join the server again for a new one.",
            ),
            Refusal::NotOnRecord => (
                StatusCode::NOT_FOUND,
                "This punishment is not on record yet",
                "It can take a minute after a punishment for it to appear here. Open the link \
                 again in a moment.",
            ),
            Refusal::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Appeals are unavailable right now",
                "Try the link again in a moment.",
            ),
            Refusal::NotAForm => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The form could not be read",
                "Send the appeal from the form on its page.",
            ),
            Refusal::Unreadable => (
                StatusCode::BAD_REQUEST,
                "The form could not be read",
                "Send the appeal from the form on its page.",
            ),
            Refusal::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "The appeal is too long",
                "An appeal is at most 2,000 characters. Shorten it and send it again.",
            ),
            Refusal::Failed(error) => return error.into_response(),
        };
        refused(status, title, message)
    }
}

/// The token in the path; a path that is not even text (a bad percent-escape) is a bad link
/// like any other.
fn token_text(token: Result<Path<String>, PathRejection>) -> Result<String, Refusal> {
    token
        .map(|Path(token)| token)
        .map_err(|_| Refusal::NotValid)
}

/// The token's claims and the punishment it names.
async fn check_link(
    state: &AppState,
    token: &str,
) -> Result<(AppealClaims, AppealedPunishment), Refusal> {
    let unverified = Unverified::read(token).map_err(|_| Refusal::NotValid)?;
    let account_id = unverified.account_id();
    // A made-up account must not get a link key made for it (link_key makes one on first use).
    if !public_appeal::account_exists(&state.pool, account_id).await? {
        return Err(Refusal::NotValid);
    }
    let key = state.keyring.link_key(account_id).await.map_err(|error| {
        tracing::warn!(%error, "the appeal link key could not be read");
        Refusal::Unavailable
    })?;
    let claims = match unverified.verify(&key, Utc::now()) {
        Ok(claims) => claims,
        Err(LinkError::Invalid) => return Err(Refusal::NotValid),
        Err(LinkError::Expired) => return Err(Refusal::Expired),
    };
    match public_appeal::punishment(&state.pool, account_id, claims.punishment_id).await? {
        Some(punishment) => Ok((claims, punishment)),
        None => Err(Refusal::NotOnRecord),
    }
}

/// The link's claims and punishment, from the path.
async fn open_link(
    state: &AppState,
    token: Result<Path<String>, PathRejection>,
) -> Result<(String, AppealClaims, AppealedPunishment), Refusal> {
    let token = token_text(token)?;
    let (claims, punishment) = check_link(state, &token).await?;
    Ok((token, claims, punishment))
}

async fn show(
    _visitor: Visitor,
    State(state): State<AppState>,
    token: Result<Path<String>, PathRejection>,
) -> Result<Response, PageError> {
    let (_, claims, punishment) = match open_link(&state, token).await {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal.into_response()),
    };
    let appeal = public_appeal::appeal_of(&state.pool, claims.account_id, punishment.id).await?;
    page(StatusCode::OK, &punishment, appeal.as_ref(), "", None, None)
}
