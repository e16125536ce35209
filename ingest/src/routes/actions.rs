//! `GET /api/plugin/actions`: the dashboard's actions (bans, mutes, kicks, warnings and their
//! revokes) of the caller's account, read from the event log itself (ingest has no database),
//! oldest first, after a cursor. With nothing new it waits (a long-poll) until an action lands
//! in the log or `wait` seconds pass. Each ban carries an appeal link, signed as it is served
//! (`super::appeal_links`).

use crate::auth::{PluginCaller, PluginRoutes};
use crate::error::IngestError;
use crate::state::AppState;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Map, Value};
use shared::envelope::{LogMessage, RecordBatch};
use shared::problem::Problem;
use shared::records::RecordKind;
use shared::validation::{FieldError, FieldErrors};
use std::time::Duration;
use tokio::time::Instant;
use utoipa::ToSchema;
use uuid::Uuid;

/// The path of the feed (a long-lived request: exempt from the request deadline).
pub const PATH: &str = "/api/plugin/actions";
/// The longest `wait`, in seconds.
pub(super) const MAX_WAIT_SECS: u64 = 30;
/// `wait` when the query does not give one.
pub(super) const DEFAULT_WAIT_SECS: u64 = 25;
/// The most actions in one answer.
pub(super) const MAX_PAGE: usize = 100;
/// Once the log says actions are waiting, how long their delivery may take.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) fn router() -> PluginRoutes {
    Router::new().route(PATH, get(feed))
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ActionPage {
    /// The actions after the cursor, oldest first, at most 100; each is the `action` record
    /// (personal fields opened) with its own `cursor`, and a ban's `issue` an `appeal` link.
    #[schema(value_type = Vec<Object>)]
    pub(super) actions: Vec<Value>,
    /// The last action's cursor, or the given one (`"0"` when none was given): pass it as
    /// `after` next time.
    pub(super) cursor: String,
}

