//! `/players/{uuid}/erase`: the dashboard's door to a player's erasure
//! ([`crate::routes::erasure`]): owners and admins only ([`Area::Settings`]: what the account
//! keeps about people is theirs to decide), a confirm page first (GET), then the erasure
//! (POST, refused cross-origin by the page gate like every dashboard form), audited as the
//! member. The redirect goes back to the player page, which then shows an erased player.

use super::super::error::PageError;
use super::super::form::Form;
use super::super::gate::{PageRoutes, SignedIn};
use super::super::{Shell, render};
use crate::error::ApiError;
use crate::queries::erasure::{erased_at, known_or_erased};
use crate::routes::erasure::erase;
use crate::routes::history::player_not_found;
use crate::state::AppState;
use crate::team::roles::{Area, Role};
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use shared::problem::Problem;
use uuid::Uuid;

/// What a role needs to erase a player.
const AREA: Area = Area::Settings;
/// The section of the navigation bar the pages belong to.
const SECTION: &str = "/players";

/// Whether `role` may erase a player (the Investigate page shows the action then).
pub(super) fn may_erase(role: Role) -> bool {
    role.allows(AREA)
}

/// `/players/{uuid}/erase`.
pub fn router() -> PageRoutes {
    Router::new().route(
        "/players/{uuid}/erase",
        get(confirm_page).post(erase_action),
    )
}

/// The confirm step.
#[derive(Template)]
#[template(path = "player_erase.html")]
struct ConfirmPage {
    shell: Shell,
    player: Uuid,
    /// The player's current name, if any (the page says whose data goes).
    name: Option<String>,
    /// Already erased (the page says so; erasing again is harmless).
    erased: bool,
    /// Why the last attempt was not made.
    error: Option<&'static str>,
}

/// The confirm form.
#[derive(Debug, Deserialize)]
struct EraseForm {
    /// "yes" when the box is ticked.
    #[serde(default)]
    confirm: String,
}

async fn confirm_page(
    caller: SignedIn,
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, PageError> {
    let (shell, player) = allowed(&caller, &uri)?;
    let account = caller.member().account_id;
    confirm(&state, shell, account, player, None, StatusCode::OK).await
}

async fn erase_action(
    caller: SignedIn,
    State(state): State<AppState>,
    uri: Uri,
    Form(form): Form<EraseForm>,
) -> Result<Response, PageError> {
    let (shell, player) = allowed(&caller, &uri)?;
    let account = caller.member().account_id;
    if form.confirm != "yes" {
        let error = Some("Tick the box to confirm the erasure; nothing was erased.");
        let status = StatusCode::UNPROCESSABLE_ENTITY;
        return confirm(&state, shell, account, player, error, status).await;
    }
    let actor = caller.actor(&state);
    erase(&state, account, player, &actor, "dashboard").await?;
    Ok((
        StatusCode::SEE_OTHER,
        [(LOCATION, format!("/players/{player}"))],
    )
        .into_response())
}

/// The member's shell and the player of the address, or the page's refusal.
fn allowed(caller: &SignedIn, uri: &Uri) -> Result<(Shell, Uuid), PageError> {
    let mut shell = Shell::for_page(caller, SECTION)?;
    let role = caller.member().role;
    if !may_erase(role) {
        return Err(PageError::Forbidden {
            title: "Erase player",
            role,
        });
    }
    shell.title = "Erase player";
    // Read from the URI, as the Investigate page does: any text here gets this 400.
    let raw = uri.path().strip_prefix("/players/").unwrap_or_default();
    let raw = raw.strip_suffix("/erase").unwrap_or_default();
    let player = Uuid::parse_str(raw).map_err(|_| {
        PageError::Api(ApiError::unreadable(Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid_uuid",
            "Not a player UUID",
            "The address must be /players/<a player's UUID>/erase.".to_owned(),
        )))
    })?;
    Ok((shell, player))
}

async fn confirm(
    state: &AppState,
    shell: Shell,
    account: Uuid,
    player: Uuid,
    error: Option<&'static str>,
    status: StatusCode,
) -> Result<Response, PageError> {
    if !known_or_erased(&state.pool, account, player).await? {
        return Err(PageError::Api(player_not_found(player)));
    }
    let erased = erased_at(&state.pool, account, player).await?.is_some();
    let name: Option<String> =
        sqlx::query_scalar("SELECT username FROM players WHERE account_id = $1 AND uuid = $2")
            .bind(account)
            .bind(player)
            .fetch_optional(&state.pool)
            .await?
            .flatten();
    let mut page = render(&ConfirmPage {
        shell,
        player,
        name,
        erased,
        error,
    })?;
    *page.status_mut() = status;
    Ok(page)
}
