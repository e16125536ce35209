//! `/team`: the account's members and open invites, for owners and admins. Invite a member (the
//! link is shown once), withdraw an invite, change a role, remove a member. The rules (an admin
//! cannot make or touch an owner, the last owner stays) are the team module's, as for the admin
//! API; a refused change shows the team page again with the reason.

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::state::AppState;
use crate::team::invites::{self, InviteSummary};
use crate::team::{Member, Role, TeamError, members, parse_role};
use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::header::{LOCATION, ORIGIN};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

const PATH: &str = "/team";

/// An invite link just made, shown once.
pub struct IssuedLink {
    /// Who it is for.
    pub login: String,
    /// The role it gives.
    pub role: Role,
    /// The whole link.
    pub url: String,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
}

/// The team page.
#[derive(Template)]
#[template(path = "team.html")]
struct TeamPage {
    shell: Shell,
    me: Uuid,
    members: Vec<Member>,
    invites: Vec<InviteSummary>,
    /// The roles this member may give (the invite form and the role selects).
    grantable: Vec<Role>,
    notice: Option<&'static str>,
    error: Option<String>,
    issued: Option<IssuedLink>,
}

impl TeamPage {
    /// Whether this member may change or remove `member` (admins leave owners alone).
    fn may_manage(&self, member: &Member) -> bool {
        self.shell.role.may_manage(member.role)
    }
}

/// `?notice=` after a change: a fixed message per code (never text from the URL).
#[derive(Debug, Deserialize)]
struct Notice {
    notice: Option<String>,
}

fn notice_text(code: &str) -> Option<&'static str> {
    match code {
        "role_changed" => Some("Role changed. Their sessions have ended: they sign in again."),
        "removed" => Some("Member removed. Their sessions have ended."),
        "invite_revoked" => Some("Invite withdrawn: its link no longer works."),
        _ => None,
    }
}

/// The invite form.
#[derive(Debug, Deserialize)]
struct InviteForm {
    #[serde(default)]
    login: String,
    #[serde(default)]
    role: String,
    /// 1, 7 or 30.
    #[serde(default = "default_days")]
    expires_in_days: i64,
}

fn default_days() -> i64 {
    7
}

/// The role form.
#[derive(Debug, Deserialize)]
struct RoleForm {
    #[serde(default)]
    role: String,
}

/// `/team` and its forms.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(show))
        .route("/team/invites", post(invite))
        .route("/team/invites/{id}/revoke", post(revoke_invite))
        .route("/team/members/{id}/role", post(set_role))
        .route("/team/members/{id}/remove", post(remove))
}

/// The page, with whatever the last action left to say.
async fn page(
    state: &AppState,
    caller: &SignedIn,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    issued: Option<IssuedLink>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, PATH)?;
    let account_id = caller.member().account_id;
    let page = TeamPage {
        me: caller.member().id,
        members: members::list(&state.pool, account_id).await?,
        invites: invites::list_open(&state.pool, account_id).await?,
        grantable: Role::ALL
            .into_iter()
            .rev()
            .filter(|role| shell.role.may_manage(*role))
            .collect(),
        shell,
        notice,
        error,
        issued,
    };
    Ok((status, render(&page)?).into_response())
}

/// After a change: back to the page with a notice (a GET, so a reload repeats nothing).
fn done(notice: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(LOCATION, format!("{PATH}?notice={notice}"))],
    )
        .into_response()
}

/// A refused change: the page again with the reason; anything else is an error page.
async fn refused(
    state: &AppState,
    caller: &SignedIn,
    error: TeamError,
) -> Result<Response, PageError> {
    let message = match &error {
        TeamError::Rejected(errors) => errors
            .iter()
            .map(super::invite::describe)
            .collect::<Vec<_>>()
            .join(" "),
        TeamError::Database(_) | TeamError::Hashing(_) | TeamError::Corrupt(_) => {
            return Err(error.into());
        }
        other => other.to_string(),
    };
    let (status, _, _) = PageError::from(error).describe();
    page(state, caller, status, None, Some(message), None).await
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    Query(notice): Query<Notice>,
) -> Result<Response, PageError> {
    let notice = notice.notice.as_deref().and_then(notice_text);
    page(&state, &caller, StatusCode::OK, notice, None, None).await
}

async fn invite(
    caller: SignedIn,
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<InviteForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let role = match parse_role("role", &form.role) {
        Ok(role) => role,
        Err(error) => return refused(&state, &caller, error.into()).await,
    };
    let seconds = form.expires_in_days.clamp(1, 30) * 24 * 3600;
    let account_id = caller.member().account_id;
    let actor = caller.actor(&state);
    match invites::create(&state.pool, account_id, &form.login, role, seconds, &actor).await {
        Ok(issued) => {
            // The gate let this POST in only from this origin, so `Origin` (when sent) is the
            // address the inviter sees the dashboard at: the link works for them.
            let origin = headers
                .get(ORIGIN)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let link = IssuedLink {
                login: issued.login,
                role: issued.role,
                url: format!("{origin}{}", issued.path),
                expires_at: issued.expires_at,
            };
            page(&state, &caller, StatusCode::OK, None, None, Some(link)).await
        }
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn revoke_invite(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let actor = caller.actor(&state);
    match invites::revoke(&state.pool, caller.member().account_id, id, &actor).await {
        Ok(()) => Ok(done("invite_revoked")),
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn set_role(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
    Form(form): Form<RoleForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let role = match parse_role("role", &form.role) {
        Ok(role) => role,
        Err(error) => return refused(&state, &caller, error.into()).await,
    };
    let actor = caller.actor(&state);
    match members::set_role(&state.pool, caller.member().account_id, id, role, &actor).await {
        // Changing one's own role ends one's own session too: the redirect lands on sign-in.
        Ok(_) => Ok(done("role_changed")),
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn remove(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let actor = caller.actor(&state);
    match members::remove(&state.pool, caller.member().account_id, id, &actor).await {
        Ok(_) => Ok(done("removed")),
        Err(error) => refused(&state, &caller, error).await,
    }
}
