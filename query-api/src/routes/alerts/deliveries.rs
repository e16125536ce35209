//! `.../destinations/{dest}/deliveries`: a destination's delivery log, newest first, with each
//! delivery's attempts, and "send again".

use super::destination_actions::QueuedDelivery;
use super::destinations::get_one;
use super::{not_found, record, wake_workers};
use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::routes::paging::{KeysetCursor, PageRequest, query_pairs};
use crate::state::AppState;
use crate::team::Actor;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use shared::alerts::signing::message_id;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not yet accepted: tried again after `next_attempt_at` (or waiting for a disabled
    /// destination to be enabled).
    Pending,
    /// Accepted (a 2xx answer).
    Delivered,
    /// Not accepted within 26 hours of retries; "send again" tries once more.
    Failed,
}

impl DeliveryStatus {
    /// Every status, as the filter offers them.
    pub const ALL: [DeliveryStatus; 3] = [
        DeliveryStatus::Pending,
        DeliveryStatus::Delivered,
        DeliveryStatus::Failed,
    ];

    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    /// Reads the stored form.
    pub fn parse(text: &str) -> Option<DeliveryStatus> {
        DeliveryStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// One delivery of the log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliverySummary {
    /// The delivery's id.
    pub id: Uuid,
    /// The `webhook-id` header of every attempt (`msg_` + the id without dashes).
    pub webhook_id: String,
    /// `punishment.issued`, `server.offline`, ..., `test`.
    pub event_type: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// The rule that sent it (null for a test event, or a deleted rule).
    pub rule_id: Option<Uuid>,
    /// Attempts so far.
    pub attempts: i32,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it was last tried.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// The last answer's HTTP status (null: no answer).
    pub last_status_code: Option<i32>,
    /// How long the last attempt took.
    pub last_duration_ms: Option<i32>,
    /// Why the last attempt failed (a timeout, a refused address, ...).
    pub last_error: Option<String>,
    /// When it is tried next (while pending).
    pub next_attempt_at: DateTime<Utc>,
    /// When it was accepted.
    pub delivered_at: Option<DateTime<Utc>>,
}

/// One attempt.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct DeliveryAttempt {
    /// 1, 2, ...
    pub attempt: i32,
    /// When.
    pub attempted_at: DateTime<Utc>,
    /// The answer's HTTP status (null: no answer).
    pub status_code: Option<i32>,
    /// How long it took.
    pub duration_ms: i32,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// One delivery with what was sent and every attempt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryDetail {
    /// The delivery.
    #[serde(flatten)]
    pub delivery: DeliverySummary,
    /// The message's `data`, as sent.
    pub payload: Value,
    /// Every attempt, oldest first.
    pub attempt_log: Vec<DeliveryAttempt>,
}

/// A page of the log.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryPage {
    /// Newest first.
    pub deliveries: Vec<DeliverySummary>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    event_type: String,
    status: String,
    rule_id: Option<Uuid>,
    attempts: i32,
    created_at: DateTime<Utc>,
    last_attempt_at: Option<DateTime<Utc>>,
    last_status_code: Option<i32>,
    last_duration_ms: Option<i32>,
    last_error: Option<String>,
    next_attempt_at: DateTime<Utc>,
    delivered_at: Option<DateTime<Utc>>,
    payload: Value,
}

const COLUMNS: &str = "id, event_type, status, rule_id, attempts, created_at, last_attempt_at, \
    last_status_code, last_duration_ms, last_error, next_attempt_at, delivered_at, payload";

impl Row {
    fn summary(self) -> Result<(DeliverySummary, Value), ApiError> {
        let status = DeliveryStatus::parse(&self.status).ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("stored delivery status {:?}", self.status))
        })?;
        let summary = DeliverySummary {
            webhook_id: message_id(self.id),
            id: self.id,
            event_type: self.event_type,
            status,
            rule_id: self.rule_id,
            attempts: self.attempts,
            created_at: self.created_at,
            last_attempt_at: self.last_attempt_at,
            last_status_code: self.last_status_code,
            last_duration_ms: self.last_duration_ms,
            last_error: self.last_error,
            next_attempt_at: self.next_attempt_at,
            delivered_at: self.delivered_at,
        };
        Ok((summary, self.payload))
    }
}

/// The log's filter and page.
#[derive(Debug, Clone, Default)]
pub struct LogQuery {
    /// Only deliveries in this state.
    pub status: Option<DeliveryStatus>,
    /// Page size and position.
    pub page: PageRequest<Uuid>,
}

