//! The Anti-cheat page's query string: what its filter form sends (`check`, `player`, `server`,
//! `min_vl`, `from`, `to`, and `cursor` for older pages), turned into the flags' filter
//! ([`FlagFilter`]), so the list, its live feed and `GET /api/flags` apply the same filter.

use crate::pages::log_form;
use crate::routes::account_reads::flags::{FlagFilter, min_vl};
use crate::routes::account_reads::params::{self, PlayerRef};
use crate::routes::history::PageRequest;
use shared::validation::FieldErrors;

/// The filter form as sent, kept to fill the form again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagForm {
    /// A check's name (case-insensitive).
    pub check: String,
    /// A player's UUID or name.
    pub player: String,
    /// A server's id.
    pub server: String,
    /// The least violation level shown.
    pub min_vl: String,
    /// `datetime-local` (UTC) or RFC 3339.
    pub from: String,
    /// See `from`.
    pub to: String,
    /// An older page's cursor.
    pub cursor: Option<String>,
    /// The live feed's starting point (a log position), for its first connection.
    pub after: Option<String>,
}

impl FlagForm {
    /// Reads a raw query string; unknown parameters are ignored.
    pub fn parse(query: Option<&str>) -> FlagForm {
        let mut form = FlagForm::default();
        for (key, value) in log_form::pairs(query) {
            match key.as_str() {
                "check" => form.check = value,
                "player" => form.player = value,
                "server" => form.server = value,
                "min_vl" => form.min_vl = value,
                "from" => form.from = value,
                "to" => form.to = value,
                "cursor" if !value.is_empty() => form.cursor = Some(value),
                "after" if !value.is_empty() => form.after = Some(value),
                _ => {}
            }
        }
        form
    }

    /// The form's own query string (no cursor, no starting point): the newest page's address.
    pub fn query(&self) -> String {
        log_form::encode(&[
            ("check", &self.check),
            ("player", &self.player),
            ("server", &self.server),
            ("min_vl", &self.min_vl),
            ("from", &self.from),
            ("to", &self.to),
        ])
    }

    /// The flags' filter and page, or one line per field that cannot be used.
    pub fn filter(&self) -> Result<(FlagFilter, PageRequest), Vec<String>> {
        let mut errors = FieldErrors::new();
        let mut filter = FlagFilter::default();
        if !self.check.is_empty() {
            filter.check_name = params::text(&mut errors, "check", &self.check);
        }
        if !self.player.is_empty() {
            filter.player = PlayerRef::parse(&mut errors, "player", &self.player);
        }
        if !self.server.is_empty() {
            filter.server = params::uuid(&mut errors, "server", &self.server);
        }
        if !self.min_vl.is_empty() {
            filter.min_vl = min_vl(&mut errors, "min_vl", &self.min_vl);
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
        "check" => "Check",
        "player" => "Player",
        "server" => "Server",
        "min_vl" => "Minimum violation level",
        "from" => "From",
        "to" => "To",
        "cursor" => "Page",
        _ => "Filter",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_flags_filter() {
        let form = FlagForm::parse(Some(
            "check=Reach&player=Hacker&min_vl=5.5&server=4d000000-0000-4000-8000-000000000001\
             &after=12&other=x",
        ));
        let Ok((filter, page)) = form.filter() else {
            panic!("valid filters refused: {form:?}");
        };
        assert_eq!(filter.check_name.as_deref(), Some("Reach"));
        assert_eq!(filter.player, Some(PlayerRef::Name("Hacker".into())));
        assert_eq!(filter.min_vl, Some(5.5));
        assert!(filter.server.is_some() && page.cursor.is_none());
        assert_eq!(form.after.as_deref(), Some("12"));
        assert_eq!(
            form.query(),
            "check=Reach&player=Hacker&server=4d000000-0000-4000-8000-000000000001&min_vl=5.5"
        );
    }

    #[test]
    fn bad_values_are_lines_the_page_shows() {
        let form = FlagForm::parse(Some("min_vl=lots&server=lobby&to=soon"));
        let Err(lines) = form.filter() else {
            panic!("bad filters accepted");
        };
        assert_eq!(
            lines,
            [
                "Server: not a UUID",
                "Minimum violation level: must be a finite number",
                "To: not an RFC 3339 timestamp (e.g. 2025-01-31T12:00:00Z)",
            ]
        );
        let form = FlagForm::parse(Some("min_vl=inf"));
        assert!(form.filter().is_err());
    }
}
