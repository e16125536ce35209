//! Query-api's OpenAPI document (reads, the admin API, public data), served at
//! `/api/openapi.json` and browsable at `/api/docs`.
//!
//! The plugin write endpoints are ingest's and documented there (`ingest::routes::openapi`,
//! served at `/api/plugin/openapi.json`); the all-in-one stack serves the merge of both at
//! `/api/openapi.json`.

use crate::queries::player_search::{MAX_SEARCH, MIN_SEARCH};
use crate::routes::alerts::{deliveries, destination_actions, destinations, rules};
use crate::routes::{
    account_reads, admin_accounts, admin_keys, admin_settings, admin_team, alerts, chatlog,
    erasure, events, events_stream, exchange_rates, flags, funnels, overview, player_export,
    players, privacy, punishments, retention, reviews, server_history, servers, staff,
    staff_leaderboard, trends,
};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::{Router, middleware};
use serde_json::{Value, json};
use shared::openapi::{ANY_EVENT_NAME, CUSTOM_EVENT_NAME, finish, refine};
use shared::problem::{Problem, RejectedRecord};
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(title = "Warden API",
        description = "Moderation and analytics for game-server networks. Every error is RFC 9457 \
            problem details (application/problem+json) with a stable `code`."),
    paths(
        events::list_events,
        events_stream::stream_events,
        funnels::compute_funnel,
        trends::compute_trend,
        retention::compute_retention,
        players::get_player, punishments::list_punishments, flags::list_flags, chatlog::chatlog,
        account_reads::search::search_players, account_reads::alts::list_alts,
        account_reads::notes::list_notes,
        account_reads::punishments::list_punishments, account_reads::flags::list_flags,
        account_reads::chat::list_chat,
        servers::list_servers, staff::list_staff,
        overview::get_overview, server_history::server_history, staff_leaderboard::leaderboard,
        reviews::public_reviews, exchange_rates::public_rates,
        admin_accounts::create_account, admin_accounts::list_accounts,
        admin_keys::create_key, admin_keys::list_keys, admin_keys::rotate_key, admin_keys::revoke_key,
        admin_settings::get_settings, admin_settings::put_settings,
        privacy::get_privacy, privacy::put_privacy,
        admin_team::create_member, admin_team::list_members, admin_team::update_member,
        admin_team::remove_member, admin_team::create_invite, admin_team::list_invites,
        reviews::create_review, reviews::update_review, reviews::delete_review,
        exchange_rates::put_rates,
        destinations::create_destination, destinations::list_destinations,
        destinations::get_destination, destinations::update_destination,
        destinations::delete_destination, destination_actions::rotate_secret,
        destination_actions::test_event, deliveries::list_deliveries, deliveries::get_delivery,
        deliveries::resend_delivery, rules::create_rule, rules::list_rules, rules::get_rule,
        rules::put_rule, rules::delete_rule,
        player_export::export_player,
        erasure::erase_player,
    ),
    components(schemas(Problem, RejectedRecord)),
    tags(
        (name = "events", description = "The event timeline (dashboard key)"),
        (name = "players", description = "Players, their moderation history, servers and staff (dashboard key)"),
        (name = "public", description = "Public data, no key"),
        (name = "admin", description = "Accounts, keys and public data (admin key)"),
    )
)]
pub struct ApiDoc;

/// Query-api's document, finished (gate responses, problem+json) and refined.
pub fn document() -> Value {
    finish(ApiDoc::openapi(), refinements)
}

