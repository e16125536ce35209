//! `/analytics/trends`: how often an event (or joins, chat lines, punishments, flags) happened
//! per UTC hour, day or week, optionally per property value or server, unique players or
//! every event, with the previous period dashed. A GET form; the result is computed by the
//! same function as `POST /api/v1/trends` ([`crate::routes::trends::run`]) and drawn as a
//! chart (`assets/charts.js`) over a table with the same numbers. A computation counts
//! against the member's quota, as the Funnels page's does.

use crate::error::ApiError;
use crate::pages::error::PageError;
use crate::pages::gate::{PageRoutes, SignedIn};
use crate::pages::{Shell, display, quota, render};
use crate::routes::trends::{
    TrendBreakdown, TrendBucket, TrendKind, TrendMeasure, TrendRequest, TrendResult, TrendWhat, run,
};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

const PATH: &str = "/analytics/trends";

/// The form as filled in (every field as text, so it shows again as typed).
#[derive(Debug, Clone, Default)]
struct TrendForm {
    /// `event` (the name below) or a kind (`joins`, `flags`, ...).
    kind: String,
    event: String,
    bucket: String,
    from: String,
    to: String,
    /// `server`, `property` or empty.
    breakdown: String,
    property: String,
    /// `total` or `unique`.
    measure: String,
    compare: bool,
}

impl TrendForm {
    fn read(query: Option<&str>) -> TrendForm {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(query.unwrap_or("")).unwrap_or_default();
        let mut form = TrendForm::default();
        for (key, value) in pairs {
            let value = value.trim().to_owned();
            match key.as_str() {
                "kind" => form.kind = value,
                "event" => form.event = value,
                "bucket" => form.bucket = value,
                "from" => form.from = value,
                "to" => form.to = value,
                "breakdown" => form.breakdown = value,
                "property" => form.property = value,
                "measure" => form.measure = value,
                "compare" => form.compare = !value.is_empty(),
                _ => {}
            }
        }
        form
    }

    /// Whether there is anything to compute (an event name, or a kind chosen).
    fn asks(&self) -> bool {
        !self.event.is_empty() || (!self.kind.is_empty() && self.kind != "event")
    }

    /// What the page answers before anyone asks: joins per UTC day over the last 30 days
    /// (every account with players has joins; the count reads the hourly rollup).
    fn default_answer() -> TrendForm {
        TrendForm {
            kind: "joins".into(),
            bucket: "day".into(),
            measure: "total".into(),
            ..TrendForm::default()
        }
    }

    /// The API's request, or what is wrong with the fields the API cannot see.
    fn request(&self) -> Result<TrendRequest, Vec<String>> {
        let mut errors = Vec::new();
        let what = match self.kind.as_str() {
            "joins" => TrendWhat::Kind(TrendKind::Joins),
            "quits" => TrendWhat::Kind(TrendKind::Quits),
            "chat_messages" => TrendWhat::Kind(TrendKind::ChatMessages),
            "commands" => TrendWhat::Kind(TrendKind::Commands),
            "punishments" => TrendWhat::Kind(TrendKind::Punishments),
            "flags" => TrendWhat::Kind(TrendKind::Flags),
            _ => TrendWhat::Event(self.event.clone()),
        };
        let mut time = |label: &str, text: &str| {
            if text.is_empty() {
                return None;
            }
            let parsed = parse_time(text);
            if parsed.is_none() {
                errors.push(format!("{label}: not a date and time"));
            }
            parsed
        };
        let from = time("From", &self.from);
        let to = time("To", &self.to);
        let breakdown = match self.breakdown.as_str() {
            "server" => Some(TrendBreakdown::Server),
            "property" => Some(TrendBreakdown::Property(self.property.clone())),
            _ => None,
        };
        let request = TrendRequest {
            what,
            bucket: match self.bucket.as_str() {
                "hour" => TrendBucket::Hour,
                "week" => TrendBucket::Week,
                _ => TrendBucket::Day,
            },
            from,
            to,
            breakdown,
            measure: if self.measure == "unique" {
                TrendMeasure::Unique
            } else {
                TrendMeasure::Total
            },
            compare: self.compare,
        };
        if errors.is_empty() {
            Ok(request)
        } else {
            Err(errors)
        }
    }
}

/// A `datetime-local` value (read as UTC) or RFC 3339.
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"]
                .iter()
                .find_map(|format| {
                    NaiveDateTime::parse_from_str(text, format)
                        .ok()
                        .or_else(|| {
                            chrono::NaiveDate::parse_from_str(text, format)
                                .ok()
                                .and_then(|d| d.and_hms_opt(0, 0, 0))
                        })
                })
                .map(|local| local.and_utc())
        })
}

/// One line of the chart (the shape `charts.js` reads; labels are the data's own).
#[derive(Debug, Serialize)]
struct Line {
    label: String,
    values: Vec<Option<f64>>,
    color: usize,
    dash: bool,
}

