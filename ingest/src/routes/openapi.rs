//! Ingest's OpenAPI document: the plugin write endpoints, from the types they decode and
//! answer. Served alone at `/api/plugin/openapi.json` (a path the edge routes to ingest); the
//! all-in-one stack merges it with query-api's at `/api/openapi.json`.

use super::action_acks::{AckRequest, AckResult};
use super::actions::ActionPage;
use super::appeal_links::{AppealLinks, AppealLinksRequest, PunishmentLink};
use super::custom_events::EventAccepted;
use crate::write::WriteReport;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};
use shared::openapi::{finish, refine};
use shared::problem::{Problem, RejectedRecord};
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session,
};
use utoipa::{OpenApi, ToSchema};

/// Where ingest serves its document.
pub const PATH: &str = "/api/plugin/openapi.json";

/// The largest batch (contract §1).
const MAX_BATCH: usize = crate::decode::MAX_BATCH_RECORDS;

/// Declares, for each plugin record, the "one record or a batch of 1..=1000" body schema.
macro_rules! one_or_batch {
    ($($name:ident => $record:ty),* $(,)?) => {$(
        #[doc = concat!("One `", stringify!($record), "` or a batch of 1..=1000.")]
        #[derive(Serialize, ToSchema)]
        #[serde(untagged)]
        #[allow(dead_code)] // Only its schema is used: the handler decodes the body itself.
        enum $name {
            /// A single record.
            One(Box<$record>),
            /// A batch.
            Batch(Vec<$record>),
        }
    )*};
}

one_or_batch! {
    HeartbeatWrite => Heartbeat,
    ChatWrite => ChatEntry,
    PunishmentWrite => Punishment,
    AnticheatFlagWrite => AnticheatFlag,
    SessionWrite => Session,
    RankChangeWrite => RankChange,
    AccountLinkWrite => AccountLink,
    CustomEventWrite => CustomEvent,
}

/// Documents one of the generic record endpoints (`plugin_records::write::<T>`).
macro_rules! plugin_write {
    ($fn_name:ident, $path:literal, $body:ty, $what:literal) => {
        #[doc = $what]
        #[utoipa::path(post, path = $path, tag = "plugin",
            security(("plugin_key" = [])),
            request_body(content = $body, content_type = "application/json",
                description = "One record or a JSON array of 1..=1000; `Content-Encoding: gzip` accepted"),
            responses(
                (status = 202, description = "Durably in the event log; refused records are listed", body = WriteReport),
                (status = 413, description = "Over 1 MiB (after gunzip) or over 1000 records", body = Problem),
                (status = 422, description = "Every record refused, or an empty batch", body = Problem),
                (status = 503, description = "The event log cannot take writes; retry", body = Problem),
            ))]
        #[allow(dead_code)] // The route is `plugin_records::write::<T>`; this is its documentation.
        fn $fn_name() {}
    };
}

plugin_write!(
    heartbeat,
    "/api/plugin/heartbeat",
    HeartbeatWrite,
    "Report server status."
);
plugin_write!(
    chat,
    "/api/plugin/chat",
    ChatWrite,
    "Submit chat messages and commands."
);
plugin_write!(
    punishments,
    "/api/plugin/punishments",
    PunishmentWrite,
    "Report punishments issued or revoked."
);
plugin_write!(
    anticheat_flags,
    "/api/plugin/anticheat-flags",
    AnticheatFlagWrite,
    "Submit anti-cheat flags."
);
plugin_write!(
    sessions,
    "/api/plugin/sessions",
    SessionWrite,
    "Report joins and quits."
);
plugin_write!(
    rank_changes,
    "/api/plugin/rank-changes",
    RankChangeWrite,
    "Report permission-group changes."
);
plugin_write!(
    account_links,
    "/api/plugin/account-links",
    AccountLinkWrite,
    "Link or unlink chat-platform accounts."
);

/// Submit custom events. A single event (an object) is answered with `EventAccepted`, a batch
/// (an array) with `WriteAccepted`.
#[utoipa::path(post, path = "/api/v1/plugin/events", tag = "plugin",
    security(("plugin_key" = [])),
    request_body(content = CustomEventWrite, content_type = "application/json",
        description = "One event or a JSON array of 1..=1000; `Content-Encoding: gzip` accepted"),
    responses(
        (status = 202, description = "Durably in the event log: `EventAccepted` for one event, `WriteAccepted` for a batch", body = EventAccepted),
        (status = 413, description = "Over 1 MiB (after gunzip) or over 1000 records", body = Problem),
        (status = 422, description = "Invalid or reserved name, properties too big or deep (for a batch: every event refused)", body = Problem),
        (status = 503, description = "The event log cannot take writes; retry", body = Problem),
    ))]
