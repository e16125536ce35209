//! `/api/admin/accounts/{id}/alert-rules[/{rule}]`: what sends a notification, and where. A
//! rule names only its own account's destinations (another account's id is refused like an
//! unknown one), and matches only what happens after it was created.

use super::rule_schema::RuleInput;
use super::{not_found, record};
use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;
use crate::team::Actor;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use shared::problem::Problem;
use shared::validation::FieldError;
use sqlx::{PgConnection, PgPool};
use utoipa::ToSchema;
use uuid::Uuid;

/// A rule.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Rule {
    /// Its id.
    pub id: Uuid,
    /// `punishment_issued`, `anticheat_threshold`, ...
    pub kind: String,
    /// Its label.
    pub name: Option<String>,
    /// Whether it fires.
    pub enabled: bool,
    /// The destinations it notifies.
    pub destinations: Vec<Uuid>,
    /// Its kind and parameters.
    #[schema(value_type = Object)]
    pub spec: Value,
    /// When it was created: it matches only what was received from then on.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// An account's rules.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleList {
    /// Oldest first.
    pub items: Vec<Rule>,
}

/// Placeholder for the request body's schema, written by `rule_schema::refine_document`
/// (one branch per kind).
#[derive(ToSchema)]
#[allow(dead_code)] // Only its name is used: the schema is replaced.
pub struct NewRule {}

const SELECT: &str = "SELECT r.id, r.kind, r.name, r.enabled, r.spec, r.created_at, r.updated_at, \
    ARRAY(SELECT d.destination_id FROM alert_rule_destinations d WHERE d.rule_id = r.id \
          ORDER BY d.destination_id) AS destinations \
    FROM alert_rules r";

/// An account's rules, oldest first.
pub async fn list(pool: &PgPool, account_id: Uuid) -> Result<Vec<Rule>, sqlx::Error> {
    sqlx::query_as::<_, Rule>(&format!(
        "{SELECT} WHERE r.account_id = $1 ORDER BY r.created_at, r.id"
    ))
    .bind(account_id)
    .fetch_all(pool)
    .await
}

/// One of the account's rules (404 for any other id).
pub async fn get_one(pool: &PgPool, account_id: Uuid, id: Uuid) -> Result<Rule, ApiError> {
    sqlx::query_as::<_, Rule>(&format!("{SELECT} WHERE r.account_id = $1 AND r.id = $2"))
        .bind(account_id)
        .bind(id)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| not_found("alert rule", id))
}

/// 422 `unknown_destination` for each named destination that is not the account's.
async fn check_destinations(
    tx: &mut PgConnection,
    account_id: Uuid,
    ids: &[Uuid],
) -> Result<(), ApiError> {
    let own: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM alert_destinations WHERE account_id = $1 AND id = ANY($2) FOR SHARE",
    )
    .bind(account_id)
    .bind(ids)
    .fetch_all(&mut *tx)
    .await?;
    let errors: Vec<FieldError> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !own.contains(id))
        .map(|(i, id)| FieldError {
            field: format!("destinations[{i}]"),
            code: "unknown_destination".into(),
            message: format!("this account has no destination with id {id}"),
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(errors))
    }
}

async fn link(tx: &mut PgConnection, rule_id: Uuid, ids: &[Uuid]) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM alert_rule_destinations WHERE rule_id = $1")
        .bind(rule_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO alert_rule_destinations (rule_id, destination_id) \
         SELECT $1, d FROM UNNEST($2::uuid[]) AS d",
    )
    .bind(rule_id)
    .bind(ids)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

fn audit_detail(input: &RuleInput) -> Value {
    json!({ "kind": input.spec.kind(), "name": input.name, "enabled": input.enabled,
            "destinations": input.destinations })
}

