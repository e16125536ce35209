//! What every service's OpenAPI document says the same way: the bearer schemes, and the
//! responses the shared machinery gives on every route (the key gate, the JSON body reader, the
//! problem-details content type). Each service documents its own routes; [`document_gates`]
//! completes them, so no route can forget a status its gate answers.

use crate::problem::Problem;
use serde_json::Value;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr};
use utoipa::{Modify, PartialSchema, ToSchema};

/// The media type of every error body (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The security schemes: one bearer scheme per key kind, so each operation names the kind it
/// needs (`security(("plugin_key" = []))`).
pub struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut OpenApi) {
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

/// Key kinds whose callers have a request quota (the admin key has none).
const QUOTA_SCHEMES: [&str; 2] = ["plugin_key", "dashboard_key"];

/// Completes every operation with what the shared machinery answers, and says that every error
/// body is `application/problem+json`:
///
/// - a gated operation (one with `security`): 400 `duplicate_credentials`, 401, 403, 503 (the
///   key directory is not loaded yet), and 429 for the kinds with a quota;
/// - an operation with a JSON body: 400 (not JSON, or not the expected shape), 413, 415.
///
/// A status the route documents itself keeps its own description.
pub struct ProblemResponses;

impl Modify for ProblemResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .schemas
            .entry(Problem::name().into_owned())
            .or_insert_with(Problem::schema);
        for item in openapi.paths.paths.values_mut() {
            for operation in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                complete(operation);
            }
        }
    }
}

fn complete(operation: &mut Operation) {
    let schemes: Vec<String> = operation
        .security
        .iter()
        .flatten()
        .filter_map(|requirement| serde_json::to_value(requirement).ok())
        .filter_map(|value| {
            value
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
        })
        .flatten()
        .collect();
    let mut add: Vec<(&str, &str)> = Vec::new();
    if !schemes.is_empty() {
        add.extend([
            (
                "400",
                "`duplicate_credentials`: more than one Authorization header",
            ),
            ("401", "Missing or invalid key"),
            ("403", "A key of another kind"),
            (
                "503",
                "The service is starting (keys not loaded yet); retry shortly",
            ),
        ]);
        if schemes.iter().any(|s| QUOTA_SCHEMES.contains(&s.as_str())) {
            add.push((
                "429",
                "Over the key's quota; `Retry-After` says when to retry",
            ));
        }
    }
    if operation.request_body.is_some() {
        add.extend([
            ("400", "The body is not JSON, or not the documented shape"),
            ("413", "The body is over 1 MiB"),
            ("415", "The body is not `application/json`"),
        ]);
    }
    let responses = &mut operation.responses.responses;
    for (status, description) in add {
        responses.entry(status.to_owned()).or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(PROBLEM_JSON, problem_content())
                    .build(),
            )
        });
    }
    for (status, response) in responses.iter_mut() {
        let is_error = status.starts_with('4') || status.starts_with('5');
        if let (true, RefOr::T(response)) = (is_error, response)
            && let Some(content) = response.content.shift_remove("application/json")
        {
            response.content.insert(PROBLEM_JSON.to_owned(), content);
        }
    }
}

fn problem_content() -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(Problem::name())))
        .build()
}

/// Merges `patch` into the schema of component `schema` (or of its `property`), for the rules
/// utoipa's attributes cannot spell (`propertyNames`, `prefixItems`, `const`, `if`/`then`).
/// A name that is not in the document is a bug in the caller: it panics in the tests that
/// build every document.
pub fn refine(doc: &mut Value, schema: &str, property: Option<&str>, patch: Value) {
    let mut target = &mut doc["components"]["schemas"][schema];
    if let Some(property) = property {
        target = &mut target["properties"][property];
    }
    debug_assert!(
        target.is_object(),
        "no schema {schema} {property:?} to refine"
    );
    if let (Some(target), Value::Object(patch)) = (target.as_object_mut(), patch) {
        target.extend(patch);
    }
}

/// The finished document as JSON: [`BearerKeys`] and [`ProblemResponses`] applied, then
/// `refinements`.
pub fn finish(mut doc: OpenApi, refinements: impl FnOnce(&mut Value)) -> Value {
    BearerKeys.modify(&mut doc);
    ProblemResponses.modify(&mut doc);
    let mut value = serde_json::to_value(&doc).unwrap_or_default();
    refinements(&mut value);
    value
}

/// The rule of a custom event's name: `^[a-z0-9_]{1,64}$` without a reserved prefix.
pub const CUSTOM_EVENT_NAME: &str = "^(?!session_|punish_|chat_|rank_|block_)[a-z0-9_]{1,64}$";

/// The rule of any event name, custom or internal.
pub const ANY_EVENT_NAME: &str = "^[a-z0-9_]{1,64}$";

/// Adds `other`'s paths, schemas, security schemes and tags to `into` (the first of two
/// services' documents keeps its `info`); for the process that serves both services.
pub fn merge(into: &mut Value, other: Value) {
    for pointer in [
        "/paths",
        "/components/schemas",
        "/components/securitySchemes",
    ] {
        if let (Some(Value::Object(target)), Some(Value::Object(source))) =
            (into.pointer_mut(pointer), other.pointer(pointer))
        {
            for (key, value) in source {
                target.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
    if let (Some(Value::Array(tags)), Some(Value::Array(more))) =
        (into.pointer_mut("/tags"), other.pointer("/tags"))
    {
        for tag in more {
            if !tags.iter().any(|t| t["name"] == tag["name"]) {
                tags.insert(0, tag.clone());
            }
        }
    }
}