/// `after` and `wait`, read from the raw query (unknown parameters are ignored).
fn parse_query(query: Option<&str>) -> Result<(u64, u64), Vec<FieldError>> {
    let mut errors = FieldErrors::new();
    let (mut after, mut wait) = (0, DEFAULT_WAIT_SECS);
    let mut seen = (false, false);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        // A whole number may come spelt `2.0` (JSON Schema's integer admits it).
        let value = match value.split_once('.') {
            Some((whole, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => whole,
            _ => value,
        };
        let number = || -> Option<u64> {
            (!value.is_empty() && value.len() <= 19 && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse().ok())
                .flatten()
        };
        let repeated = match key {
            "after" => std::mem::replace(&mut seen.0, true),
            "wait" => std::mem::replace(&mut seen.1, true),
            _ => false,
        };
        if repeated {
            errors.push(key, "repeated", "give it once");
            continue;
        }
        match key {
            "after" => match number() {
                Some(n) => after = n,
                None => errors.push("after", "invalid_cursor", "must be a cursor from this feed"),
            },
            "wait" => match number() {
                Some(n) if n <= MAX_WAIT_SECS => wait = n,
                _ => errors.push(
                    "wait",
                    "out_of_range",
                    format!("must be a whole number of seconds, 0 to {MAX_WAIT_SECS}"),
                ),
            },
            _ => {}
        }
    }
    errors.into_result().map(|()| (after, wait))
}

/// The actions after `after`, waiting up to `wait` seconds for the first one.
async fn feed(
    State(state): State<AppState>,
    PluginCaller(caller): PluginCaller,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Json<ActionPage>, IngestError> {
    let (after, wait) = parse_query(query.as_deref()).map_err(|errors| {
        let detail = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; ");
        IngestError::Problem(Box::new(Problem::validation(detail, errors)))
    })?;
    let (mut actions, last) = read(&state, caller.account_id, after, Duration::from_secs(wait))
        .await
        .map_err(|error| IngestError::Unavailable(format!("reading the action feed: {error}")))?;
    super::appeal_links::add_to_feed(&state, &headers, caller.account_id, &mut actions).await;
    Ok(Json(ActionPage {
        actions,
        cursor: last.to_string(),
    }))
}

/// Reads `account`'s `action` messages after stream sequence `after` with an ordered consumer
/// (which the broker pushes new messages to, so a waiting request wakes as soon as an action
/// is in the log). Returns the actions and the last sequence read (`after` when none).
async fn read(
    state: &AppState,
    account: Uuid,
    after: u64,
    wait: Duration,
) -> anyhow::Result<(Vec<Value>, u64)> {
    let stream = state.jetstream.get_stream(&state.stream).await?;
    let consumer = stream
        .create_consumer(OrderedConfig {
            filter_subjects: state
                .subjects
                .account_kind_events(account, RecordKind::Action),
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: after.saturating_add(1),
            },
            ..Default::default()
        })
        .await?;
    let waiting = consumer.cached_info().num_pending > 0;
    if !waiting && wait.is_zero() {
        return Ok((Vec::new(), after));
    }
    let mut messages = consumer.messages().await?;
    let mut deadline = Instant::now() + if waiting { DELIVERY_TIMEOUT } else { wait };
    let (mut actions, mut last) = (Vec::new(), after);
    while actions.len() < MAX_PAGE {
        let Ok(next) = tokio::time::timeout_at(deadline, messages.next()).await else {
            break;
        };
        let Some(message) = next else { break };
        let message = message?;
        let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
        let (sequence, pending) = (info.stream_sequence, info.pending);
        // Undecodable messages are the projector's to park; the feed steps over them.
        if let Ok(mut decoded) = LogMessage::decode(&message.payload) {
            state
                .keyring
                .open(std::slice::from_mut(&mut decoded))
                .await?;
            actions.extend(actions_of(sequence, decoded)?);
        }
        last = sequence;
        if pending == 0 {
            break;
        }
        deadline = Instant::now() + DELIVERY_TIMEOUT;
    }
    Ok((actions, last))
}

/// The feed's JSON for each action of a log message: the record, its `id`, and the cursor.
fn actions_of(sequence: u64, message: LogMessage) -> anyhow::Result<Vec<Value>> {
    let RecordBatch::Action(records) = message.batch else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(records.len());
    for logged in records {
        let mut object = match serde_json::to_value(&logged.record)? {
            Value::Object(object) => object,
            _ => Map::new(),
        };
        object
            .entry("id")
            .or_insert_with(|| Value::String(logged.id.to_string()));
        object.insert("cursor".into(), Value::String(sequence.to_string()));
        out.push(Value::Object(object));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, String)> {
        match parse_query(Some(query)) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
        }
    }

    #[test]
    fn cursor_and_wait() {
        assert_eq!(parse_query(None), Ok((0, DEFAULT_WAIT_SECS)));
        assert_eq!(parse_query(Some("after=42&wait=0&x=y")), Ok((42, 0)));
        assert_eq!(parse_query(Some("wait=30")), Ok((0, 30)));
        assert_eq!(parse_query(Some("wait=2.0")), Ok((0, 2)));
        assert_eq!(codes("wait=2.5"), [("wait".into(), "out_of_range".into())]);
        assert_eq!(codes("wait=31"), [("wait".into(), "out_of_range".into())]);
        assert_eq!(codes("wait=-1"), [("wait".into(), "out_of_range".into())]);
        assert_eq!(
            codes("after=abc"),
            [("after".into(), "invalid_cursor".into())]
        );
        assert_eq!(codes("wait=1&wait=2"), [("wait".into(), "repeated".into())]);
        assert_eq!(codes("after="), [("after".into(), "invalid_cursor".into())]);
        assert_eq!(
            codes("after=99999999999999999999999"),
            [("after".into(), "invalid_cursor".into())]
        );
    }
}
