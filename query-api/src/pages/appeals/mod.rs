//! The appeals inbox (moderators and up, [`Area::Punish`]): players' appeals of their
//! punishments, sent from the public appeal form, and the decisions staff take on them.
//!
//! - `GET /appeals`: one status at a time (`?status=new`, the default, `under_review`,
//!   `accepted`, `denied`) with the count of each, newest first, an "Older" link paging by
//!   keyset.
//! - `GET /appeals/{id}`: the appeal, the punishment beside it, the player's other punishments,
//!   recent anti-cheat flags and notes, and the decision form ([`detail`]).
//! - `POST /appeals/{id}/decision`: take it up, accept it (lifting the punishment) or deny it
//!   ([`decide`]).
//! - `GET /appeals/badge`: the count of new appeals, which the navigation bar loads beside its
//!   "Appeals" link.
//!
//! An appeal of another account is not found, like any id this account does not hold.

mod decide;
mod detail;

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, display, log_form, render};
use crate::error::ApiError;
use crate::queries::appeals::{self, AppealRow, STATUSES};
use crate::state::AppState;
use crate::team::Area;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use shared::validation::FieldErrors;

/// The inbox's path (its entry in the navigation bar).
const PATH: &str = "/appeals";
/// The characters of an appeal's first line the inbox shows.
const FIRST_LINE: usize = 120;

/// The inbox's routes.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(inbox))
        .route("/appeals/badge", get(badge))
        .route("/appeals/{id}", get(detail::page))
        .route("/appeals/{id}/decision", post(decide::decide))
}

/// What the page calls a status.
pub fn status_label(status: &str) -> &'static str {
    match status {
        "new" => "New",
        "under_review" => "Under review",
        "accepted" => "Accepted",
        "denied" => "Denied",
        _ => "Unknown",
    }
}

/// The player's name, else a short form of their UUID.
fn player_label(row: &AppealRow) -> String {
    log_form::player_label(row.player_name.as_deref(), &row.player_uuid)
}

/// The first line of `text`, cut at [`FIRST_LINE`] characters.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(FIRST_LINE).collect();
    if line.chars().count() > FIRST_LINE || text.trim().lines().nth(1).is_some() {
        cut.push('…');
    }
    cut
}

/// One status's tab.
struct Tab {
    status: &'static str,
    label: &'static str,
    count: i64,
    current: bool,
}

/// The inbox.
#[derive(Template)]
#[template(path = "appeals.html")]
struct InboxPage {
    shell: Shell,
    tabs: Vec<Tab>,
    /// The status shown.
    status: &'static str,
    rows: Vec<AppealRow>,
    /// Whether this is an older page (a link back to the newest).
    paged: bool,
    /// The next (older) page's query, if any.
    older: Option<String>,
}

impl InboxPage {
    fn player(&self, row: &AppealRow) -> String {
        player_label(row)
    }

    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }

    fn first_line(&self, row: &AppealRow) -> String {
        first_line(&row.message)
    }

    fn status_label(&self, status: &str) -> &'static str {
        status_label(status)
    }

    /// The status's label in words, for the empty inbox.
    fn current_label(&self) -> String {
        status_label(self.status).to_lowercase()
    }
}

/// Refuses a member whose role may not handle appeals (the usual 403 page).
fn require_role(caller: &SignedIn) -> Result<(), PageError> {
    let role = caller.member().role;
    if role.allows(Area::Punish) {
        Ok(())
    } else {
        Err(PageError::Forbidden {
            title: "Appeals",
            role,
        })
    }
}

/// The query's status (default `new`) and page.
fn read_query(query: Option<&str>) -> Result<(&'static str, Option<String>), PageError> {
    let mut status = "new";
    let mut cursor = None;
    for (key, value) in log_form::pairs(query) {
        match key.as_str() {
            "status" if !value.is_empty() => {
                status = STATUSES
                    .iter()
                    .copied()
                    .find(|s| *s == value)
                    .ok_or_else(|| {
                        ApiError::invalid_field(
                            "status",
                            "invalid_value",
                            "must be new, under_review, accepted or denied",
                        )
                    })?;
            }
            "cursor" if !value.is_empty() => cursor = Some(value),
            _ => {}
        }
    }
    Ok((status, cursor))
}

async fn inbox(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let account = caller.member().account_id;
    let (status, cursor) = read_query(query.as_deref())?;
    let mut errors = FieldErrors::new();
    let page = log_form::page(&mut errors, cursor.as_deref());
    errors.into_result().map_err(ApiError::invalid)?;
    let counts = appeals::counts(&state.reads, account).await?;
    let found = appeals::page(&state.reads, account, status, &page).await?;
    let (rows, next) = page.finish(found, |row| crate::routes::history::HistoryCursor {
        at: row.submitted_at,
        key: row.id,
    });
    let query = log_form::encode(&[("status", status)]);
    let tabs = STATUSES
        .iter()
        .zip(counts)
        .map(|(s, count)| Tab {
            status: s,
            label: status_label(s),
            count,
            current: *s == status,
        })
        .collect();
    render(&InboxPage {
        shell,
        tabs,
        status,
        rows,
        paged: cursor.is_some(),
        older: next.map(|cursor| log_form::with_cursor(&query, &cursor)),
    })
}

/// `GET /appeals/badge`: the count of new appeals as a badge for the navigation bar's link
/// (nothing when there is none); the bar asks again every minute, so it stays current.
async fn badge(caller: SignedIn, State(state): State<AppState>) -> Result<Response, PageError> {
    require_role(&caller)?;
    let count = appeals::new_count(&state.reads, caller.member().account_id).await?;
    let html = if count == 0 {
        String::new()
    } else {
        format!(
            r#"<span class="badge nav-count" data-testid="appeals-badge">{count}<span class="visually-hidden"> new</span></span>"#
        )
    };
    Ok((StatusCode::OK, Html(html)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_shows_an_appeals_first_line() {
        assert_eq!(first_line("I was not cheating."), "I was not cheating.");
        assert_eq!(first_line("\n  Hello  \nmore"), "Hello…");
        let long = "x".repeat(FIRST_LINE + 5);
        assert_eq!(first_line(&long).chars().count(), FIRST_LINE + 1);
    }

    #[test]
    fn the_inbox_opens_on_new_appeals_and_refuses_an_unknown_status() {
        assert_eq!(read_query(None).unwrap(), ("new", None));
        assert_eq!(
            read_query(Some("status=denied&cursor=abc")).unwrap(),
            ("denied", Some("abc".to_owned()))
        );
        assert!(read_query(Some("status=open")).is_err());
    }
}