#[allow(dead_code)] // The route is `custom_events::write_events`; this is its documentation.
fn custom_events() {}

/// Read the dashboard's actions (bans, mutes, kicks, warnings, revokes) for this key's account,
/// oldest first, after a cursor; with none waiting, wait up to `wait` seconds for one
/// (a long-poll).
#[utoipa::path(get, path = "/api/plugin/actions", tag = "plugin",
    security(("plugin_key" = [])),
    params(
        ("after" = Option<String>, Query, pattern = "^[0-9]{1,19}$",
            description = "The `cursor` of the last page (opaque); absent: from the account's first action"),
        ("wait" = Option<u32>, Query, minimum = 0, maximum = 30,
            description = "Seconds to wait for an action when none is waiting (default 25)"),
    ),
    responses(
        (status = 200, description = "At most 100 actions after the cursor (none after the wait), and the cursor to pass next", body = ActionPage),
        (status = 422, description = "`after` is not a cursor, or `wait` is not 0 to 30", body = Problem),
        (status = 503, description = "The event log cannot be read; retry", body = Problem),
    ))]
#[allow(dead_code)] // The route is `actions::feed`; this is its documentation.
fn actions() {}

/// Acknowledge what this server did with actions from the feed (one `action_ack` record per
/// result).
#[utoipa::path(post, path = "/api/plugin/actions/acks", tag = "plugin",
    security(("plugin_key" = [])),
    request_body(content = AckRequest, content_type = "application/json",
        description = "The server and 1..=100 results; `Content-Encoding: gzip` accepted"),
    responses(
        (status = 202, description = "Durably in the event log; refused results are listed", body = WriteReport),
        (status = 413, description = "Over 1 MiB (after gunzip)", body = Problem),
        (status = 422, description = "Every result refused, or none or over 100", body = Problem),
        (status = 503, description = "The event log cannot take writes; retry", body = Problem),
    ))]
#[allow(dead_code)] // The route is `action_acks::acknowledge`; this is its documentation.
fn action_acks() {}

/// Sign fresh appeal links for bans whose links near expiry (the feed gives each ban one, valid
/// 30 days).
#[utoipa::path(post, path = "/api/plugin/appeal-links", tag = "plugin",
    security(("plugin_key" = [])),
    request_body(content = AppealLinksRequest, content_type = "application/json",
        description = "1..=100 punishment ids; `Content-Encoding: gzip` accepted"),
    responses(
        (status = 200, description = "A link for each punishment, valid 30 days", body = AppealLinks),
        (status = 413, description = "Over 1 MiB (after gunzip)", body = Problem),
        (status = 422, description = "No punishment ids, or over 100", body = Problem),
        (status = 503, description = "Links cannot be signed right now; retry", body = Problem),
    ))]
#[allow(dead_code)] // The route is `appeal_links::refresh`; this is its documentation.
fn appeal_links() {}

#[derive(OpenApi)]
#[openapi(
    info(title = "Warden ingest API",
        description = "The plugin write endpoints. Every error is RFC 9457 problem details \
            (application/problem+json) with a stable `code`."),
    paths(heartbeat, chat, punishments, anticheat_flags, sessions, rank_changes, account_links,
        custom_events, actions, action_acks, appeal_links),
    components(schemas(Problem, RejectedRecord, WriteReport, EventAccepted, ActionPage, AckRequest,
        AckResult, AppealLinksRequest, AppealLinks, PunishmentLink)),
    tags((name = "plugin", description = "Writes from the game-server plugin (plugin key)")),
)]
struct IngestDoc;

/// Ingest's document, finished (gate responses, problem+json) and refined.
pub fn document() -> Value {
    finish(IngestDoc::openapi(), refinements)
}

