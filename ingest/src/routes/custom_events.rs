//! `POST /api/v1/plugin/events`: custom events, one or a batch.

use crate::auth::{PluginCaller, PluginRoutes};
use crate::body::read_json_body;
use crate::error::IngestError;
use crate::state::AppState;
use crate::write::{append, prepare};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use shared::records::CustomEvent;
use shared::serve::BodyReadTimeout;
use utoipa::ToSchema;
use uuid::Uuid;

pub(super) fn router() -> PluginRoutes {
    Router::new().route("/api/v1/plugin/events", post(write_events))
}

/// The 202 body for a single custom event.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EventAccepted {
    /// The event's id (the client's, or one assigned on receipt).
    pub(super) id: Uuid,
    /// The event's name.
    pub(super) name: String,
    /// When it happened (the time of receipt when omitted).
    #[schema(value_type = String, format = DateTime)]
    pub(super) occurred_at: String,
    /// When it was received.
    #[schema(value_type = String, format = DateTime)]
    pub(super) received_at: String,
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

async fn write_events(
    State(state): State<AppState>,
    PluginCaller(caller): PluginCaller,
    BodyReadTimeout(read_timeout): BodyReadTimeout,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, IngestError> {
    // The body is dropped once decoded, not held while the write waits for its ack: with
    // MAX_WRITES_IN_FLIGHT writes waiting, that was one body (~25 KiB for 100 chat lines)
    // per slot for nothing.
    let prepared = {
        let bytes = read_json_body(&headers, body, read_timeout).await?;
        prepare::<CustomEvent>(&state, &caller, &bytes)?
    };
    let single = (!prepared.is_batch).then(|| {
        prepared.records.first().map(|logged| EventAccepted {
            id: logged.id,
            name: logged.record.name.clone(),
            occurred_at: timestamp(logged.record.occurred_at.unwrap_or(prepared.received_at)),
            received_at: String::new(),
        })
    });
    let (report, logged_at) = append(&state, &caller, prepared).await?;
    Ok(match single.flatten() {
        Some(mut event) => {
            // As the log holds it (and reads show it): earlier than this request's own time
            // of receipt when its message was merged with an earlier request's.
            event.received_at = timestamp(logged_at);
            tracing::debug!(event_id = %event.id, name = %event.name, "custom event appended");
            (StatusCode::ACCEPTED, Json(event)).into_response()
        }
        // A single event repeating an id within its own request cannot happen, so this is a batch.
        None => (StatusCode::ACCEPTED, Json(report)).into_response(),
    })
}
