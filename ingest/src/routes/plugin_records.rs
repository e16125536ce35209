//! `POST /api/plugin/*`: heartbeats, chat, punishments, anti-cheat flags, sessions, rank changes
//! and account links. One generic handler serves them all.

use crate::auth::{PluginCaller, PluginRoutes};
use crate::body::read_json_body;
use crate::error::IngestError;
use crate::state::AppState;
use crate::write::{WriteReport, append, prepare};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, Heartbeat, PluginRecord, Punishment, RankChange, Session,
};
use shared::serve::BodyReadTimeout;

pub(super) fn router() -> PluginRoutes {
    Router::new()
        .route("/api/plugin/heartbeat", post(write::<Heartbeat>))
        .route("/api/plugin/chat", post(write::<ChatEntry>))
        .route("/api/plugin/punishments", post(write::<Punishment>))
        .route("/api/plugin/anticheat-flags", post(write::<AnticheatFlag>))
        .route("/api/plugin/sessions", post(write::<Session>))
        .route("/api/plugin/rank-changes", post(write::<RankChange>))
        .route("/api/plugin/account-links", post(write::<AccountLink>))
}

/// Accepts one record or a batch of `T`; 202 once every accepted record is in the log.
async fn write<T: PluginRecord>(
    State(state): State<AppState>,
    PluginCaller(caller): PluginCaller,
    BodyReadTimeout(read_timeout): BodyReadTimeout,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<WriteReport>), IngestError> {
    // The body is dropped once decoded, not held while the write waits for its ack: with
    // MAX_WRITES_IN_FLIGHT writes waiting, that was one body (~25 KiB for 100 chat lines)
    // per slot for nothing.
    let prepared = {
        let bytes = read_json_body(&headers, body, read_timeout).await?;
        prepare::<T>(&state, &caller, &bytes)?
    };
    let (report, _) = append(&state, &caller, prepared).await?;
    Ok((StatusCode::ACCEPTED, Json(report)))
}
