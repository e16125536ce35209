//! `/funnels`: the funnel builder. Steps (2 to 10, the first a custom event), a conversion
//! window, one of the three orders and a time range; the result is a bar per step with its
//! players and conversions, computed by the same function as `POST /api/v1/funnels`
//! ([`crate::routes::funnels::run`]).
//!
//! Everything is a plain form: "Add step" and "Remove step N" post it back and get it again
//! with one step more or fewer, "Run" posts it and gets the result under it; htmx (`hx-boost`)
//! only swaps the page in place. `GET /funnels?step=a` starts a funnel from an event (the
//! Events page links each event name there). A run counts against the member's quota.
//!
//! The step fields offer the account's own event names as you type (a `<datalist>`, read by
//! [`crate::queries::event_names`]), and a plain `GET /funnels` of an account that has
//! events opens on an example funnel built from two of its names, run (at most once every few
//! minutes: [`example`]) and labelled as an example.
//!
//! Under the bars ([`result`]): time to convert per later step, the breakdown by a property
//! of step 1 when one is given, and a page of the players who dropped off after a step
//! (step 1 unless another is chosen), each linking to `/players/{uuid}`.

mod example;
mod result;

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, quota, render};
use crate::error::ApiError;
use crate::funnel::FunnelOrder;
use crate::queries::event_names::{MAX_NAMES, event_names};
use crate::routes::funnels::{
    BreakdownRequest, DEFAULT_WINDOW_SECONDS, DropOffRequest, FunnelRequest, MAX_WINDOW_SECONDS,
    run,
};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, NaiveDateTime, Utc};
use result::ResultView;
use uuid::Uuid;

const PATH: &str = "/funnels";
const MIN_STEPS: usize = 2;
const MAX_STEPS: usize = 10;
const HOUR: i64 = 3600;
const DAY: i64 = 86_400;
/// Players per page of the drop-off list.
const DROP_OFF_PAGE: i64 = 25;

/// The builder as filled in.
#[derive(Debug, Clone)]
struct Builder {
    steps: Vec<String>,
    window: String,
    /// Seconds per window unit: [`HOUR`] or [`DAY`].
    unit: i64,
    order: FunnelOrder,
    from: String,
    to: String,
    /// The breakdown's property key (empty: no breakdown).
    breakdown: String,
    /// The step whose drop-offs are listed (1-based; clamped to the steps).
    dropped_off: usize,
    /// The drop-off list's page cursor.
    dropped_off_after: Option<Uuid>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            steps: vec![String::new(); MIN_STEPS],
            window: (DEFAULT_WINDOW_SECONDS / DAY).to_string(),
            unit: DAY,
            order: FunnelOrder::Sequential,
            from: String::new(),
            to: String::new(),
            breakdown: String::new(),
            dropped_off: 1,
            dropped_off_after: None,
        }
    }
}

/// What the form asks for besides its values.
enum Action {
    Run,
    Add,
    Remove(usize),
}

impl Builder {
    /// Reads the form's fields (`step` repeats); unknown fields are ignored.
    fn read(pairs: &[(String, String)]) -> (Builder, Action) {
        let mut builder = Builder {
            steps: Vec::new(),
            ..Builder::default()
        };
        let mut action = Action::Run;
        for (key, value) in pairs {
            let value = value.trim();
            match key.as_str() {
                "step" => builder.steps.push(value.to_owned()),
                "window" => builder.window = value.to_owned(),
                "window_unit" => builder.unit = if value == "3600" { HOUR } else { DAY },
                "order" => {
                    builder.order = match value {
                        "strict" => FunnelOrder::Strict,
                        "any" => FunnelOrder::Any,
                        _ => FunnelOrder::Sequential,
                    }
                }
                "from" => builder.from = value.to_owned(),
                "to" => builder.to = value.to_owned(),
                "breakdown" => builder.breakdown = value.to_owned(),
                "dropped_off" => builder.dropped_off = value.parse().unwrap_or(1),
                "dropped_off_after" => builder.dropped_off_after = value.parse().ok(),
                "action" if value == "add" => action = Action::Add,
                "remove" => action = value.parse().map_or(Action::Run, Action::Remove),
                _ => {}
            }
        }
        builder.steps.truncate(MAX_STEPS);
        (builder, action)
    }

    /// At least [`MIN_STEPS`] inputs to fill.
    fn padded(mut self) -> Builder {
        while self.steps.len() < MIN_STEPS {
            self.steps.push(String::new());
        }
        self
    }

