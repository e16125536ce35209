//! `/analytics/retention`: the cohorts table with a heat scale, the retention
//! curves, and a cohort's players. A plain GET form (period, range, days N, mode, and an
//! optional start/return event pair); the numbers come from the same function as
//! `POST /api/v1/retention` ([`crate::routes::retention::run`]). `?cohort=<first day>` adds
//! that cohort's players under the table. A view counts against the member's quota.

use super::super::error::PageError;
use super::super::gate::{PageRoutes, SignedIn};
use super::super::{Shell, display, quota, render};
use crate::error::ApiError;
use crate::queries::retention::{self, CohortPlayer, Period};
use crate::routes::retention::{RetentionResult, run, validate};
use crate::state::AppState;
use crate::team::Area;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{NaiveDate, Utc};
use serde::Serialize;

mod form;

use form::Filters;

const PATH: &str = "/analytics/retention";
/// Most players listed for one cohort.
const PLAYER_LIMIT: i64 = 200;
/// Cohort curves drawn besides the average (the latest non-empty ones).
const CURVES: usize = 6;

/// One table cell: a day N of a cohort.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    /// `42%`.
    percent: String,
    players: i64,
    /// `heat-0` .. `heat-5`.
    heat: &'static str,
    complete: bool,
}

/// One cohort row.
#[derive(Debug, Clone)]
struct Row {
    label: String,
    start: NaiveDate,
    size: i64,
    link: String,
    selected: bool,
    cells: Vec<Cell>,
}

/// The heat bucket of a fraction: the class names the colour, the cell's text says the value.
fn heat(fraction: f64) -> &'static str {
    match fraction {
        f if f <= 0.0 => "heat-0",
        f if f < 0.1 => "heat-1",
        f if f < 0.25 => "heat-2",
        f if f < 0.5 => "heat-3",
        f if f < 0.75 => "heat-4",
        _ => "heat-5",
    }
}

fn percent(fraction: f64) -> String {
    let text = format!("{:.1}", fraction * 100.0);
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned) + "%"
}

fn label(period: Period, start: NaiveDate) -> String {
    match period {
        Period::Day => start.to_string(),
        Period::Week => format!("Week of {start}"),
        Period::Month => start.format("%Y-%m").to_string(),
    }
}

fn rows(result: &RetentionResult, filters: &Filters) -> Vec<Row> {
    result
        .cohorts
        .iter()
        .map(|c| Row {
            label: label(result.period, c.start),
            start: c.start,
            size: c.size,
            link: filters.link(c.start),
            selected: filters.cohort == Some(c.start),
            cells: c
                .returned
                .iter()
                .map(|r| Cell {
                    percent: percent(r.fraction),
                    players: r.players,
                    heat: heat(r.fraction),
                    complete: r.complete,
                })
                .collect(),
        })
        .collect()
}

/// The curves as `charts.js` draws them: x is day N, not a time.
#[derive(Debug, Serialize)]
struct Curves {
    unit: &'static str,
    x_label: &'static str,
    x: Vec<i32>,
    series: Vec<Curve>,
    band: Option<[usize; 2]>,
    marks: [u8; 0],
}

#[derive(Debug, Serialize)]
struct Curve {
    label: String,
    values: Vec<Option<f64>>,
    /// Palette entry in `charts.js` (0 is the accent).
    color: usize,
}

/// The average over every cohort (players returned / players, complete cells only) and the
/// latest non-empty cohorts, in percent; an incomplete cell is a gap, not a dip.
fn curves(result: &RetentionResult) -> Curves {
    let mut series = vec![Curve {
        label: "All cohorts".into(),
        color: 0,
        values: (0..result.days.len())
            .map(|k| {
                let (players, size) = result
                    .cohorts
                    .iter()
                    .filter_map(|c| {
                        c.returned
                            .get(k)
                            .filter(|r| r.complete)
                            .map(|r| (r.players, c.size))
                    })
                    .fold((0, 0), |(p, s), (rp, rs)| (p + rp, s + rs));
                (size > 0).then(|| players as f64 * 100.0 / size as f64)
            })
            .collect(),
    }];
    series.extend(
        result
            .cohorts
            .iter()
            .rev()
            .filter(|c| c.size > 0)
            .take(CURVES)
            .enumerate()
            .map(|(i, c)| Curve {
                label: label(result.period, c.start),
                color: i + 1,
                values: c
                    .returned
                    .iter()
                    .map(|r| r.complete.then_some(r.fraction * 100.0))
                    .collect(),
            }),
    );
    Curves {
        unit: "% returned",
        x_label: "day N",
        x: result.days.clone(),
        series,
        band: None,
        marks: [],
    }
}

/// The opened cohort: its label, size and (up to [`PLAYER_LIMIT`]) players.
struct OpenCohort {
    label: String,
    size: i64,
    players: Vec<CohortPlayer>,
}

/// The Retention page.
#[derive(Template)]
#[template(path = "retention.html")]
struct RetentionPage {
    shell: Shell,
    filters: Filters,
    errors: Vec<String>,
    days: Vec<i32>,
    rows: Vec<Row>,
    curves_json: String,
    opened: Option<OpenCohort>,
    /// Whether the member may open player pages (moderators and up): the list links them.
    player_links: bool,
}

/// `/analytics/retention`.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(show))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let filters = Filters::read(query.as_deref());
    let player_links = shell.role.allows(Area::Players);
    let mut page = RetentionPage {
        shell,
        filters,
        errors: Vec::new(),
        days: Vec::new(),
        rows: Vec::new(),
        curves_json: String::new(),
        opened: None,
        player_links,
    };
    let checked = page
        .filters
        .request()
        .and_then(|request| validate(request, Utc::now().date_naive()).map_err(api_errors));
    let spec = match checked {
        Ok(spec) => spec,
        Err(errors) => {
            page.errors = errors;
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, render(&page)?).into_response());
        }
    };
    quota::spend(&state, &caller).await?;
    let account = caller.member().account_id;
    let result = run(&state, account, &spec).await?;
    page.days = result.days.clone();
    page.rows = rows(&result, &page.filters);
    page.curves_json = display::json(&curves(&result));
    if let Some(cohort) = page.filters.cohort
        && let Some(row) = result.cohorts.iter().find(|c| c.start == cohort)
    {
        let players =
            retention::cohort_players(&state.reads, account, &spec, cohort, PLAYER_LIMIT).await?;
        page.opened = Some(OpenCohort {
            label: label(spec.period, cohort),
            size: row.size,
            players,
        });
    }
    render(&page)
}

/// The API's field errors, in the form's words.
fn api_errors(error: ApiError) -> Vec<String> {
    match error {
        ApiError::Validation { errors, .. } => errors
            .iter()
            .map(|e| {
                let field = match e.field.as_str() {
                    "from" => "From".to_owned(),
                    "to" => "To".to_owned(),
                    "events.start" => "Start event".to_owned(),
                    "events.return" => "Return event".to_owned(),
                    other if other.starts_with("days") => "Days".to_owned(),
                    other => other.to_owned(),
                };
                format!("{field}: {}", e.message)
            })
            .collect(),
        other => vec![other.to_string()],
    }
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
