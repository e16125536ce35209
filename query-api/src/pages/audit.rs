//! `/audit`: the account's audit log, newest first, 50 rows a page (`?before=<id>` for older).

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::state::AppState;
use crate::team::audit::{self, AuditRow, PAGE_SIZE};
use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use uuid::Uuid;

/// The audit page.
#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    shell: Shell,
    rows: Vec<AuditRow>,
    /// The cursor of the next (older) page, when there may be one.
    older: Option<Uuid>,
}

#[derive(Debug, Deserialize)]
struct Cursor {
    /// Read as text: a cursor that is not an id shows the newest page rather than an error.
    before: Option<String>,
}

/// `/audit`.
pub fn router() -> PageRoutes {
    Router::new().route("/audit", get(show))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    Query(cursor): Query<Cursor>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, "/audit")?;
    let rows = audit::page(
        &state.pool,
        caller.member().account_id,
        cursor.before.and_then(|b| b.parse().ok()),
    )
    .await?;
    let older = (rows.len() as i64 == PAGE_SIZE)
        .then(|| rows.last().map(|row| row.id))
        .flatten();
    render(&AuditPage { shell, rows, older })
}
