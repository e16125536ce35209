//! `POST /api/v1/trends`: counts of an event (or an internal kind) per UTC hour, day or week,
//! optionally per property value or server, with the previous period to compare.
//!
//! This file checks the request and shapes the response; [`crate::queries::trends`] computes
//! it (and documents which table each question reads and what it costs).

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::queries::trends::{self, Breakdown, Subject, Trend, TrendSpec};
use crate::state::AppState;
use crate::team::Visibility;
use crate::team::visibility::FLAG;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use shared::openapi::ANY_EVENT_NAME;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;
use validate::validate;

mod validate;

/// Most hour buckets in one request: 31 days.
pub const MAX_HOURS: usize = 31 * 24;
/// Most day buckets: 366 days.
pub const MAX_DAYS: usize = 366;
/// Most week buckets: 106 (two years, whichever weekday they start on).
pub const MAX_WEEKS: usize = 106;
/// Longest property name a breakdown takes.
pub const MAX_PROPERTY_CHARS: usize = 64;

/// What to count: `{"event": "quest_completed"}` or `{"kind": "joins"}`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrendWhat {
    /// A timeline event by name: custom, or internal (`session_join`, `punish_ban`, ...).
    Event(String),
    /// An internal kind.
    Kind(TrendKind),
}

/// The internal kinds: joins (`session_join`), quits (`session_quit`), chat lines
/// (`chat_message`), commands (`chat_command`), punishments issued (`punish_ban`,
/// `punish_mute`, `punish_kick`, `punish_warning`) and anti-cheat flags.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrendKind {
    /// `session_join`.
    Joins,
    /// `session_quit`.
    Quits,
    /// `chat_message`.
    ChatMessages,
    /// `chat_command`.
    Commands,
    /// `punish_ban`, `punish_mute`, `punish_kick` and `punish_warning` together.
    Punishments,
    /// Anti-cheat flags (no timeline event of their own).
    Flags,
}

/// A bucket's width (UTC; weeks start on Monday 00:00Z).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrendBucket {
    /// One UTC hour.
    Hour,
    /// One UTC day.
    #[default]
    Day,
    /// One ISO week, from Monday 00:00Z.
    Week,
}

/// Count every event (`total`) or distinct players (`unique`).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrendMeasure {
    /// Every event.
    #[default]
    Total,
    /// Distinct players per bucket.
    Unique,
}

/// `"server"`, or `{"property": "map"}`: one series per server or per value of the property
/// (the 10 largest over the range, then `other`).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrendBreakdown {
    /// One series per server.
    Server,
    /// A property of the event (1 to 64 characters, no NUL); for anti-cheat flags
    /// `check_name`, `check_type` or `source_plugin` (any other name: every flag is `other`).
    Property(String),
}

/// A trend to compute.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendRequest {
    /// What to count.
    pub what: TrendWhat,
    /// Bucket width (default `day`). A range holds at most 744 hours (31 days), 366 days or
    /// 106 weeks.
    #[serde(default)]
    pub bucket: TrendBucket,
    /// Start of the range, widened down to its bucket's start (default: 24 hours, 30 days or
    /// 12 weeks before `to`, by bucket).
    #[serde(default, deserialize_with = "shared::date_time::deserialize")]
    pub from: Option<DateTime<Utc>>,
    /// End of the range (exclusive), widened up to a bucket's end (default: now).
    #[serde(default, deserialize_with = "shared::date_time::deserialize")]
    pub to: Option<DateTime<Utc>>,
    /// One series per server or property value (default: one series).
    #[serde(default)]
    pub breakdown: Option<TrendBreakdown>,
    /// Events or distinct players (default `total`).
    #[serde(default)]
    pub measure: TrendMeasure,
    /// Also answer the previous period of equal length, bucket by bucket (default false).
    #[serde(default)]
    pub compare: bool,
}

/// One series.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TrendSeries {
    /// What it shows: the event or kind, a property value, a server's name, `no server` or
    /// `other`.
    pub label: String,
    /// The property value or server id; null for the single series and for `other`.
    pub key: Option<String>,
    /// The series of every value outside the top 10.
    pub other: bool,
    /// One value per bucket.
    pub values: Vec<i64>,
    /// The sum of `values`; null when unique (distinct players over the range are not the
    /// sum of the buckets, and are not worked out).
    pub total: Option<i64>,
    /// The previous period, bucket by bucket (with `compare`).
    pub previous_values: Option<Vec<i64>>,
    /// The previous period's total (with `compare`; null when unique).
    pub previous_total: Option<i64>,
}

/// The computed trend.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TrendResult {
    /// The range used: the request's, widened to whole buckets.
    pub from: DateTime<Utc>,
    /// Its end (exclusive).
    pub to: DateTime<Utc>,
    /// The previous period's start (with `compare`; it ends at `from`).
    pub previous_from: Option<DateTime<Utc>>,
    /// The start of each bucket.
    pub buckets: Vec<DateTime<Utc>>,
    /// The single series, or the top values largest first and then `other`.
    pub series: Vec<TrendSeries>,
}

