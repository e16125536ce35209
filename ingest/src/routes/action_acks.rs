//! `POST /api/plugin/actions/acks`: what a server did with the dashboard's actions, logged as
//! `action_ack` records (one per result) for the projector's `action_deliveries`.

use crate::auth::{PluginCaller, PluginRoutes};
use crate::body::read_json_body;
use crate::error::IngestError;
use crate::state::AppState;
use crate::write::{Prepared, WriteReport, append};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use shared::envelope::Logged;
use shared::problem::RejectedRecord;
use shared::records::{ActionAck, PluginRecord};
use shared::serve::BodyReadTimeout;
use shared::validation::FieldError;
use utoipa::ToSchema;
use uuid::Uuid;

/// The path of the acknowledgements.
pub(super) const PATH: &str = "/api/plugin/actions/acks";
/// The most results in one request.
pub(super) const MAX_RESULTS: usize = 100;

pub(super) fn router() -> PluginRoutes {
    Router::new().route(PATH, post(acknowledge))
}

/// A server's outcomes for actions it read from the feed.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AckRequest {
    /// The server that acted.
    pub(super) server_id: Uuid,
    /// One result per action, 1..=100.
    #[schema(min_items = 1, max_items = 100)]
    pub(super) results: Vec<AckResult>,
}

/// What the server did with one action.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AckResult {
    /// The action's `id` (from the feed).
    pub(super) action_id: Uuid,
    /// `applied`, `not_online`, `skipped` or `failed`.
    #[schema(pattern = "^(applied|not_online|skipped|failed)$")]
    pub(super) outcome: String,
    /// The server's words (at most 512 characters).
    #[serde(default)]
    #[schema(max_length = 512, pattern = "^[^\\x00]*$")]
    pub(super) detail: Option<String>,
    /// When it acted (default: the time of receipt).
    #[serde(default)]
    pub(super) at: Option<DateTime<Utc>>,
}

/// Logs one `action_ack` record per result; 202 like every plugin write.
async fn acknowledge(
    State(state): State<AppState>,
    PluginCaller(caller): PluginCaller,
    BodyReadTimeout(read_timeout): BodyReadTimeout,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<WriteReport>), IngestError> {
    let bytes = read_json_body(&headers, body, read_timeout).await?;
    let request: AckRequest = decode(&bytes)?;
    let received_at = Utc::now();
    if request.results.is_empty() || request.results.len() > MAX_RESULTS {
        return Err(IngestError::Rejected {
            code: "validation_failed".into(),
            detail: format!("results: 1 to {MAX_RESULTS}"),
            rejected: Vec::new(),
        });
    }
    let ip_hasher = state.ip_hasher.for_account(caller.account_id);
    let mut prepared = Prepared {
        records: Vec::new(),
        client_ids: false,
        duplicates: 0,
        rejected: Vec::new(),
        received_at,
        is_batch: true,
    };
    for (index, result) in request.results.into_iter().enumerate() {
        let mut record = ActionAck {
            server_id: request.server_id,
            action_id: result.action_id,
            outcome: result.outcome,
            detail: result.detail,
            at: result.at,
        };
        if let Err(errors) = record.validate(received_at) {
            prepared.rejected.push(RejectedRecord {
                index,
                code: code_of(&errors),
                errors,
            });
            continue;
        }
        record.normalize(received_at, &ip_hasher);
        prepared.records.push(Logged {
            id: Uuid::now_v7(),
            record,
        });
    }
    if prepared.records.is_empty() {
        return Err(IngestError::Rejected {
            code: "validation_failed".into(),
            detail: format!(
                "all {} results were rejected; see `rejected`",
                prepared.rejected.len()
            ),
            rejected: prepared.rejected,
        });
    }
    let (report, _) = append(&state, &caller, prepared).await?;
    Ok((StatusCode::ACCEPTED, Json(report)))
}

/// The body as an [`AckRequest`]; 400 `malformed_json` naming the field when it is not one.
fn decode(bytes: &[u8]) -> Result<AckRequest, IngestError> {
    crate::body::decode_strict(bytes)
}

/// A result's code: its first error's, else `validation_failed`.
fn code_of(errors: &[FieldError]) -> String {
    errors
        .first()
        .map_or_else(|| "validation_failed".into(), |e| e.code.clone())
}