/// The rules utoipa's attributes cannot spell.
fn refinements(doc: &mut Value) {
    // The first step is a custom event; later ones may be internal (`session_start`...).
    refine(
        doc,
        "FunnelRequest",
        Some("steps"),
        json!({
            "prefixItems": [{"type": "string", "pattern": CUSTOM_EVENT_NAME}],
            "items": {"type": "string", "pattern": ANY_EVENT_NAME},
        }),
    );
    // Retention's day numbers N: 0 to 365 each.
    refine(
        doc,
        "RetentionRequest",
        Some("days"),
        json!({"items": {"type": "integer", "minimum": 0, "maximum": 365}}),
    );
    // ISO 4217 codes, finite positive rates, and the base's own rate is 1.
    refine(
        doc,
        "RatesUpdate",
        Some("rates"),
        json!({
            "maxProperties": 500,
            "propertyNames": {"pattern": "^[A-Z]{3}$"},
            "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
            "properties": {"GBP": {"const": 1}},
        }),
    );
    // No body at all means `grace_seconds` 0; a body is a `Rotation` (not `null`).
    let rotate = &mut doc["paths"]["/api/admin/keys/{key_id}/rotate"]["post"]["requestBody"];
    rotate["required"] = json!(false);
    rotate["content"]["application/json"]["schema"] =
        json!({"$ref": "#/components/schemas/Rotation"});
    // `?name=` filters: each one an event name.
    for path in ["/api/v1/events", "/api/v1/events/stream"] {
        for parameter in doc["paths"][path]["get"]["parameters"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if parameter["name"] == "name" {
                parameter["schema"]["items"]["pattern"] = json!(ANY_EVENT_NAME);
            }
        }
    }
    refine(
        doc,
        "SettingsUpdate",
        Some("staff_groups"),
        json!({
            "items": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[^\\x00]*$"},
        }),
    );
    // A note's evidence: each an http(s) link of at most 500 characters.
    refine(
        doc,
        "NoteItem",
        Some("evidence"),
        json!({"items": {"type": "string", "minLength": 1, "maxLength": 500}}),
    );
    team_rules(doc);
    query_rules(doc);
    trends::refine_document(doc);
    alerts::refine_document(doc);
    privacy::refine_document(doc);
}

/// The characters Rust's `str::trim` removes (Unicode White_Space), for a character class.
/// Spelled out: `\s` means other sets in ECMA-262 and in the fuzzer's Python.
const WHITE_SPACE: &str = r"\t\n\x0B\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// `min..=max` characters (`min` 1 or 2) once trimmed, no NUL (`normalize_display_name`: 1,
/// the player search: 2).
fn trimmed_text(min: usize, max: usize) -> String {
    let edge = format!("[^{WHITE_SPACE}\\x00]");
    let inner = format!("[^\\x00]{{0,{}}}{edge}", max - 2);
    let rest = if min >= 2 {
        inner
    } else {
        format!("(?:{inner})?")
    };
    format!("^[{WHITE_SPACE}]*{edge}{rest}[{WHITE_SPACE}]*$")
}

/// A character of a team login: neither white space nor a control character (`\x85` is both).
const LOGIN_CHAR: &str = r"[^\x00-\x20\x7F-\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";

/// A team login (`team::normalize_login`): 3..=254 characters once trimmed, none of them white
/// space or a control character.
fn login() -> String {
    format!("^[{WHITE_SPACE}]*{LOGIN_CHAR}{{3,254}}[{WHITE_SPACE}]*$")
}

/// The team bodies: logins and display names are trimmed before their bounds are checked.
fn team_rules(doc: &mut Value) {
    for schema in ["NewMemberBody", "NewInviteBody"] {
        refine(doc, schema, Some("login"), json!({"pattern": login()}));
    }
    refine(
        doc,
        "NewMemberBody",
        Some("display_name"),
        json!({"pattern": trimmed_text(1, 100)}),
    );
}

