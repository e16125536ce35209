//! `/players/{uuid}/export`: the dashboard's door to a player export
//! ([`crate::routes::player_export`]): owners and admins only, since the document holds the
//! player's chat ([`Area::ChatLogs`]); counted against the member's dashboard quota like the
//! chat export, and audited as the member.

use super::super::error::PageError;
use super::super::gate::{PageRoutes, SignedIn};
use super::super::quota;
use crate::error::ApiError;
use crate::routes::player_export;
use crate::state::AppState;
use crate::team::roles::{Area, Role};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use axum::routing::get;
use shared::problem::Problem;
use uuid::Uuid;

/// What a role needs to export a player's data.
const AREA: Area = Area::ChatLogs;

/// Whether `role` may export a player's data (the Investigate page shows the link then).
pub(super) fn may_export(role: Role) -> bool {
    role.allows(AREA)
}

/// `/players/{uuid}/export`.
pub fn router() -> PageRoutes {
    Router::new().route("/players/{uuid}/export", get(export_page))
}

async fn export_page(
    caller: SignedIn,
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, PageError> {
    let member = caller.member();
    if !may_export(member.role) {
        return Err(PageError::Forbidden {
            title: "Export player data",
            role: member.role,
        });
    }
    // Read from the URI, as the Investigate page does: any text here gets this 400.
    let raw = uri.path().strip_prefix("/players/").unwrap_or_default();
    let raw = raw.strip_suffix("/export").unwrap_or_default();
    let player = Uuid::parse_str(raw).map_err(|_| {
        PageError::Api(ApiError::unreadable(Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid_uuid",
            "Not a player UUID",
            "The address must be /players/<a player's UUID>/export.".to_owned(),
        )))
    })?;
    quota::spend(&state, &caller).await?;
    let actor = caller.actor(&state);
    let account = caller.member().account_id;
    Ok(player_export::export(&state, account, player, &actor, "dashboard").await?)
}