    /// The drop-off list's step, within 1..=steps - 1.
    fn drop_off_step(&self) -> usize {
        self.dropped_off
            .min(self.steps.len().saturating_sub(1))
            .max(1)
    }

    fn order(&self) -> &'static str {
        match self.order {
            FunnelOrder::Sequential => "sequential",
            FunnelOrder::Strict => "strict",
            FunnelOrder::Any => "any",
        }
    }

    /// The API's request, or what is wrong with the fields the API cannot see (the window's
    /// number, the times' text).
    fn request(&self) -> Result<FunnelRequest, Vec<String>> {
        let mut errors = Vec::new();
        let window_seconds = match self.window.parse::<i64>() {
            Ok(n) if n >= 1 => n.saturating_mul(self.unit),
            _ => {
                errors.push(format!(
                    "Window: a whole number of hours or days, at most {} days",
                    MAX_WINDOW_SECONDS / DAY
                ));
                DEFAULT_WINDOW_SECONDS
            }
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
        let request = FunnelRequest {
            steps: self.steps.clone(),
            window_seconds,
            from,
            to,
            order: self.order,
            breakdown: (!self.breakdown.is_empty()).then(|| BreakdownRequest {
                property: self.breakdown.clone(),
                limit: 10,
            }),
            dropped_off: Some(DropOffRequest {
                step: self.drop_off_step() as i64,
                limit: DROP_OFF_PAGE,
                after: self.dropped_off_after,
            }),
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
            ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"]
                .iter()
                .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
                .map(|local| local.and_utc())
        })
}

/// The Funnels page.
#[derive(Template)]
#[template(path = "funnels.html")]
struct FunnelsPage {
    shell: Shell,
    builder: Builder,
    errors: Vec<String>,
    result: Option<ResultView>,
    /// The account's event names, offered in the step fields.
    names: Vec<String>,
    /// True when the steps are the page's example, not the member's.
    example: bool,
}

impl FunnelsPage {
    fn may_add(&self) -> bool {
        self.builder.steps.len() < MAX_STEPS
    }

    fn may_remove(&self) -> bool {
        self.builder.steps.len() > MIN_STEPS
    }
}

/// `/funnels`: the builder (GET) and its form (POST).
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(show).post(submit))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or("")).unwrap_or_default();
    let (mut builder, _) = Builder::read(&pairs);
    let names = event_names(&state.reads, caller.member().account_id, MAX_NAMES).await?;
    let example = if builder.steps.is_empty() {
        example::steps(&names)
    } else {
        None
    };
    let (mut errors, mut result) = (Vec::new(), None);
    if let Some(steps) = &example {
        builder.steps = steps.clone();
        let key = (caller.member().account_id, caller.visibility());
        result = example::kept(key, steps);
        // Run like any funnel (counted against the quota) unless it ran a moment ago; over
        // the quota, the example's steps are still filled in, ready to run.
        if result.is_none() {
            match compute(&state, &caller, &builder).await {
                Ok(outcome) => (_, errors, result) = outcome,
                Err(PageError::Throttled(_)) => {}
                Err(other) => return Err(other),
            }
            if let Some(answer) = &result {
                example::keep(key, steps, answer);
            }
        }
    }
    let page = FunnelsPage {
        shell,
        builder: builder.padded(),
        errors,
        result,
        names,
        example: example.is_some(),
    };
    render(&page)
}

async fn submit(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let (mut builder, action) = Builder::read(&pairs);
    let (status, errors, result) = match action {
        Action::Add => {
            if builder.steps.len() < MAX_STEPS {
                builder.steps.push(String::new());
            }
            (StatusCode::OK, Vec::new(), None)
        }
        // The first step is the event the funnel starts from: it stays.
        Action::Remove(number) => {
            if number >= 2 && number <= builder.steps.len() && builder.steps.len() > MIN_STEPS {
                builder.steps.remove(number - 1);
            }
            (StatusCode::OK, Vec::new(), None)
        }
        Action::Run => compute(&state, &caller, &builder).await?,
    };
    let names = event_names(&state.reads, caller.member().account_id, MAX_NAMES).await?;
    let page = FunnelsPage {
        shell,
        builder: builder.padded(),
        errors,
        result,
        names,
        example: false,
    };
    Ok((status, render(&page)?).into_response())
}

type Outcome = (StatusCode, Vec<String>, Option<ResultView>);

