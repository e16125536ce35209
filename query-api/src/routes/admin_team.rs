//! `/api/admin/accounts/{id}/members` and `/invites`: an account's dashboard team, for the
//! operator (admin key). The same functions serve the dashboard's `/team` page and the command
//! line (`query-api member ...`), so the rules hold everywhere: the last owner stays; a role
//! change or a removal ends the member's sessions at once.

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;
use crate::team::invites::{self, DEFAULT_EXPIRES_IN_SECONDS, InviteSummary, IssuedInvite};
use crate::team::{Actor, Member, Role, members, parse_role};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, patch};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// Body of `POST /api/admin/accounts/{account_id}/members`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMemberBody {
    /// What they sign in with (3..=254 characters once trimmed, no spaces or control
    /// characters; stored lower-case), e.g. an e-mail address. Unique across the deployment.
    #[schema(example = "owner@example.com", min_length = 3)]
    pub login: String,
    /// The name pages show (1..=100 characters once trimmed, no NUL); the login when omitted.
    #[serde(default)]
    #[schema(min_length = 1)]
    pub display_name: Option<String>,
    /// `owner`, `admin`, `moderator` or `viewer`.
    #[schema(example = "owner", value_type = Role)]
    pub role: String,
    /// 12..=256 characters. Stored only as an Argon2id hash.
    #[schema(min_length = 12, max_length = 256)]
    pub password: String,
}

/// Body of `POST /api/admin/accounts/{account_id}/invites`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewInviteBody {
    /// The login the new member will sign in with (the rules of a member's `login`).
    #[schema(example = "mod@example.com", min_length = 3)]
    pub login: String,
    /// `owner`, `admin`, `moderator` or `viewer`.
    #[schema(example = "moderator", value_type = Role)]
    pub role: String,
    /// How long the link works: 60..=2592000 seconds (default 604800, 7 days).
    #[serde(default, deserialize_with = "shared::whole_number::deserialize")]
    #[schema(minimum = 60, maximum = 2592000)]
    pub expires_in_seconds: Option<i64>,
}

/// Body of `PATCH /api/admin/accounts/{account_id}/members/{member_id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberUpdate {
    /// The new role: `owner`, `admin`, `moderator` or `viewer`.
    #[schema(example = "admin", value_type = Role)]
    pub role: String,
}

/// An account's members.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberList {
    /// Oldest first.
    pub items: Vec<Member>,
}

/// An account's open invites.
#[derive(Debug, Serialize, ToSchema)]
pub struct InviteList {
    /// Newest first; tokens are never listed.
    pub items: Vec<InviteSummary>,
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new()
        .route(
            "/api/admin/accounts/{account_id}/members",
            get(list_members).post(create_member),
        )
        .route(
            "/api/admin/accounts/{account_id}/members/{member_id}",
            patch(update_member).delete(remove_member),
        )
        .route(
            "/api/admin/accounts/{account_id}/invites",
            get(list_invites).post(create_invite),
        )
}

fn role(text: &str) -> Result<Role, ApiError> {
    parse_role("role", text).map_err(|error| ApiError::invalid(vec![error]))
}

/// Create a member directly, with a password: how an account gets its first owner.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/members", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = NewMemberBody,
    responses(
        (status = 201, description = "Created", body = Member),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 409, description = "The login is taken (`login_taken`)", body = Problem),
        (status = 422, description = "Invalid login, name, role or password", body = Problem),
    ))]
pub async fn create_member(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<NewMemberBody>,
) -> Result<(StatusCode, Json<Member>), ApiError> {
    let role = role(&body.role)?;
    let name = body.display_name.as_deref().unwrap_or(&body.login);
    let member = members::create(
        &state.pool,
        account_id,
        &body.login,
        name,
        role,
        &body.password,
        &Actor::admin_key(),
    )
    .await?;
    tracing::info!(%account_id, member_id = %member.id, role = %role, "team member created");
    Ok((StatusCode::CREATED, Json(member)))
}

/// List an account's members.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/members", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The members", body = MemberList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn list_members(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<MemberList>, ApiError> {
    state.key_store.require_account(account_id).await?;
    let items = members::list(&state.pool, account_id).await?;
    Ok(Json(MemberList { items }))
}

/// Change a member's role. Their sessions end: they sign in again under the new role. Demoting
/// the account's last owner is 409 `last_owner`.
#[utoipa::path(patch, path = "/api/admin/accounts/{account_id}/members/{member_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("member_id" = Uuid, Path, description = "The member"),
    ),
    request_body = MemberUpdate,
    responses(
        (status = 200, description = "The member with the new role", body = Member),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown member", body = Problem),
        (status = 409, description = "The last owner stays (`last_owner`)", body = Problem),
        (status = 422, description = "Invalid role", body = Problem),
    ))]
pub async fn update_member(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, member_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<MemberUpdate>,
) -> Result<Json<Member>, ApiError> {
    let role = role(&body.role)?;
    let member = members::set_role(
        &state.pool,
        account_id,
        member_id,
        role,
        &Actor::admin_key(),
    )
    .await?;
    tracing::info!(%account_id, %member_id, role = %role, "team member's role changed");
    Ok(Json(member))
}

/// Remove a member; their open sessions are refused from the next request on. Removing the
/// account's last owner is 409 `last_owner`.
#[utoipa::path(delete, path = "/api/admin/accounts/{account_id}/members/{member_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("member_id" = Uuid, Path, description = "The member"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown member", body = Problem),
        (status = 409, description = "The last owner stays (`last_owner`)", body = Problem),
    ))]
pub async fn remove_member(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, member_id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, ApiError> {
    members::remove(&state.pool, account_id, member_id, &Actor::admin_key()).await?;
    tracing::info!(%account_id, %member_id, "team member removed");
    Ok(StatusCode::NO_CONTENT)
}

/// Invite a member: a single-use link (`path`, relative to the dashboard's base URL) that
/// makes its holder a member with this login and role once they choose a password. The token
/// is shown only in this response.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/invites", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = NewInviteBody,
    responses(
        (status = 201, description = "The invite; `token` and `path` are shown only now", body = IssuedInvite),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 409, description = "A member already has the login (`login_taken`)", body = Problem),
        (status = 422, description = "Invalid login, role or expiry", body = Problem),
    ))]
pub async fn create_invite(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<NewInviteBody>,
) -> Result<(StatusCode, Json<IssuedInvite>), ApiError> {
    let role = role(&body.role)?;
    let expires = body
        .expires_in_seconds
        .unwrap_or(DEFAULT_EXPIRES_IN_SECONDS);
    let invite = invites::create(
        &state.pool,
        account_id,
        &body.login,
        role,
        expires,
        &Actor::admin_key(),
    )
    .await?;
    tracing::info!(%account_id, invite_id = %invite.id, role = %role, "team invite created");
    Ok((StatusCode::CREATED, Json(invite)))
}

/// List an account's open invites (not used, withdrawn or expired; never their tokens).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/invites", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The open invites", body = InviteList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn list_invites(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<InviteList>, ApiError> {
    state.key_store.require_account(account_id).await?;
    let items = invites::list_open(&state.pool, account_id).await?;
    Ok(Json(InviteList { items }))
}
