//! `/api/admin/accounts`: create and list customer accounts.

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::key_store::Account;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /api/admin/accounts`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAccount {
    /// Display name, 1..=200 characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
    )]
    pub name: String,
}

/// Every account.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountList {
    /// Oldest first.
    pub items: Vec<Account>,
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new().route(
        "/api/admin/accounts",
        get(list_accounts).post(create_account),
    )
}

/// Create an account (one customer: a game-server network).
#[utoipa::path(post, path = "/api/admin/accounts", tag = "admin",
    security(("admin_key" = [])),
    request_body = NewAccount,
    responses(
        (status = 201, description = "Created", body = Account),
        (status = 401, description = "Missing or invalid key", body = shared::problem::Problem),
        (status = 403, description = "Not the admin key", body = shared::problem::Problem),
        (status = 422, description = "Invalid name", body = shared::problem::Problem),
    ))]
pub async fn create_account(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<NewAccount>,
) -> Result<(StatusCode, Json<Account>), ApiError> {
    let account = state.key_store.create_account(&body.name).await?;
    tracing::info!(account_id = %account.id, "account created");
    Ok((StatusCode::CREATED, Json(account)))
}

/// List every account, oldest first.
#[utoipa::path(get, path = "/api/admin/accounts", tag = "admin",
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Every account", body = AccountList),
        (status = 401, description = "Missing or invalid key", body = shared::problem::Problem),
        (status = 403, description = "Not the admin key", body = shared::problem::Problem),
    ))]
pub async fn list_accounts(
    _admin: AdminCaller,
    State(state): State<AppState>,
) -> Result<Json<AccountList>, ApiError> {
    let items = state.key_store.list_accounts().await?;
    Ok(Json(AccountList { items }))
}
