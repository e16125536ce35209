//! `/punishments`: the whole account's punishment log, newest first, read with the same query
//! as `GET /api/punishments` ([`read_page`]). A GET form filters it by type, player (UUID or
//! name, past names too), staff member, server, whether it is in force, and time; an "Older"
//! link pages by keyset. It works without JavaScript; `hx-boost` only makes it smoother. A
//! filter the page cannot use is said on the page (422), with the form kept to correct it.

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::log_form::{self, ServerOption};
use super::{Shell, display, render};
use crate::routes::account_reads::params::{self, PlayerRef};
use crate::routes::account_reads::punishments::{
    AccountPunishment, PunishmentFilter, TYPES, read_page,
};
use crate::routes::history::PageRequest;
use crate::routes::servers::server_statuses;
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use shared::validation::FieldErrors;

const PATH: &str = "/punishments";

/// The filter form as sent, kept to fill the form again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PunishmentForm {
    /// `ban`, `mute`, `kick`, `warning` or empty (any).
    pub kind: String,
    /// A player's UUID or name.
    pub player: String,
    /// A staff member's UUID or name.
    pub staff: String,
    /// A server's id.
    pub server: String,
    /// `true`, `false` or empty (either).
    pub active: String,
    /// `datetime-local` (UTC) or RFC 3339.
    pub from: String,
    /// See `from`.
    pub to: String,
    /// An older page's cursor.
    pub cursor: Option<String>,
}

impl PunishmentForm {
    /// Reads a raw query string; unknown parameters are ignored.
    pub fn parse(query: Option<&str>) -> PunishmentForm {
        let mut form = PunishmentForm::default();
        for (key, value) in log_form::pairs(query) {
            match key.as_str() {
                "type" => form.kind = value,
                "player" => form.player = value,
                "staff" => form.staff = value,
                "server" => form.server = value,
                "active" => form.active = value,
                "from" => form.from = value,
                "to" => form.to = value,
                "cursor" if !value.is_empty() => form.cursor = Some(value),
                _ => {}
            }
        }
        form
    }

    /// The form's own query string, without the cursor: the newest page of these filters.
    pub fn query(&self) -> String {
        log_form::encode(&[
            ("type", &self.kind),
            ("player", &self.player),
            ("staff", &self.staff),
            ("server", &self.server),
            ("active", &self.active),
            ("from", &self.from),
            ("to", &self.to),
        ])
    }

    /// The log's filter and page, or one line per field that cannot be used.
    pub fn filter(&self) -> Result<(PunishmentFilter, PageRequest), Vec<String>> {
        let mut errors = FieldErrors::new();
        let mut filter = PunishmentFilter::default();
        if !self.kind.is_empty() {
            if TYPES.contains(&self.kind.as_str()) {
                filter.kind = Some(self.kind.clone());
            } else {
                errors.push("type", "invalid_type", "must be ban, mute, kick or warning");
            }
        }
        if !self.player.is_empty() {
            filter.player = PlayerRef::parse(&mut errors, "player", &self.player);
        }
        if !self.staff.is_empty() {
            filter.staff = PlayerRef::parse(&mut errors, "staff", &self.staff);
        }
        if !self.server.is_empty() {
            filter.server = params::uuid(&mut errors, "server", &self.server);
        }
        if !self.active.is_empty() {
            filter.active = params::boolean(&mut errors, "active", &self.active);
        }
        (filter.from, filter.to) = log_form::time_range(&mut errors, &self.from, &self.to);
        let page = log_form::page(&mut errors, self.cursor.as_deref());
        match errors.into_result() {
            Ok(()) => Ok((filter, page)),
            Err(errors) => Err(log_form::messages(errors, field_label)),
        }
    }
}

/// What the page calls each field.
fn field_label(field: &str) -> &'static str {
    match field {
        "type" => "Type",
        "player" => "Player",
        "staff" => "Staff member",
        "server" => "Server",
        "active" => "Status",
        "from" => "From",
        "to" => "To",
        "cursor" => "Page",
        _ => "Filter",
    }
}

/// The Punishments page.
#[derive(Template)]
#[template(path = "punishments.html")]
struct PunishmentsPage {
    shell: Shell,
    form: PunishmentForm,
    servers: Vec<ServerOption>,
    rows: Vec<AccountPunishment>,
    /// What is wrong with the filters, one line per field.
    errors: Vec<String>,
    /// The next (older) page's query, if any.
    older: Option<String>,
}

impl PunishmentsPage {
    fn player(&self, row: &AccountPunishment) -> String {
        log_form::player_label(row.player_username.as_deref(), &row.player_uuid)
    }

    fn when(&self, at: &chrono::DateTime<chrono::Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &chrono::DateTime<chrono::Utc>) -> String {
        display::iso(at)
    }

    /// Whether the type filter is `kind` (for the select's `selected`).
    fn kind_is(&self, kind: &&str) -> bool {
        self.form.kind == *kind
    }

    /// In force, revoked, expired, or (a kick or warning) done.
    fn status(&self, row: &AccountPunishment) -> &'static str {
        let p = &row.punishment;
        if p.is_active {
            "Active"
        } else if p.revoked_at.is_some() {
            "Revoked"
        } else if p.expires_at.is_some() {
            "Expired"
        } else {
            "Done"
        }
    }
}

/// `/punishments`.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(page))
}

async fn page(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let account = caller.member().account_id;
    let form = PunishmentForm::parse(query.as_deref());
    let servers =
        log_form::server_options(&server_statuses(&state.reads, account).await?, &form.server);
    let (status, rows, errors, older) = match form.filter() {
        Ok((filter, page)) => {
            let found = read_page(&state.reads, account, &filter, &page).await?;
            let older = found
                .next_cursor
                .map(|cursor| log_form::with_cursor(&form.query(), &cursor));
            (StatusCode::OK, found.items, Vec::new(), older)
        }
        Err(errors) => (StatusCode::UNPROCESSABLE_ENTITY, Vec::new(), errors, None),
    };
    let page = PunishmentsPage {
        shell,
        form,
        servers,
        rows,
        errors,
        older,
    };
    Ok((status, render(&page)?).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_logs_filter() {
        let form = PunishmentForm::parse(Some(
            "type=ban&player=Griefer&staff=7d000000-0000-4000-8000-0000000000a1\
             &active=true&from=2025-01-31T12%3A00&other=x",
        ));
        let Ok((filter, page)) = form.filter() else {
            panic!("valid filters refused: {form:?}");
        };
        assert_eq!(filter.kind.as_deref(), Some("ban"));
        assert_eq!(filter.player, Some(PlayerRef::Name("Griefer".into())));
        assert!(matches!(filter.staff, Some(PlayerRef::Uuid(_))));
        assert_eq!(filter.active, Some(true));
        assert!(filter.from.is_some() && filter.to.is_none());
        assert_eq!(page.limit, log_form::PAGE_SIZE);
        assert_eq!(
            form.query(),
            "type=ban&player=Griefer&staff=7d000000-0000-4000-8000-0000000000a1\
             &active=true&from=2025-01-31T12%3A00"
        );
    }

    #[test]
    fn bad_values_are_lines_the_page_shows() {
        let form = PunishmentForm::parse(Some("type=jail&server=lobby&active=maybe&cursor=x"));
        let Err(lines) = form.filter() else {
            panic!("bad filters accepted");
        };
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].starts_with("Type: "), "{lines:?}");
        assert!(lines[1].starts_with("Server: not a UUID"), "{lines:?}");
        assert!(lines[2].starts_with("Status: "), "{lines:?}");
        assert!(lines[3].starts_with("Page: "), "{lines:?}");
    }
}