impl LogQuery {
    /// Reads `?status=&limit=&cursor=`.
    pub fn parse(query: &str) -> Result<LogQuery, ApiError> {
        let mut parsed = LogQuery::default();
        let mut errors = FieldErrors::new();
        for (key, value) in query_pairs(query)? {
            if key == "status" {
                parsed.status = DeliveryStatus::parse(&value);
                if parsed.status.is_none() {
                    errors.push(
                        "status",
                        "invalid_status",
                        "must be pending, delivered or failed",
                    );
                }
            } else {
                parsed.page.take(&key, &value, &mut errors);
            }
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(parsed)
    }
}

/// A page of a destination's log (the destination must be the account's).
pub async fn page(
    pool: &PgPool,
    account_id: Uuid,
    destination_id: Uuid,
    query: &LogQuery,
) -> Result<DeliveryPage, ApiError> {
    get_one(pool, account_id, destination_id).await?;
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT {COLUMNS} FROM alert_deliveries WHERE destination_id = "
    ));
    sql.push_bind(destination_id);
    if let Some(status) = query.status {
        sql.push(" AND status = ").push_bind(status.as_str());
    }
    query.page.push_keyset(&mut sql, "created_at", "id");
    let rows = sql.build_query_as::<Row>().fetch_all(pool).await?;
    let summaries = rows
        .into_iter()
        .map(|row| row.summary().map(|(summary, _)| summary))
        .collect::<Result<Vec<_>, _>>()?;
    let (deliveries, next_cursor) = query.page.finish(summaries, |d| KeysetCursor {
        at: d.created_at,
        key: d.id,
    });
    Ok(DeliveryPage {
        deliveries,
        next_cursor,
    })
}

/// One delivery of the account's destination, with its attempts.
pub async fn detail(
    pool: &PgPool,
    account_id: Uuid,
    destination_id: Uuid,
    id: Uuid,
) -> Result<DeliveryDetail, ApiError> {
    let row = sqlx::query_as::<_, Row>(&format!(
        "SELECT {COLUMNS} FROM alert_deliveries \
         WHERE account_id = $1 AND destination_id = $2 AND id = $3"
    ))
    .bind(account_id)
    .bind(destination_id)
    .bind(id)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| not_found("delivery", id))?;
    let attempt_log = sqlx::query_as::<_, DeliveryAttempt>(
        "SELECT attempt, attempted_at, status_code, duration_ms, error \
         FROM alert_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let (delivery, payload) = row.summary()?;
    Ok(DeliveryDetail {
        delivery,
        payload,
        attempt_log,
    })
}

/// "Send again": the same delivery (same `webhook-id`) is pending now, with 26 more hours of
/// retries, and the workers are woken.
pub async fn resend(
    pool: &PgPool,
    account_id: Uuid,
    destination_id: Uuid,
    id: Uuid,
    actor: &Actor,
) -> Result<QueuedDelivery, ApiError> {
    let mut tx = pool.begin().await?;
    let updated = sqlx::query(
        "UPDATE alert_deliveries SET status = 'pending', next_attempt_at = now(), \
           give_up_at = now() + interval '26 hours', delivered_at = NULL \
         WHERE account_id = $1 AND destination_id = $2 AND id = $3",
    )
    .bind(account_id)
    .bind(destination_id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(not_found("delivery", id));
    }
    let detail = json!({ "delivery_id": id });
    record(
        &mut tx,
        account_id,
        actor,
        "alert_delivery_resent",
        destination_id,
        detail,
    )
    .await?;
    wake_workers(&mut tx).await?;
    tx.commit().await?;
    Ok(QueuedDelivery { delivery_id: id })
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    let base = "/api/admin/accounts/{account_id}/destinations/{destination_id}/deliveries";
    Router::new()
        .route(base, get(list_deliveries))
        .route(&format!("{base}/{{delivery_id}}"), get(get_delivery))
        .route(
            &format!("{base}/{{delivery_id}}/resend"),
            post(resend_delivery),
        )
}

/// A destination's delivery log, newest first.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}/deliveries", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
        ("status" = Option<DeliveryStatus>, Query, description = "Only deliveries in this state"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of the log", body = DeliveryPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_deliveries(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, destination_id)): ApiPath<(Uuid, Uuid)>,
    RawQuery(query): RawQuery,
) -> Result<Json<DeliveryPage>, ApiError> {
    let query = LogQuery::parse(query.as_deref().unwrap_or(""))?;
    Ok(Json(
        page(&state.pool, account_id, destination_id, &query).await?,
    ))
}

/// One delivery: what was sent and every attempt.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}/deliveries/{delivery_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
        ("delivery_id" = Uuid, Path, description = "The delivery"),
    ),
    responses(
        (status = 200, description = "The delivery", body = DeliveryDetail),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account, destination or delivery", body = Problem),
    ))]
pub async fn get_delivery(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, destination_id, id)): ApiPath<(Uuid, Uuid, Uuid)>,
) -> Result<Json<DeliveryDetail>, ApiError> {
    Ok(Json(
        detail(&state.pool, account_id, destination_id, id).await?,
    ))
}

/// Send a delivery again (same `webhook-id`, so a receiver that already has it can drop it).
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}/deliveries/{delivery_id}/resend", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
        ("delivery_id" = Uuid, Path, description = "The delivery"),
    ),
    responses(
        (status = 202, description = "Queued again", body = QueuedDelivery),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account, destination or delivery", body = Problem),
    ))]
pub async fn resend_delivery(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, destination_id, id)): ApiPath<(Uuid, Uuid, Uuid)>,
) -> Result<(StatusCode, Json<QueuedDelivery>), ApiError> {
    let queued = resend(
        &state.pool,
        account_id,
        destination_id,
        id,
        &Actor::admin_key(),
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}