/// The rules utoipa's attributes cannot spell, for `openapi::refinements`: each `what` and
/// `breakdown` object holds its one field only, an event name's pattern, and a property
/// name's length and characters.
pub fn refine_document(doc: &mut Value) {
    let schemas = &mut doc["components"]["schemas"];
    for (schema, field, rules) in [
        ("TrendWhat", "event", json!({"pattern": ANY_EVENT_NAME})),
        (
            "TrendBreakdown",
            "property",
            json!({
                "minLength": 1, "maxLength": MAX_PROPERTY_CHARS, "pattern": "^[^\\x00]*$",
            }),
        ),
    ] {
        for branch in schemas[schema]["oneOf"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if branch["type"] != "object" {
                continue;
            }
            branch["additionalProperties"] = json!(false);
            // `get_mut`, not indexing: indexing would add the field to the other branch.
            let target = branch
                .get_mut("properties")
                .and_then(|properties| properties.get_mut(field))
                .and_then(Value::as_object_mut);
            if let (Some(target), Value::Object(rules)) = (target, rules.clone()) {
                target.extend(rules);
            }
        }
    }
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/v1/trends", post(compute_trend))
}

/// Count an event per hour, day or week.
#[utoipa::path(post, path = "/api/v1/trends", tag = "events",
    security(("dashboard_key" = [])),
    request_body = TrendRequest,
    responses(
        (status = 200, description = "One series per breakdown value, bucket by bucket", body = TrendResult),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "Invalid event, property or range", body = Problem),
    ))]
pub async fn compute_trend(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiJson(request): ApiJson<TrendRequest>,
) -> Result<Json<TrendResult>, ApiError> {
    let reader = (caller.account_id, Visibility::KEY);
    Ok(Json(run(&state, reader, request).await?))
}

/// Checks `request` (422 with every field error) and computes it over `account_id`'s rows:
/// what the API answers and the Trends page (`crate::pages::analytics::trends`) draws. A
/// breakdown by a property of records whose values `visibility` may not see is refused (403
/// `withheld_for_role`): its series labels would be those values.
pub async fn run(
    state: &AppState,
    (account_id, visibility): (Uuid, Visibility),
    request: TrendRequest,
) -> Result<TrendResult, ApiError> {
    let label = match &request.what {
        TrendWhat::Event(name) => name.clone(),
        TrendWhat::Kind(kind) => kind_label(*kind).to_owned(),
    };
    let spec = validate(request, Utc::now())?;
    if let Breakdown::Property(_) = &spec.breakdown {
        let names: Vec<&str> = match &spec.subject {
            Subject::Events(names) => names.iter().map(String::as_str).collect(),
            Subject::Flags => vec![FLAG],
        };
        visibility.breakdown(names).map_err(withheld)?;
    }
    let trend = trends::trend(&state.reads, account_id, &spec).await?;
    let servers = if spec.breakdown == Breakdown::Server {
        trends::server_names(&state.reads, account_id, &trend).await?
    } else {
        Default::default()
    };
    Ok(shape(&spec, trend, |series| {
        match (&series.key, &spec.breakdown) {
            _ if series.other => "other".to_owned(),
            (None, _) => label.clone(),
            (Some(key), Breakdown::Server) if key.is_empty() => "no server".to_owned(),
            (Some(key), Breakdown::Server) => {
                servers.get(key).cloned().unwrap_or_else(|| key.clone())
            }
            (Some(key), _) => key.clone(),
        }
    }))
}

/// The refusal of a breakdown whose labels the reader may not see.
pub fn withheld(refusal: crate::team::visibility::Withheld) -> ApiError {
    ApiError::Refused(Box::new(Problem::new(
        axum::http::StatusCode::FORBIDDEN,
        "withheld_for_role",
        "Not available for your role",
        refusal.message(),
    )))
}

/// A kind as the page and the single series' label name it.
pub fn kind_label(kind: TrendKind) -> &'static str {
    match kind {
        TrendKind::Joins => "joins",
        TrendKind::Quits => "quits",
        TrendKind::ChatMessages => "chat messages",
        TrendKind::Commands => "commands",
        TrendKind::Punishments => "punishments",
        TrendKind::Flags => "anti-cheat flags",
    }
}

fn shape(spec: &TrendSpec, trend: Trend, label: impl Fn(&trends::Series) -> String) -> TrendResult {
    TrendResult {
        from: spec.from,
        to: spec.to,
        previous_from: spec.compare.then(|| spec.previous_from()),
        buckets: trend.buckets,
        series: trend
            .series
            .into_iter()
            .map(|series| TrendSeries {
                label: label(&series),
                key: series.key,
                other: series.other,
                values: series.values,
                total: series.total,
                previous_values: series.previous,
                previous_total: series.previous_total,
            })
            .collect(),
    }
}
