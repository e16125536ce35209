//! `/invite/{token}`: accepting an invite by choosing a display name and a password. The new
//! member is signed in at once (a new session, as at every sign-in).

use super::error::PageError;
use super::form::Form;
use super::gate::{Visitor, VisitorRoutes};
use super::render;
use crate::error::ApiError;
use crate::state::AppState;
use crate::team::invites::{self, InviteView};
use crate::team::{TeamError, sessions};
use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

/// The invite form.
#[derive(Debug, Deserialize)]
pub struct AcceptForm {
    /// The name pages will show.
    #[serde(default)]
    pub display_name: String,
    /// The chosen password.
    #[serde(default)]
    pub password: String,
    /// The same again.
    #[serde(default)]
    pub password_confirm: String,
}

/// The invite page: the form, or why the link does not work.
#[derive(Template)]
#[template(path = "invite.html")]
struct InvitePage<'a> {
    invite: Option<&'a InviteView>,
    display_name: &'a str,
    errors: Vec<String>,
}

/// `/invite/{token}`.
pub fn router() -> VisitorRoutes {
    Router::new().route("/invite/{token}", get(show).post(accept))
}

/// The page for a link that no longer works (410).
fn unusable() -> Result<Response, PageError> {
    let page = InvitePage {
        invite: None,
        display_name: "",
        errors: Vec::new(),
    };
    Ok((StatusCode::GONE, render(&page)?).into_response())
}

async fn show(
    _visitor: Visitor,
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    match invites::peek(&state.pool, &token).await {
        Ok(invite) => render(&InvitePage {
            invite: Some(&invite),
            display_name: "",
            errors: Vec::new(),
        }),
        Err(TeamError::InviteUnusable) => unusable(),
        Err(error) => Err(error.into()),
    }
}

async fn accept(
    visitor: Visitor,
    State(state): State<AppState>,
    Path(token): Path<String>,
    Form(form): Form<AcceptForm>,
) -> Result<Response, PageError> {
    let invite = match invites::peek(&state.pool, &token).await {
        Ok(invite) => invite,
        Err(TeamError::InviteUnusable) => return unusable(),
        Err(error) => return Err(error.into()),
    };
    let again = |errors: Vec<String>| -> Result<Response, PageError> {
        let page = InvitePage {
            invite: Some(&invite),
            display_name: &form.display_name,
            errors,
        };
        Ok((StatusCode::UNPROCESSABLE_ENTITY, render(&page)?).into_response())
    };
    if form.password != form.password_confirm {
        return again(vec!["The two passwords differ.".to_owned()]);
    }
    let ip_hash = Some(state.ip_hasher.hash(visitor.client_ip));
    let member = match invites::accept(
        &state.pool,
        &token,
        &form.display_name,
        &form.password,
        ip_hash,
    )
    .await
    {
        Ok(member) => member,
        Err(TeamError::Rejected(errors)) => {
            return again(errors.into_iter().map(|e| describe(&e)).collect());
        }
        Err(TeamError::InviteUnusable) => return unusable(),
        Err(error) => return Err(PageError::Api(ApiError::Team(error))),
    };
    let mut conn = state.pool.acquire().await?;
    let token = sessions::start(&mut conn, member.id, &state.sessions).await?;
    Ok((
        StatusCode::SEE_OTHER,
        [
            (LOCATION, "/".to_owned()),
            (SET_COOKIE, state.sessions.set_cookie(&token)),
        ],
    )
        .into_response())
}

/// A field error as a sentence for the page.
pub(crate) fn describe(error: &shared::validation::FieldError) -> String {
    let field = match error.field.as_str() {
        "display_name" => "Name",
        "password" => "Password",
        "login" => "Login",
        "label" => "Label",
        other => other,
    };
    format!("{field}: {}", error.message)
}
