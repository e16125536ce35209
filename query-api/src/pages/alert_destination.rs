//! `/alerts/destinations/{id}`: one destination's delivery log (newest first, filtered by
//! status, page by page) with "send again" per delivery, "send a test event", rotating a
//! webhook's secret (the new one shown once), disabling, enabling and deleting. The same
//! functions as the admin API (`crate::routes::alerts`), which write the audit log.

use super::alerts::{PATH as ALERTS, refusal};
use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, params, render};
use crate::error::ApiError;
use crate::routes::alerts::deliveries::{self, DeliveryPage, DeliveryStatus, LogQuery};
use crate::routes::alerts::destination_actions::{self, RotatedSecret};
use crate::routes::alerts::destinations::{self, Destination, DestinationUpdate, Kind};
use crate::routes::paging::{KeysetCursor, PageRequest};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

/// The destination page.
#[derive(Template)]
#[template(path = "alert_destination.html")]
struct DestinationPage {
    shell: Shell,
    destination: Destination,
    log: DeliveryPage,
    /// The status filter (`""`: all).
    status: &'static str,
    statuses: [DeliveryStatus; 3],
    notice: Option<&'static str>,
    error: Option<String>,
    rotated: Option<RotatedSecret>,
}

impl DestinationPage {
    fn is_webhook(&self) -> bool {
        self.destination.kind == Kind::Webhook
    }

    /// The link to the next (older) page, keeping the filter.
    fn older(&self) -> Option<String> {
        self.log.next_cursor.as_ref().map(|cursor| {
            let query = serde_urlencoded::to_string([("status", self.status), ("cursor", cursor)])
                .unwrap_or_default();
            format!("{}?{query}", self.base())
        })
    }

    fn base(&self) -> String {
        format!("/alerts/destinations/{}", self.destination.id)
    }
}

fn notice_text(code: &str) -> Option<&'static str> {
    match code {
        "test_sent" => Some("Test event queued: it appears in the log below."),
        "resent" => Some("Delivery queued again, with the same webhook-id."),
        "enabled" => Some("Destination enabled: waiting deliveries are sent now."),
        "disabled" => Some("Destination disabled: its notifications wait until it is enabled."),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
struct StateForm {
    #[serde(default)]
    enabled: String,
}

/// The page and its forms.
pub fn router() -> PageRoutes {
    let base = "/alerts/destinations/{id}";
    Router::new()
        .route(base, get(show))
        .route(&format!("{base}/test"), post(send_test))
        .route(&format!("{base}/rotate"), post(rotate))
        .route(&format!("{base}/state"), post(set_state))
        .route(&format!("{base}/delete"), post(delete))
        .route(
            &format!("{base}/deliveries/{{delivery}}/resend"),
            post(resend),
        )
}

/// The log's filter and page from the page's own links, read leniently (an unknown status
/// shows everything; a broken cursor starts at the newest).
fn log_query(raw: Option<&str>) -> LogQuery {
    let status = params::value(raw, "status").and_then(|s| DeliveryStatus::parse(&s));
    let cursor = params::value(raw, "cursor").and_then(|c| KeysetCursor::parse(&c));
    LogQuery {
        status,
        page: PageRequest {
            cursor,
            ..PageRequest::default()
        },
    }
}

#[allow(clippy::too_many_arguments)] // The page's parts, each from a different form.
async fn page(
    state: &AppState,
    caller: &SignedIn,
    id: Uuid,
    query: LogQuery,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    rotated: Option<RotatedSecret>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, ALERTS)?;
    let account_id = caller.member().account_id;
    let destination = destinations::get_one(&state.pool, account_id, id)
        .await
        .map_err(not_found)?;
    let log = deliveries::page(&state.pool, account_id, id, &query).await?;
    let page = DestinationPage {
        shell,
        destination,
        log,
        status: query.status.map_or("", DeliveryStatus::as_str),
        statuses: DeliveryStatus::ALL,
        notice,
        error,
        rotated,
    };
    Ok((status, render(&page)?).into_response())
}

/// Another account's destination is no page at all.
fn not_found(error: ApiError) -> PageError {
    match error {
        ApiError::NotFound(_) => PageError::NotFound,
        other => other.into(),
    }
}

async fn refused(
    state: &AppState,
    caller: &SignedIn,
    id: Uuid,
    error: ApiError,
) -> Result<Response, PageError> {
    match refusal(&error) {
        Some((StatusCode::NOT_FOUND, _)) => Err(PageError::NotFound),
        Some((status, message)) => {
            let query = LogQuery::default();
            page(state, caller, id, query, status, None, Some(message), None).await
        }
        None => Err(error.into()),
    }
}

fn done(id: Uuid, notice: &str) -> Response {
    let location = format!("/alerts/destinations/{id}?notice={notice}");
    (StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response()
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let notice = params::value(query.as_deref(), "notice");
    let notice = notice.as_deref().and_then(notice_text);
    let log = log_query(query.as_deref());
    page(&state, &caller, id, log, StatusCode::OK, notice, None, None).await
}

async fn send_test(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let actor = caller.actor(&state);
    match destination_actions::send_test(&state, caller.member().account_id, id, &actor).await {
        Ok(_) => Ok(done(id, "test_sent")),
        Err(error) => refused(&state, &caller, id, error).await,
    }
}

async fn rotate(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let actor = caller.actor(&state);
    match destination_actions::rotate(&state, caller.member().account_id, id, &actor).await {
        Ok(rotated) => {
            let query = LogQuery::default();
            page(
                &state,
                &caller,
                id,
                query,
                StatusCode::OK,
                None,
                None,
                Some(rotated),
            )
            .await
        }
        Err(error) => refused(&state, &caller, id, error).await,
    }
}

async fn set_state(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
    Form(form): Form<StateForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let enabled = form.enabled == "true";
    let update = DestinationUpdate {
        enabled: Some(enabled),
        ..DestinationUpdate::default()
    };
    let actor = caller.actor(&state);
    let account_id = caller.member().account_id;
    match destinations::update(&state, account_id, id, &update, &actor).await {
        Ok(_) => Ok(done(id, if enabled { "enabled" } else { "disabled" })),
        Err(error) => refused(&state, &caller, id, error).await,
    }
}

async fn delete(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let actor = caller.actor(&state);
    match destinations::delete(&state.pool, caller.member().account_id, id, &actor).await {
        Ok(()) => {
            let location = format!("{ALERTS}?notice=destination_deleted");
            Ok((StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response())
        }
        Err(error) => refused(&state, &caller, id, error).await,
    }
}

async fn resend(
    caller: SignedIn,
    State(state): State<AppState>,
    Path((id, delivery)): Path<(Uuid, Uuid)>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let actor = caller.actor(&state);
    let account_id = caller.member().account_id;
    match deliveries::resend(&state.pool, account_id, id, delivery, &actor).await {
        Ok(_) => Ok(done(id, "resent")),
        Err(error) => refused(&state, &caller, id, error).await,
    }
}
