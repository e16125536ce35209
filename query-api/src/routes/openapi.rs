//! The OpenAPI document of the whole base URL, served at `/api/openapi.json` and browsable at
//! `/api/docs`.
//!
//! The plugin write endpoints are served by ingest (another crate, which this one must not
//! depend on); they are documented here by stubs over the `shared::records` types, so one
//! document covers every path a client can call.

use crate::routes::{
    admin_accounts, admin_keys, admin_settings, chatlog, events, events_stream, exchange_rates,
    flags, funnels, players, punishments, reviews, servers, staff,
};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::{Router, middleware};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::{Problem, RejectedRecord};
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session,
};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};
use utoipa_swagger_ui::SwaggerUi;
use uuid::Uuid;

/// Response of a plugin write (202).
#[derive(Debug, Serialize, ToSchema)]
pub struct WriteAccepted {
    /// Records durably in the event log.
    pub accepted: usize,
    /// Records recognised as already received (stored once).
    pub duplicates: usize,
    /// Records refused, by index in the request.
    pub rejected: Vec<RejectedRecord>,
}

/// Response of a single custom event (202).
#[derive(Debug, Serialize, ToSchema)]
pub struct EventAccepted {
    /// The event's id.
    pub id: Uuid,
    /// Its name.
    pub name: String,
    /// When it happened (the time of receipt when omitted).
    pub occurred_at: DateTime<Utc>,
    /// When the service received it.
    pub received_at: DateTime<Utc>,
}

/// Declares, for each plugin record, the "one record or a batch of 1..=1000" body schema.
macro_rules! one_or_batch {
    ($($name:ident => $record:ty),* $(,)?) => {$(
        #[doc = concat!("One `", stringify!($record), "` or a batch of 1..=1000.")]
        #[derive(Debug, Serialize, ToSchema)]
        #[serde(untagged)]
        #[allow(dead_code)] // Only its schema is used.
        pub enum $name {
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

/// Declares a documentation stub for a plugin write endpoint served by ingest.
macro_rules! plugin_write {
    ($fn_name:ident, $path:literal, $body:ty, $what:literal) => {
        #[doc = $what]
        #[utoipa::path(post, path = $path, tag = "plugin",
            security(("plugin_key" = [])),
            request_body(content = $body, content_type = "application/json",
                description = "One record or a JSON array of 1..=1000; `Content-Encoding: gzip` accepted"),
            responses(
                (status = 202, description = "Durably in the event log", body = WriteAccepted),
                (status = 400, description = "Not JSON", body = Problem),
                (status = 401, description = "Missing or invalid key", body = Problem),
                (status = 403, description = "Not a plugin key", body = Problem),
                (status = 413, description = "Over 1 MiB or 1000 records", body = Problem),
                (status = 415, description = "Not application/json", body = Problem),
                (status = 422, description = "Every record refused", body = Problem),
                (status = 429, description = "Rate limited", body = Problem),
                (status = 503, description = "The event log cannot take writes; retry", body = Problem),
            ))]
        #[allow(dead_code)] // Served by ingest; only the documentation lives here.
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

/// Submit custom events. A single event is answered with `EventAccepted`, a batch with
/// `WriteAccepted`. Names with a reserved prefix (session_, punish_, chat_, rank_, block_) are 422.
#[utoipa::path(post, path = "/api/v1/plugin/events", tag = "plugin",
    security(("plugin_key" = [])),
    request_body(content = CustomEventWrite, content_type = "application/json"),
    responses(
        (status = 202, description = "Accepted (single event: EventAccepted; batch: WriteAccepted)", body = EventAccepted),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a plugin key", body = Problem),
        (status = 413, description = "Over 1 MiB or 1000 records", body = Problem),
        (status = 415, description = "Not application/json", body = Problem),
        (status = 422, description = "Invalid or reserved name, properties too big or deep", body = Problem),
        (status = 429, description = "Rate limited", body = Problem),
        (status = 503, description = "The event log cannot take writes; retry", body = Problem),
    ))]
#[allow(dead_code)] // Served by ingest; only the documentation lives here.
fn custom_events() {}

/// Adds the bearer schemes: one per key kind, so each operation names the kind it needs.
struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, description) in [
            (
                "admin_key",
                "The operator's ADMIN_KEY (wdn_admin_...): the admin API only.",
            ),
            (
                "plugin_key",
                "A plugin key (wdn_plugin_...): the plugin write endpoints only.",
            ),
            (
                "dashboard_key",
                "A dashboard key (wdn_dash_...): the read endpoints only.",
            ),
        ] {
            let scheme = HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(description))
                .build();
            components.add_security_scheme(name, SecurityScheme::Http(scheme));
        }
    }
}

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(title = "Warden API",
        description = "Moderation and analytics for game-server networks. Every error is RFC 9457 \
            problem details (application/problem+json) with a stable `code`."),
    modifiers(&BearerKeys),
    paths(
        heartbeat, chat, punishments, anticheat_flags, sessions, rank_changes, account_links,
        custom_events,
        events::list_events,
        events_stream::stream_events,
        funnels::compute_funnel,
        players::get_player, punishments::list_punishments, flags::list_flags, chatlog::chatlog,
        servers::list_servers, staff::list_staff,
        reviews::public_reviews, exchange_rates::public_rates,
        admin_accounts::create_account, admin_accounts::list_accounts,
        admin_keys::create_key, admin_keys::list_keys, admin_keys::rotate_key, admin_keys::revoke_key,
        admin_settings::get_settings, admin_settings::put_settings,
        reviews::create_review, reviews::update_review, reviews::delete_review,
        exchange_rates::put_rates,
    ),
    components(schemas(Problem, RejectedRecord, WriteAccepted, EventAccepted)),
    tags(
        (name = "plugin", description = "Writes from the game-server plugin (plugin key)"),
        (name = "events", description = "The event timeline (dashboard key)"),
        (name = "players", description = "Players, their moderation history, servers and staff (dashboard key)"),
        (name = "public", description = "Public data, no key"),
        (name = "admin", description = "Accounts, keys and public data (admin key)"),
    )
)]
pub struct ApiDoc;

/// `GET /api/openapi.json` and the Swagger UI at `/api/docs`.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::from(SwaggerUi::new("/api/docs").url("/api/openapi.json", ApiDoc::openapi()))
        .layer(middleware::map_response(docs_security_headers))
}

/// What the vendored Swagger UI needs, from this origin only: its scripts, its stylesheets and
/// the inline styles React sets, `data:` images from its CSS, and `fetch` of the document (and
/// of "Try it out"). No inline script, no eval, no framing, no plugins.
const DOCS_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The docs are a page with a form that sends keys: never framed (clickjacking), never named
/// in a `Referer`, and run under [`DOCS_CSP`].
async fn docs_security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(DOCS_CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_writes_take_one_record_or_a_batch() -> Result<(), serde_json::Error> {
        let doc = serde_json::to_value(ApiDoc::openapi())?;
        let body = &doc["paths"]["/api/plugin/heartbeat"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(body["$ref"], "#/components/schemas/HeartbeatWrite");
        let one_of = &doc["components"]["schemas"]["HeartbeatWrite"]["oneOf"];
        assert_eq!(one_of.as_array().map(Vec::len), Some(2), "{one_of}");
        assert_eq!(
            doc["paths"]["/api/v1/events"]["get"]["security"][0]["dashboard_key"],
            serde_json::json!([])
        );
        Ok(())
    }
}
