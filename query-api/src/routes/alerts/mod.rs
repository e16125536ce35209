//! `/api/admin/accounts/{id}/destinations` and `/alert-rules`: where an account's notifications
//! go (signed webhooks, Discord), what sends them, and what was sent (the delivery log, "send
//! again", "send a test event"). The notifier (`projector notify`) evaluates the rules and
//! delivers; this API only writes its tables, and wakes its workers (`NOTIFY
//! alert_deliveries`) when it queues a delivery itself. The `/alerts` pages call the same
//! functions, so a rule (an account's own destinations only, the URL policy) holds on both.

pub mod deliveries;
pub mod destination_actions;
pub mod destination_store;
pub mod destination_urls;
pub mod destinations;
pub mod rule_schema;
pub mod rules;

use crate::auth::AdminRoutes;
use crate::error::ApiError;
use crate::team::Actor;
use crate::team::audit::{self, AuditEntry};
use axum::Router;
use axum::http::StatusCode;
use serde_json::Value;
use shared::problem::Problem;
use sqlx::PgConnection;
use uuid::Uuid;

/// Every route of the alerts API.
pub fn router() -> AdminRoutes {
    Router::new()
        .merge(destinations::router())
        .merge(destination_actions::router())
        .merge(deliveries::router())
        .merge(rules::router())
}

/// The schemas utoipa's attributes cannot spell (the rule kinds).
pub fn refine_document(doc: &mut Value) {
    rule_schema::refine_document(doc);
    destination_urls::refine_document(doc);
}

/// A JSON body read as `T`, which must be an object: serde would also read a struct from an
/// array of its fields (`["webhook", "https://..."]`), which the API reference does not allow.
pub(crate) fn from_object<T: serde::de::DeserializeOwned>(body: Value) -> Result<T, ApiError> {
    if !body.is_object() {
        return Err(ApiError::unreadable(Problem::malformed_json(
            "the body must be a JSON object",
        )));
    }
    serde_json::from_value(body).map_err(|e| {
        ApiError::unreadable(Problem::malformed_json(format!(
            "the body is JSON but not the expected shape: {e}"
        )))
    })
}

/// 404 for an id that is not one of the account's (another account's ids look the same as
/// ids that do not exist).
pub(crate) fn not_found(what: &str, id: Uuid) -> ApiError {
    ApiError::NotFound(format!("this account has no {what} with id {id}"))
}

/// 503 `alerts_not_configured`: webhook secrets need `WEBHOOK_SECRETS_KEY`.
pub(crate) fn not_configured() -> ApiError {
    ApiError::Refused(Box::new(Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "alerts_not_configured",
        "Webhook secrets are not configured",
        "this deployment has no WEBHOOK_SECRETS_KEY, so it cannot keep webhook signing \
         secrets; Discord destinations work without it. Ask the operator to set it.",
    )))
}

/// Writes one audit row in the transaction of the change it describes.
pub(crate) async fn record(
    tx: &mut PgConnection,
    account_id: Uuid,
    actor: &Actor,
    action: &'static str,
    target: Uuid,
    detail: Value,
) -> Result<(), sqlx::Error> {
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor,
        action,
        target: Some(target.to_string()),
        detail,
    };
    audit::record(tx, entry).await
}

/// Wakes the notifier's delivery workers (they also poll every second).
pub(crate) async fn wake_workers(tx: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify('alert_deliveries', '')")
        .execute(tx)
        .await?;
    Ok(())
}