/// The chart's data: `charts.js`'s shape (no band, no marks).
#[derive(Debug, Serialize)]
struct Chart {
    unit: &'static str,
    x: Vec<i64>,
    series: Vec<Line>,
    band: Option<[usize; 2]>,
    marks: Vec<()>,
}

/// One row of the table: a bucket, and each column's value in it.
struct Row {
    bucket: String,
    values: Vec<i64>,
}

/// The computed trend as the page shows it.
struct View {
    chart_json: String,
    /// Column headings after the bucket's.
    columns: Vec<String>,
    rows: Vec<Row>,
    /// Each column's total over its period (none when unique: distinct players over a
    /// period are not the sum of its buckets).
    totals: Option<Vec<i64>>,
    /// "events" or "players".
    unit: &'static str,
    range: String,
}

impl View {
    fn of(result: &TrendResult, unique: bool) -> View {
        let unit = if unique { "players" } else { "events" };
        let mut columns = Vec::new();
        let mut lines = Vec::new();
        let mut cells: Vec<&Vec<i64>> = Vec::new();
        let mut totals = Vec::new();
        let as_line = |values: &[i64]| values.iter().map(|v| Some(*v as f64)).collect();
        for (color, series) in result.series.iter().enumerate() {
            columns.push(series.label.clone());
            cells.push(&series.values);
            totals.push(series.total);
            lines.push(Line {
                label: series.label.clone(),
                values: as_line(&series.values),
                color,
                dash: false,
            });
            if let Some(previous) = &series.previous_values {
                let label = format!("{} (previous period)", series.label);
                columns.push(label.clone());
                cells.push(previous);
                totals.push(series.previous_total);
                lines.push(Line {
                    label,
                    values: as_line(previous),
                    color,
                    dash: true,
                });
            }
        }
        let format = "%Y-%m-%d %H:%M";
        let rows = result
            .buckets
            .iter()
            .enumerate()
            .map(|(i, bucket)| Row {
                bucket: bucket.format(format).to_string(),
                values: cells
                    .iter()
                    .map(|c| c.get(i).copied().unwrap_or(0))
                    .collect(),
            })
            .collect();
        View {
            chart_json: display::json(&Chart {
                unit,
                x: result.buckets.iter().map(DateTime::timestamp).collect(),
                series: lines,
                band: None,
                marks: Vec::new(),
            }),
            columns,
            rows,
            totals: totals.into_iter().collect(),
            unit,
            range: format!(
                "{} to {} (UTC)",
                result.from.format(format),
                result.to.format(format)
            ),
        }
    }
}

/// The Trends page.
#[derive(Template)]
#[template(path = "trends.html")]
struct TrendsPage {
    shell: Shell,
    form: TrendForm,
    errors: Vec<String>,
    view: Option<View>,
    /// True when the page shows its default answer (no query was given).
    default_answer: bool,
}

/// The page's routes.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(show))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let asked = TrendForm::read(query.as_deref());
    let default_answer = !asked.asks();
    // The default answer is not the member's question: it costs no quota.
    let form = if default_answer {
        TrendForm::default_answer()
    } else {
        asked
    };
    let (status, errors, view) = compute(&state, &caller, &form, !default_answer).await?;
    let page = TrendsPage {
        shell,
        form,
        errors,
        view,
        default_answer,
    };
    Ok((status, render(&page)?).into_response())
}

/// Computes the trend (counting against the quota when `spend`); a request the API would refuse is the page's errors (422).
async fn compute(
    state: &AppState,
    caller: &SignedIn,
    form: &TrendForm,
    spend: bool,
) -> Result<(StatusCode, Vec<String>, Option<View>), PageError> {
    let request = match form.request() {
        Ok(request) => request,
        Err(errors) => return Ok((StatusCode::UNPROCESSABLE_ENTITY, errors, None)),
    };
    let unique = request.measure == TrendMeasure::Unique;
    if spend {
        quota::spend(state, caller).await?;
    }
    let reader = (caller.member().account_id, caller.visibility());
    match run(state, reader, request).await {
        Ok(result) => Ok((StatusCode::OK, Vec::new(), Some(View::of(&result, unique)))),
        // A breakdown whose labels the member's role may not see: said on the form.
        Err(ApiError::Refused(problem)) if problem.status == StatusCode::FORBIDDEN.as_u16() => {
            Ok((StatusCode::FORBIDDEN, vec![problem.detail], None))
        }
        Err(ApiError::Validation { errors, .. }) => {
            let errors = errors
                .iter()
                .map(|e| format!("{}: {}", field_label(&e.field), e.message))
                .collect();
            Ok((StatusCode::UNPROCESSABLE_ENTITY, errors, None))
        }
        Err(other) => Err(other.into()),
    }
}

/// What the page calls an API field.
fn field_label(field: &str) -> &str {
    match field {
        "what.event" => "Event",
        "breakdown.property" => "Property",
        "from" => "From",
        "to" => "To",
        other => other,
    }
}