/// Runs the funnel; a request the API would refuse is the page's errors (422).
async fn compute(
    state: &AppState,
    caller: &SignedIn,
    builder: &Builder,
) -> Result<Outcome, PageError> {
    let request = match builder.request() {
        Ok(request) => request,
        Err(errors) => return Ok((StatusCode::UNPROCESSABLE_ENTITY, errors, None)),
    };
    quota::spend(state, caller).await?;
    let reader = (caller.member().account_id, caller.visibility());
    match run(state, reader, request).await {
        Ok(result) => Ok((StatusCode::OK, Vec::new(), Some(ResultView::of(&result)))),
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

/// What the page calls an API field (`steps[1]` is "Step 2").
fn field_label(field: &str) -> String {
    if let Some(index) = field
        .strip_prefix("steps[")
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|n| n.parse::<usize>().ok())
    {
        return format!("Step {}", index + 1);
    }
    match field {
        "steps" => "Steps".into(),
        "window_seconds" => "Window".into(),
        "from" => "From".into(),
        "to" => "To".into(),
        "breakdown.property" => "Breakdown property".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::funnels::FunnelStep;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_form_reads_steps_window_order_and_range() -> Result<(), Vec<String>> {
        let (builder, action) = Builder::read(&pairs(&[
            ("step", "quest_started"),
            ("step", " quest_completed "),
            ("window", "12"),
            ("window_unit", "3600"),
            ("order", "strict"),
            ("from", "2025-01-01T00:00"),
            ("action", "run"),
        ]));
        assert!(matches!(action, Action::Run));
        let request = builder.request()?;
        assert_eq!(request.steps, ["quest_started", "quest_completed"]);
        assert_eq!(request.window_seconds, 12 * 3600);
        assert_eq!(request.order, FunnelOrder::Strict);
        assert_eq!(
            request.from.map(|t| t.to_rfc3339()),
            Some("2025-01-01T00:00:00+00:00".into())
        );
        assert_eq!(request.to, None);
        Ok(())
    }

    #[test]
    fn a_bad_window_or_time_is_said_before_any_query() {
        let (builder, _) = Builder::read(&pairs(&[("window", "soon"), ("to", "tomorrow")]));
        let errors = builder.request().err().unwrap_or_default();
        assert_eq!(errors.len(), 2, "{errors:?}");
        let (_, action) = Builder::read(&pairs(&[("remove", "3")]));
        assert!(matches!(action, Action::Remove(3)));
    }

    #[test]
    fn the_drop_off_step_stays_within_the_steps() -> Result<(), Vec<String>> {
        let (builder, _) = Builder::read(&pairs(&[
            ("step", "a"),
            ("step", "b"),
            ("step", "c"),
            ("dropped_off", "7"),
            ("breakdown", "region"),
        ]));
        let request = builder.request()?;
        assert_eq!(request.dropped_off.map(|d| d.step), Some(2));
        assert_eq!(request.breakdown.map(|b| b.property), Some("region".into()));
        let (builder, _) = Builder::read(&pairs(&[("step", "a"), ("step", "b")]));
        let request = builder.request()?;
        assert_eq!(request.dropped_off.map(|d| d.step), Some(1));
        assert!(request.breakdown.is_none());
        Ok(())
    }

    #[test]
    fn the_example_starts_from_a_custom_event() {
        let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            example::steps(&names(&[
                "chat_message",
                "quest_completed",
                "quest_started"
            ])),
            Some(names(&["quest_completed", "quest_started"]))
        );
        assert_eq!(
            example::steps(&names(&["quest_started", "session_join"])),
            Some(names(&["quest_started", "session_join"]))
        );
        assert_eq!(
            example::steps(&names(&["session_join", "session_quit"])),
            None
        );
        assert_eq!(example::steps(&names(&["quest_started"])), None);
    }

    #[test]
    fn bars_say_players_and_conversions() {
        use result::{bars, percent};
        let step = |name: &str, players, from_start, median| FunnelStep {
            name: name.into(),
            players,
            conversion_from_start: from_start,
            conversion_from_previous: from_start,
            median_seconds_from_previous: median,
            median_seconds_from_start: median,
            time_to_convert: Vec::new(),
        };
        let bars = bars(&[step("a", 2, 1.0, None), step("b", 1, 0.5, Some(90.0))]);
        assert_eq!(bars[0].players_text, "2 players");
        assert_eq!(bars[1].players_text, "1 player");
        assert_eq!(bars[1].most, 2);
        assert_eq!(
            bars[1].stats,
            "50% of start · 50% of previous · median 1.5 min after previous"
        );
        assert_eq!(percent(1.0 / 3.0), "33.3%");
        assert_eq!(field_label("steps[1]"), "Step 2");
    }
}