/// The rules utoipa's attributes cannot spell.
fn refinements(doc: &mut Value) {
    for name in [
        "HeartbeatWrite",
        "ChatWrite",
        "PunishmentWrite",
        "AnticheatFlagWrite",
        "SessionWrite",
        "RankChangeWrite",
        "AccountLinkWrite",
        "CustomEventWrite",
    ] {
        if let Some(batch) = doc["components"]["schemas"][name]["oneOf"].get_mut(1) {
            batch["minItems"] = json!(1);
            batch["maxItems"] = json!(MAX_BATCH);
        }
    }
    // The answer's shape follows the request's: an object gets one, an array the other.
    doc["paths"]["/api/v1/plugin/events"]["post"]["responses"]["202"]["content"]["application/json"]
        ["schema"] = json!({"oneOf": [
        {"$ref": "#/components/schemas/EventAccepted"},
        {"$ref": "#/components/schemas/WriteAccepted"},
    ]});
    // Write-only (never serialized back, so utoipa leaves it out): the IP is hashed on
    // receipt, and anything that is not an address is refused.
    doc["components"]["schemas"]["Session"]["properties"]["ip"] = json!({});
    refine(
        doc,
        "Session",
        Some("ip"),
        json!({
            "description": "The player's IP as sent; replaced by `ip_hash` on receipt, never stored.",
            "writeOnly": true,
            "anyOf": [
            {"type": "string", "format": "ipv4"},
            {"type": "string", "format": "ipv6"},
            {"type": "null"},
        ]
        }),
    );
    // What cannot be stored is refused (422): spelt out for the fuzzer and clients.
    refine(
        doc,
        "CustomEvent",
        Some("properties"),
        storable_object(STORABLE_LEVELS),
    );
    // A revoke names the punishment it ends.
    refine(
        doc,
        "Punishment",
        None,
        json!({
            "if": {"properties": {"action": {"const": "revoke"}}, "required": ["action"]},
            "then": {"anyOf": [
                {"properties": {"external_id": {"type": "string"}}, "required": ["external_id"]},
                {"properties": {"punishment_id": {"type": "string"}}, "required": ["punishment_id"]},
            ]},
        }),
    );
}

/// A string PostgreSQL can store: no `\u0000` and no unpaired surrogate.
const STORABLE_STRING: &str = "^[^\\u0000\\ud800-\\udfff]*$";
/// How many levels of a custom event's `properties` the document spells the rule out for
/// (a schema that refers to itself is more than the fuzzer can generate from); deeper values
/// are checked all the same.
const STORABLE_LEVELS: u32 = 3;

/// The keys and values of a JSON object `levels` deep without `\u0000` or an unpaired
/// surrogate in any string or key (its `type` stays the caller's).
fn storable_object(levels: u32) -> Value {
    json!({
        "propertyNames": {"pattern": STORABLE_STRING},
        "additionalProperties": storable_value(levels),
    })
}

/// Any JSON value whose strings and keys (to `levels` deep) can be stored.
fn storable_value(levels: u32) -> Value {
    if levels == 0 {
        return json!({});
    }
    let mut object = storable_object(levels - 1);
    object["type"] = json!("object");
    json!({"anyOf": [
        {"type": ["number", "boolean", "null"]},
        {"type": "string", "pattern": STORABLE_STRING},
        {"type": "array", "items": storable_value(levels - 1)},
        object,
    ]})
}

/// `GET /api/plugin/openapi.json`: ingest's document (no key: it is public, like query-api's).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let doc = document();
    Router::new().route(PATH, get(move || std::future::ready(Json(doc.clone()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_exact_about_batches_answers_and_errors() {
        let doc = document();
        let batch = &doc["components"]["schemas"]["HeartbeatWrite"]["oneOf"][1];
        assert_eq!(
            (batch["minItems"].as_u64(), batch["maxItems"].as_u64()),
            (Some(1), Some(1000))
        );
        let events = &doc["paths"]["/api/v1/plugin/events"]["post"]["responses"];
        assert_eq!(
            events["202"]["content"]["application/json"]["schema"]["oneOf"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            let (responses, statuses) = match item.get("post") {
                Some(post) => (
                    &post["responses"],
                    &["400", "401", "403", "413", "415", "422", "429", "503"][..],
                ),
                None => (
                    &item["get"]["responses"],
                    &["400", "401", "403", "422", "429", "503"][..],
                ),
            };
            for status in statuses {
                let content = &responses[status]["content"];
                assert!(
                    content.get("application/problem+json").is_some(),
                    "{path} {status}: {content}"
                );
                assert!(content.get("application/json").is_none(), "{path} {status}");
            }
        }
    }
}
