//! `/alerts/destinations/{id}/deliveries/{delivery}`: one delivery of a destination's log with
//! every attempt (when, the HTTP answer or the error, how long it took), the newest first.
//! Read by the function behind the admin API's
//! `GET .../destinations/{destination}/deliveries/{delivery}` (`deliveries::detail`). Owners
//! and admins only, as the Alerts page.

use super::alerts::PATH as ALERTS;
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::error::ApiError;
use crate::routes::alerts::deliveries::{self, DeliveryDetail};
use crate::routes::alerts::destinations::{self, Destination};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use uuid::Uuid;

/// The delivery page.
#[derive(Template)]
#[template(path = "alert_delivery.html")]
struct DeliveryPage {
    shell: Shell,
    destination: Destination,
    delivery: DeliveryDetail,
}

/// The route.
pub fn router() -> PageRoutes {
    Router::new().route("/alerts/destinations/{id}/deliveries/{delivery}", get(show))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    Path((id, delivery)): Path<(Uuid, Uuid)>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, ALERTS)?;
    let account_id = caller.member().account_id;
    let destination = destinations::get_one(&state.pool, account_id, id)
        .await
        .map_err(not_found)?;
    let mut delivery = deliveries::detail(&state.pool, account_id, id, delivery)
        .await
        .map_err(not_found)?;
    // The newest attempt first, as the log lists deliveries.
    delivery.attempt_log.reverse();
    render(&DeliveryPage {
        shell,
        destination,
        delivery,
    })
}

/// Another account's destination or delivery is no page at all.
fn not_found(error: ApiError) -> PageError {
    match error {
        ApiError::NotFound(_) => PageError::NotFound,
        other => other.into(),
    }
}
