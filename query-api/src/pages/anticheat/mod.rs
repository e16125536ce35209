//! `/anticheat`: the account's anti-cheat flags, newest first, read with the same query as
//! `GET /api/flags` ([`read_page`]), live; with the most-flagged players and the flags of each
//! check over the last 24 hours ([`crate::queries::anticheat`]).
//!
//! A GET form filters by check, player (UUID or name), server, least violation level and time,
//! and applies to the list and to its live feed alike; an "Older" link pages by keyset. The
//! page reads without JavaScript; `anticheat.js` adds the live feed (`stream.rs`), whose rows
//! are drawn by the same partial as the list's.

mod form;
mod stream;

pub use form::FlagForm;

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::log_form::{self, ServerOption};
use super::{Shell, display, render};
use crate::queries::anticheat::{
    CheckCount, FlaggedPlayer, SUMMARY_HOURS, counts_per_check, most_flagged,
};
use crate::routes::account_reads::flags::{AccountFlag, read_page};
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Duration, Utc};
use shared::records::AnticheatFlag;
use uuid::Uuid;

const PATH: &str = "/anticheat";

/// One flag as a row of the table, whether read from the list or arriving live.
#[derive(Debug, Clone)]
pub struct FlagRow {
    /// The flag's id: the live feed never adds a row the page already shows.
    pub id: Uuid,
    /// The flagged player.
    pub player_uuid: Uuid,
    /// Their name, else a short form of their UUID.
    pub player: String,
    /// The check and its variant (`Reach A`).
    pub check: String,
    /// The violation level, as reported.
    pub violation_level: String,
    /// What the anti-cheat said.
    pub detail: Option<String>,
    /// Whether the check is experimental.
    pub experimental: bool,
    /// The server's name.
    pub server: String,
    /// When, for the eye (UTC).
    pub at: String,
    /// When, for `<time datetime>`.
    pub iso: String,
}

impl FlagRow {
    /// A row of the list.
    fn listed(flag: AccountFlag, servers: &[ServerStatus]) -> FlagRow {
        let f = flag.flag;
        FlagRow {
            id: f.id,
            player: log_form::player_label(flag.player_username.as_deref(), &flag.player_uuid),
            player_uuid: flag.player_uuid,
            check: check_label(&f.check_name, f.check_type.as_deref()),
            violation_level: f.violation_level.to_string(),
            detail: f.detail,
            experimental: f.is_experimental,
            server: log_form::server_label(servers, &f.server_id),
            at: display::date_time(&f.flagged_at),
            iso: display::iso(&f.flagged_at),
        }
    }

    /// A row of a flag read from the log (`at`: when it was raised, else received).
    pub fn logged(id: Uuid, flag: &AnticheatFlag, at: DateTime<Utc>, server: String) -> FlagRow {
        FlagRow {
            id,
            player_uuid: flag.player_uuid,
            player: log_form::player_label(flag.player_name.as_deref(), &flag.player_uuid),
            check: check_label(&flag.check_name, flag.check_type.as_deref()),
            violation_level: flag.violation_level.to_string(),
            detail: flag.detail.clone(),
            experimental: flag.is_experimental.unwrap_or(false),
            server,
            at: display::date_time(&at),
            iso: display::iso(&at),
        }
    }
}

fn check_label(name: &str, kind: Option<&str>) -> String {
    match kind {
        Some(kind) => format!("{name} {kind}"),
        None => name.to_owned(),
    }
}

/// One row alone: what the live feed sends.
#[derive(Template)]
#[template(path = "partials/flag_row.html")]
pub struct FlagRowPartial<'a> {
    /// The row.
    pub row: &'a FlagRow,
}

/// The Anti-cheat page.
#[derive(Template)]
#[template(path = "anticheat.html")]
struct AnticheatPage {
    shell: Shell,
    form: FlagForm,
    servers: Vec<ServerOption>,
    rows: Vec<FlagRow>,
    /// What is wrong with the filters, one line per field.
    errors: Vec<String>,
    /// The next (older) page's query, if any.
    older: Option<String>,
    /// The live feed's address: on the newest page of valid filters only.
    stream: Option<String>,
    hours: i64,
    most_flagged: Vec<FlaggedPlayer>,
    checks: Vec<CheckCount>,
}

impl AnticheatPage {
    fn flagged_name(&self, player: &FlaggedPlayer) -> String {
        log_form::player_label(player.username.as_deref(), &player.uuid)
    }

    fn clock(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }

    /// The list filtered by one check (a link of the counts table).
    fn check_query(&self, check: &str) -> String {
        log_form::encode(&[("check", check)])
    }
}

/// `/anticheat` and its live feed.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(page))
        .route(stream::PATH, get(stream::stream))
}

async fn page(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let account = caller.member().account_id;
    let form = FlagForm::parse(query.as_deref());
    // Read before the list: the live feed starts after this point of the log, so a flag
    // written while the page loads comes over the feed (the script drops one already shown).
    let position = match state.live.log_position().await {
        Ok(position) => Some(position),
        Err(error) => {
            tracing::warn!(%error, "no log position for the flag feed; it starts live");
            None
        }
    };
    let statuses = server_statuses(&state.reads, account).await?;
    let since = Utc::now() - Duration::hours(SUMMARY_HOURS);
    let most_flagged = most_flagged(&state.reads, account, since).await?;
    let checks = counts_per_check(&state.reads, account, since).await?;
    let (status, rows, errors, older, stream) = match form.filter() {
        Ok((filter, page)) => {
            let found = read_page(&state.reads, account, &filter, &page).await?;
            let older = found
                .next_cursor
                .map(|cursor| log_form::with_cursor(&form.query(), &cursor));
            // Only the newest page follows live: on an older one every new flag would be out
            // of place.
            let stream = form.cursor.is_none().then(|| {
                let after = position.map(|p| p.to_string()).unwrap_or_default();
                let query = log_form::encode(&[("after", &after)]);
                format!("{}?{}", stream::PATH, log_form::join(&form.query(), &query))
            });
            let rows = found
                .items
                .into_iter()
                .map(|flag| FlagRow::listed(flag, &statuses))
                .collect();
            (StatusCode::OK, rows, Vec::new(), older, stream)
        }
        Err(errors) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Vec::new(),
            errors,
            None,
            None,
        ),
    };
    let page = AnticheatPage {
        shell,
        servers: log_form::server_options(&statuses, &form.server),
        form,
        rows,
        errors,
        older,
        stream,
        hours: SUMMARY_HOURS,
        most_flagged,
        checks,
    };
    Ok((status, render(&page)?).into_response())
}