/// Merges `patch` into the schema of query parameter `name` of `GET path`.
fn refine_query(doc: &mut Value, path: &str, name: &str, patch: Value) {
    let parameter = doc["paths"][path]["get"]["parameters"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .find(|parameter| parameter["name"] == name);
    debug_assert!(parameter.is_some(), "no parameter {name} of GET {path}");
    if let (Some(schema), Value::Object(patch)) =
        (parameter.and_then(|p| p["schema"].as_object_mut()), patch)
    {
        schema.extend(patch);
    }
}

/// The query parameters' closed sets and the trimmed player search.
fn query_rules(doc: &mut Value) {
    refine_query(
        doc,
        "/api/chat",
        "entry_type",
        json!({"enum": ["chat", "command"]}),
    );
    refine_query(
        doc,
        "/api/punishments",
        "type",
        json!({"enum": ["ban", "mute", "kick", "warning"]}),
    );
    refine_query(
        doc,
        "/api/servers/{id}/history",
        "range",
        json!({"enum": ["1h", "24h", "7d", "30d"]}),
    );
    refine_query(
        doc,
        "/api/staff/leaderboard",
        "days",
        json!({"enum": [7, 30]}),
    );
    refine_query(
        doc,
        "/api/players",
        "search",
        json!({"pattern": trimmed_text(MIN_SEARCH, MAX_SEARCH)}),
    );
}

/// `GET /api/openapi.json` (query-api's document) and the Swagger UI at `/api/docs`.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    docs_router(document())
}

/// `GET /api/openapi.json` serving `doc`, and the Swagger UI at `/api/docs` showing it.
pub fn docs_router<S: Clone + Send + Sync + 'static>(doc: Value) -> Router<S> {
    Router::from(SwaggerUi::new("/api/docs").external_url_unchecked("/api/openapi.json", doc))
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
    fn reads_name_the_dashboard_key() {
        let doc = document();
        assert!(
            doc["paths"].get("/api/plugin/heartbeat").is_none(),
            "ingest documents its own routes"
        );
        assert_eq!(
            doc["paths"]["/api/v1/events"]["get"]["security"][0]["dashboard_key"],
            serde_json::json!([])
        );
    }

    /// The patterns and the validation they mirror agree, edge cases included (white space
    /// at the ends and inside, control characters, the length bounds once trimmed).
    #[test]
    fn trimmed_patterns_agree_with_validation() -> Result<(), regex::Error> {
        use crate::queries::player_search::PlayerSearch;
        use crate::team::{normalize_display_name, normalize_login};
        let doc = document();
        let schemas = &doc["components"]["schemas"];
        let pattern = |value: &Value| regex::Regex::new(value.as_str().unwrap_or("^$"));
        let login = pattern(&schemas["NewMemberBody"]["properties"]["login"]["pattern"])?;
        let name = pattern(&schemas["NewMemberBody"]["properties"]["display_name"]["pattern"])?;
        let search = doc["paths"]["/api/players"]["get"]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "search")
            .map(|p| pattern(&p["schema"]["pattern"]))
            .unwrap_or_else(|| pattern(&Value::Null))?;
        let long = |n: usize| "x".repeat(n);
        let samples = [
            String::new(),
            "a".into(),
            " a ".into(),
            "ab".into(),
            "abc".into(),
            " Owner@Demo.Local ".into(),
            "a b@c".into(),
            "\t\u{3000}abc\u{85}\n".into(),
            "ab\u{1}c".into(),
            "ab\u{a0}c".into(),
            "ab\0c".into(),
            "  ".into(),
            "\u{1f600}".into(),
            " a b ".into(),
            long(100),
            format!(" {} ", long(100)),
            long(101),
            long(254),
            format!("\u{2028}{}\u{2029}", long(254)),
            long(255),
        ];
        for sample in &samples {
            let text = sample.as_str();
            assert_eq!(
                login.is_match(text),
                normalize_login("login", text).is_ok(),
                "login {text:?}"
            );
            assert_eq!(
                name.is_match(text),
                normalize_display_name("display_name", text).is_ok(),
                "display_name {text:?}"
            );
            let searchable = PlayerSearch::parse(text).is_ok();
            assert_eq!(search.is_match(text), searchable, "search {text:?}");
        }
        Ok(())
    }
}
