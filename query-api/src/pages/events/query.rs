//! The Events page's query string: what its filter form sends (`names`, `player`, `from`, `to`,
//! `internal`, and `cursor` for older pages), turned into the events API's filter
//! ([`EventFilter`]), so the page, its partials and its live stream read exactly what
//! `GET /api/v1/events` and its stream would with the same filters.

use crate::error::ApiError;
use crate::routes::events::EventFilter;
use chrono::NaiveDateTime;

/// Rows per page.
pub const PAGE_SIZE: i64 = 50;

/// The filter form as sent, kept to fill the form again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterForm {
    /// Event names, separated by commas or spaces.
    pub names: String,
    /// A player UUID.
    pub player: String,
    /// `datetime-local` (read as UTC) or RFC 3339.
    pub from: String,
    /// See `from`.
    pub to: String,
    /// Include internal events.
    pub internal: bool,
    /// An older page's cursor (`next_cursor` of the list).
    pub cursor: Option<String>,
    /// The stream's resume point (`after`, a seq), for the first connection of a page whose
    /// newest event is that one; a reconnect's `Last-Event-ID` wins over it.
    pub after: Option<String>,
}

impl FilterForm {
    /// Reads a raw query string; unknown parameters are ignored, a malformed string is empty.
    pub fn parse(query: &str) -> FilterForm {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
        let mut form = FilterForm::default();
        for (key, value) in pairs {
            let value = value.trim().to_owned();
            match key.as_str() {
                "names" => form.names = value,
                "player" => form.player = value,
                "from" => form.from = value,
                "to" => form.to = value,
                "internal" => form.internal = matches!(value.as_str(), "true" | "1" | "on"),
                "cursor" if !value.is_empty() => form.cursor = Some(value),
                "after" if !value.is_empty() => form.after = Some(value),
                _ => {}
            }
        }
        form
    }

    /// The event names typed.
    pub fn name_list(&self) -> impl Iterator<Item = &str> {
        self.names
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|name| !name.is_empty())
    }

    /// The form's own query string (no cursor, no resume point): the page's address.
    pub fn query(&self) -> String {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for (key, value) in [
            ("names", &self.names),
            ("player", &self.player),
            ("from", &self.from),
            ("to", &self.to),
        ] {
            if !value.is_empty() {
                pairs.push((key, value));
            }
        }
        if self.internal {
            pairs.push(("internal", "true"));
        }
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }

    /// The query with `cursor` added (an older page's address).
    pub fn query_with_cursor(&self, cursor: &str) -> String {
        join(
            &self.query(),
            &serde_urlencoded::to_string([("cursor", cursor)]).unwrap_or_default(),
        )
    }

    /// The events API's filter for this form (422 with field errors, as the API's).
    pub fn filter(&self) -> Result<EventFilter, ApiError> {
        let mut pairs: Vec<(&str, String)> = self
            .name_list()
            .map(|name| ("name", name.to_owned()))
            .collect();
        if !self.player.is_empty() {
            pairs.push(("player_uuid", self.player.clone()));
        }
        for (key, value) in [("from", &self.from), ("to", &self.to)] {
            if !value.is_empty() {
                pairs.push((key, as_rfc3339(value)));
            }
        }
        if self.internal {
            pairs.push(("internal", "true".into()));
        }
        if let Some(cursor) = &self.cursor {
            pairs.push(("cursor", cursor.clone()));
        }
        pairs.push(("limit", PAGE_SIZE.to_string()));
        EventFilter::parse(&serde_urlencoded::to_string(pairs).unwrap_or_default())
    }

    /// The resume point, when it is a seq (422 otherwise, as a bad `Last-Event-ID`).
    pub fn after(&self) -> Result<Option<i64>, ApiError> {
        self.after
            .as_deref()
            .map(|after| {
                after.parse::<i64>().map_err(|_| {
                    ApiError::invalid_field(
                        "after",
                        "invalid_last_event_id",
                        "must be the id of an event from this stream",
                    )
                })
            })
            .transpose()
    }
}

/// `a&b`, leaving out an empty side.
fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}&{b}"),
    }
}

/// A `datetime-local` value (`2025-01-31T12:00` or with seconds) read as UTC, in RFC 3339; any
/// other text as it is, for the filter to accept (RFC 3339) or refuse.
pub fn as_rfc3339(value: &str) -> String {
    ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(value, format).ok())
        .map_or_else(
            || value.to_owned(),
            |local| {
                local
                    .and_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_apis_filter() -> Result<(), ApiError> {
        let form = FilterForm::parse(
            "names=quest_started%2C+quest_completed&player=069a79f4-44e9-4726-a5be-fca90e38aaf5\
             &from=2025-01-31T12%3A00&internal=on&other=x",
        );
        let filter = form.filter()?;
        assert_eq!(filter.names, ["quest_started", "quest_completed"]);
        assert!(filter.internal && filter.player_uuid.is_some());
        assert_eq!(
            filter.from.map(|t| t.to_rfc3339()),
            Some("2025-01-31T12:00:00+00:00".into())
        );
        assert_eq!(filter.limit, PAGE_SIZE);
        assert_eq!(
            form.query(),
            "names=quest_started%2C+quest_completed&player=069a79f4-44e9-4726-a5be-fca90e38aaf5\
             &from=2025-01-31T12%3A00&internal=true"
        );
        Ok(())
    }

    #[test]
    fn bad_input_is_the_apis_field_errors() {
        let form = FilterForm::parse("names=Bad+Name&player=nope&after=x");
        match form.filter() {
            Err(ApiError::Validation { errors, .. }) => {
                let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
                assert_eq!(fields, ["name", "name", "player_uuid"]);
            }
            other => panic!("expected field errors, got {other:?}"),
        }
        assert!(form.after().is_err());
        assert_eq!(
            FilterForm::parse("after=42").after().ok().flatten(),
            Some(42)
        );
    }

    #[test]
    fn an_empty_form_is_every_custom_event() -> Result<(), ApiError> {
        let form = FilterForm::parse("");
        assert_eq!(form.query(), "");
        assert_eq!(form.query_with_cursor("1_2"), "cursor=1_2");
        let filter = form.filter()?;
        assert!(filter.names.is_empty() && !filter.internal && filter.cursor.is_none());
        Ok(())
    }
}
