//! What the filter forms of the account-wide log pages (`/punishments`, `/anticheat`) share:
//! lenient reading of the query string, the time range typed in `datetime-local` fields (read as
//! UTC), the older-page cursor, and field errors turned into lines a person reads on the page.

use super::display;
use super::events::as_rfc3339;
use crate::routes::account_reads::params;
use crate::routes::history::PageRequest;
use crate::routes::servers::ServerStatus;
use chrono::{DateTime, Utc};
use shared::validation::{FieldError, FieldErrors};
use uuid::Uuid;

/// Rows per page.
pub const PAGE_SIZE: i64 = 50;

/// The query string's pairs, trimmed; a malformed string reads as empty (the page's defaults).
pub fn pairs(query: Option<&str>) -> Vec<(String, String)> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query.unwrap_or(""))
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.trim().to_owned()))
        .collect()
}

/// `from` (inclusive) and `to` (exclusive) as typed, each optional; errors name the field.
pub fn time_range(
    errors: &mut FieldErrors,
    from: &str,
    to: &str,
) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
    let read = |errors: &mut FieldErrors, field: &str, value: &str| {
        if value.is_empty() {
            return None;
        }
        let at = params::time(errors, field, &as_rfc3339(value));
        errors.query_time(field, at);
        at
    };
    let (from, to) = (read(errors, "from", from), read(errors, "to", to));
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        errors.push("from", "out_of_range", "must not be after To");
    }
    (from, to)
}

/// A page of [`PAGE_SIZE`] rows after `cursor` (an "older" link's), or the newest.
pub fn page(errors: &mut FieldErrors, cursor: Option<&str>) -> PageRequest {
    let mut page = PageRequest {
        limit: PAGE_SIZE,
        cursor: None,
    };
    if let Some(cursor) = cursor {
        page.take("cursor", cursor, errors);
    }
    page
}

/// One line per field error, `Label: what is wrong`, with the form's own labels.
pub fn messages(errors: Vec<FieldError>, label: impl Fn(&str) -> &'static str) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{}: {}", label(&e.field), e.message))
        .collect()
}

/// The form's non-empty fields as a query string (a page's address).
pub fn encode(fields: &[(&str, &str)]) -> String {
    let kept: Vec<(&str, &str)> = fields
        .iter()
        .copied()
        .filter(|(_, value)| !value.is_empty())
        .collect();
    serde_urlencoded::to_string(kept).unwrap_or_default()
}

/// `query` with `cursor` added: the next (older) page's address.
pub fn with_cursor(query: &str, cursor: &str) -> String {
    join(query, &encode(&[("cursor", cursor)]))
}

/// Two query strings as one, leaving out an empty side.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}&{b}"),
    }
}

/// One choice of a form's server list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOption {
    /// The server's id, the value sent.
    pub id: String,
    /// Its name as pages write it.
    pub name: String,
    /// Whether it is the one filtered by.
    pub selected: bool,
}

/// The account's servers as choices, `selected` marked; an id typed in the address that is
/// not among them (a server that never sent a heartbeat) is kept as a choice of its own.
pub fn server_options(servers: &[ServerStatus], selected: &str) -> Vec<ServerOption> {
    let mut options: Vec<ServerOption> = servers
        .iter()
        .map(|s| ServerOption {
            id: s.id.to_string(),
            name: display::server_name(s.name.as_deref(), &s.id),
            selected: s.id.to_string() == selected,
        })
        .collect();
    if let Ok(id) = Uuid::parse_str(selected)
        && !options.iter().any(|o| o.selected)
    {
        options.push(ServerOption {
            id: id.to_string(),
            name: display::server_name(None, &id),
            selected: true,
        });
    }
    options
}

/// The name pages give `server`: its heartbeat name, else a short form of its id.
pub fn server_label(servers: &[ServerStatus], server: &Uuid) -> String {
    let name = servers
        .iter()
        .find(|s| s.id == *server)
        .and_then(|s| s.name.as_deref());
    display::server_name(name, server)
}

/// A player as a list shows them: their name, else a short form of their UUID.
pub fn player_label(name: Option<&str>, uuid: &Uuid) -> String {
    match name {
        Some(name) => name.to_owned(),
        None => format!("Player {}", &uuid.simple().to_string()[..8]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_and_a_reversed_range_is_an_error() {
        let mut errors = FieldErrors::new();
        let (from, to) = time_range(&mut errors, "2025-01-31T12:00", "");
        assert_eq!(
            from.map(|t| t.to_rfc3339()),
            Some("2025-01-31T12:00:00+00:00".into())
        );
        assert_eq!(to, None);
        assert!(errors.into_result().is_ok());
        let mut errors = FieldErrors::new();
        time_range(&mut errors, "2025-02-01T00:00", "2025-01-01T00:00");
        time_range(&mut errors, "yesterday", "");
        let fields: Vec<String> = errors
            .into_result()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| format!("{}:{}", e.field, e.code))
            .collect();
        assert_eq!(fields, ["from:out_of_range", "from:invalid_timestamp"]);
    }

    #[test]
    fn addresses_keep_only_what_was_typed() {
        let query = encode(&[("type", "ban"), ("player", ""), ("staff", "Mia & co")]);
        assert_eq!(query, "type=ban&staff=Mia+%26+co");
        assert_eq!(
            with_cursor(&query, "1_x"),
            "type=ban&staff=Mia+%26+co&cursor=1_x"
        );
        assert_eq!(with_cursor("", "1_x"), "cursor=1_x");
        let mut errors = FieldErrors::new();
        assert!(page(&mut errors, Some("nope")).cursor.is_none());
        assert!(errors.into_result().is_err());
    }
}