/// Creates a rule (the admin API and the `/alerts` page).
pub async fn create(
    state: &AppState,
    account_id: Uuid,
    body: Value,
    actor: &Actor,
) -> Result<Rule, ApiError> {
    // An unknown account first: whatever the body, it names nothing here.
    state.key_store.require_account(account_id).await?;
    let input = RuleInput::parse(body)?;
    let id = Uuid::now_v7();
    let mut tx = state.pool.begin().await?;
    check_destinations(&mut tx, account_id, &input.destinations).await?;
    sqlx::query(
        "INSERT INTO alert_rules (id, account_id, kind, name, spec, enabled) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(account_id)
    .bind(input.spec.kind())
    .bind(input.name.as_deref())
    .bind(input.spec.to_value())
    .bind(input.enabled)
    .execute(&mut *tx)
    .await?;
    link(&mut tx, id, &input.destinations).await?;
    record(
        &mut tx,
        account_id,
        actor,
        "alert_rule_created",
        id,
        audit_detail(&input),
    )
    .await?;
    tx.commit().await?;
    get_one(&state.pool, account_id, id).await
}

/// Replaces a rule (kind, parameters, destinations, name, state); it keeps its id and
/// `created_at`.
pub async fn replace(
    state: &AppState,
    account_id: Uuid,
    id: Uuid,
    body: Value,
    actor: &Actor,
) -> Result<Rule, ApiError> {
    get_one(&state.pool, account_id, id).await?;
    let input = RuleInput::parse(body)?;
    let mut tx = state.pool.begin().await?;
    let updated = sqlx::query(
        "UPDATE alert_rules SET kind = $3, name = $4, spec = $5, enabled = $6, updated_at = now() \
         WHERE account_id = $1 AND id = $2",
    )
    .bind(account_id)
    .bind(id)
    .bind(input.spec.kind())
    .bind(input.name.as_deref())
    .bind(input.spec.to_value())
    .bind(input.enabled)
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(not_found("alert rule", id));
    }
    check_destinations(&mut tx, account_id, &input.destinations).await?;
    link(&mut tx, id, &input.destinations).await?;
    record(
        &mut tx,
        account_id,
        actor,
        "alert_rule_changed",
        id,
        audit_detail(&input),
    )
    .await?;
    tx.commit().await?;
    get_one(&state.pool, account_id, id).await
}

/// Deletes a rule; its past deliveries stay in the log.
pub async fn delete(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
    actor: &Actor,
) -> Result<(), ApiError> {
    let mut tx = pool.begin().await?;
    let kind: Option<String> = sqlx::query_scalar(
        "DELETE FROM alert_rules WHERE account_id = $1 AND id = $2 RETURNING kind",
    )
    .bind(account_id)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let kind = kind.ok_or_else(|| not_found("alert rule", id))?;
    record(
        &mut tx,
        account_id,
        actor,
        "alert_rule_deleted",
        id,
        json!({ "kind": kind }),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new()
        .route(
            "/api/admin/accounts/{account_id}/alert-rules",
            get(list_rules).post(create_rule),
        )
        .route(
            "/api/admin/accounts/{account_id}/alert-rules/{rule_id}",
            get(get_rule).put(put_rule).delete(delete_rule),
        )
}

/// Create a rule: its `kind`, the kind's parameters, and the destinations it notifies.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/alert-rules", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = NewRule,
    responses(
        (status = 201, description = "Created", body = Rule),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 422, description = "Invalid kind or parameters, or a destination that is not the account's (`unknown_destination`), as field errors", body = Problem),
    ))]
pub async fn create_rule(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<Rule>), ApiError> {
    let rule = create(&state, account_id, body, &Actor::admin_key()).await?;
    tracing::info!(%account_id, rule_id = %rule.id, kind = %rule.kind, "alert rule created");
    Ok((StatusCode::CREATED, Json(rule)))
}

/// List an account's rules.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/alert-rules", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The rules", body = RuleList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn list_rules(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<RuleList>, ApiError> {
    state.key_store.require_account(account_id).await?;
    let items = list(&state.pool, account_id).await?;
    Ok(Json(RuleList { items }))
}

/// Read one rule.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/alert-rules/{rule_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("rule_id" = Uuid, Path, description = "The rule"),
    ),
    responses(
        (status = 200, description = "The rule", body = Rule),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or rule", body = Problem),
    ))]
pub async fn get_rule(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<Json<Rule>, ApiError> {
    Ok(Json(get_one(&state.pool, account_id, id).await?))
}

/// Replace a rule (the body of a new rule).
#[utoipa::path(put, path = "/api/admin/accounts/{account_id}/alert-rules/{rule_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("rule_id" = Uuid, Path, description = "The rule"),
    ),
    request_body = NewRule,
    responses(
        (status = 200, description = "The rule as replaced", body = Rule),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or rule", body = Problem),
        (status = 422, description = "Invalid kind or parameters, or a destination that is not the account's (`unknown_destination`), as field errors", body = Problem),
    ))]
pub async fn put_rule(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Rule>, ApiError> {
    Ok(Json(
        replace(&state, account_id, id, body, &Actor::admin_key()).await?,
    ))
}

/// Delete a rule (its deliveries stay in the log).
#[utoipa::path(delete, path = "/api/admin/accounts/{account_id}/alert-rules/{rule_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("rule_id" = Uuid, Path, description = "The rule"),
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or rule", body = Problem),
    ))]
pub async fn delete_rule(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, ApiError> {
    delete(&state.pool, account_id, id, &Actor::admin_key()).await?;
    Ok(StatusCode::NO_CONTENT)
}
