//! `/login` (the sign-in form and the sign-in) and `/logout`.
//!
//! A sign-in is counted against two rolling-minute quotas before anything else (10 per login,
//! 30 per client IP); past either it is a 429 page with `Retry-After`. An unknown login and a
//! wrong password get the same page, and take the same time: the password is checked against a
//! dummy hash when nobody has the login. A successful sign-in ends the session the browser came
//! with, if any, and hands out a new token: a token planted before sign-in is worth nothing.

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn, Visitor, VisitorRoutes};
use super::render;
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use crate::team::sessions::{self, token_hash};
use crate::team::{Actor, Who, members, passwords};
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use shared::keys::hash_secret;
use shared::rate_limit::Quota;

/// The sign-in form.
#[derive(Debug, Deserialize)]
pub struct SignInForm {
    /// The login (case does not matter).
    #[serde(default)]
    pub login: String,
    /// The password.
    #[serde(default)]
    pub password: String,
}

/// The sign-in page.
#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    login: &'a str,
    error: Option<&'a str>,
}

/// What a failed sign-in says, whatever failed.
const WRONG_CREDENTIALS: &str = "That login and password do not match a team member.";

/// `/login`, open to anyone.
pub fn router() -> VisitorRoutes {
    Router::new().route("/login", get(show).post(sign_in))
}

/// `/logout`, for the signed-in.
pub fn signed_in_router() -> PageRoutes {
    Router::new().route("/logout", post(sign_out))
}

async fn show(_visitor: Visitor) -> Result<Response, PageError> {
    render(&LoginPage {
        login: "",
        error: None,
    })
}

async fn sign_in(
    visitor: Visitor,
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Result<Response, PageError> {
    // No login holds a control character (PostgreSQL would refuse a NUL outright), so dropping
    // them changes no match; the length bound is the column's.
    let login: String = form
        .login
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_control())
        .take(254)
        .collect();
    for (quota, client) in [
        (Quota::SignInIp, visitor.client_ip.to_string()),
        // Hashed: a login may hold any character, the quota's key only a few.
        (Quota::SignInLogin, hash_secret(&login)[..32].to_owned()),
    ] {
        let decision = state.limiter.check(quota, &client).await;
        if !decision.allowed {
            return Err(PageError::Throttled(decision.retry_after_secs.unwrap_or(1)));
        }
    }

    let found = members::find_for_sign_in(&state.pool, &login).await?;
    let (member, stored) = match found {
        Some((member, hash)) => (Some(member), Some(hash)),
        None => (None, None),
    };
    let matches = passwords::verify(form.password, stored).await;
    let ip_hash = Some(state.ip_hasher.hash(visitor.client_ip));
    let account_id = member.as_ref().map(|member| member.account_id);

    let Some(member) = member.filter(|_| matches) else {
        let attempt = Actor {
            who: Who::Visitor(if login.is_empty() {
                "(empty)".to_owned()
            } else {
                login.clone()
            }),
            ip_hash,
        };
        audit::record(
            &state.pool,
            AuditEntry {
                account_id,
                actor: &attempt,
                action: "sign_in_failed",
                target: None,
                detail: json!({}),
            },
        )
        .await?;
        let page = LoginPage {
            login: &login,
            error: Some(WRONG_CREDENTIALS),
        };
        return Ok((StatusCode::UNAUTHORIZED, render(&page)?).into_response());
    };

    let mut tx = state.pool.begin().await?;
    if let Some(old) = state.sessions.token(&headers) {
        sessions::end(&mut tx, &token_hash(old)).await?;
    }
    let token = sessions::start(&mut tx, member.id, &state.sessions).await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(member.account_id),
            actor: &Actor::member(&member, ip_hash),
            action: "sign_in",
            target: None,
            detail: json!({}),
        },
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::SEE_OTHER,
        [
            (LOCATION, "/".to_owned()),
            (SET_COOKIE, state.sessions.set_cookie(&token)),
        ],
    )
        .into_response())
}

async fn sign_out(caller: SignedIn, State(state): State<AppState>) -> Result<Response, PageError> {
    let mut tx = state.pool.begin().await?;
    sessions::end(&mut tx, &caller.session.token_hash).await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(caller.member().account_id),
            actor: &caller.actor(&state),
            action: "sign_out",
            target: None,
            detail: json!({}),
        },
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::SEE_OTHER,
        [
            (LOCATION, "/login".to_owned()),
            (SET_COOKIE, state.sessions.clear_cookie()),
        ],
    )
        .into_response())
}
