//! The query string of the events list, and its paging cursor.

use crate::error::ApiError;
use crate::routes::paging::{PageRequest, query_pairs};
use chrono::{DateTime, Utc};
use shared::event_name::EventName;
use shared::validation::FieldErrors;
use uuid::Uuid;

pub use crate::routes::paging::{DEFAULT_LIMIT, MAX_LIMIT};

/// Most `name` filters in one request.
pub const MAX_NAMES: usize = 50;

/// Where an events page ends: the last item's `occurred_at` and `seq`.
pub type Cursor = crate::routes::paging::KeysetCursor<i64>;

/// The filters of one events query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter {
    /// Event names to include (any of them); empty means all.
    pub names: Vec<String>,
    /// Only this player.
    pub player_uuid: Option<Uuid>,
    /// occurred_at >= from.
    pub from: Option<DateTime<Utc>>,
    /// occurred_at < to.
    pub to: Option<DateTime<Utc>>,
    /// Include internal events.
    pub internal: bool,
    /// Page size, 1..=500.
    pub limit: i64,
    /// Continue after this position.
    pub cursor: Option<Cursor>,
}

/// Accepts RFC 3339; a `+` offset that a form decoder turned into a space is put back.
fn parse_time(value: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(value)
        .or_else(|_| DateTime::parse_from_rfc3339(&value.replace(' ', "+")))
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl EventFilter {
    /// Whether a live event passes the filters: the stream's counterpart of the list's SQL.
    pub fn matches(&self, event: &shared::timeline::TimelineEvent) -> bool {
        (self.internal || !event.is_internal)
            && (self.names.is_empty() || self.names.contains(&event.name))
            && self
                .player_uuid
                .is_none_or(|player| event.player_uuid == Some(player))
            && self.from.is_none_or(|from| event.occurred_at >= from)
            && self.to.is_none_or(|to| event.occurred_at < to)
    }

    /// The filter's `limit` and `cursor` as a page, for [`PageRequest::push_keyset`] and
    /// [`PageRequest::finish`].
    pub fn page(&self) -> PageRequest<i64> {
        PageRequest {
            limit: self.limit,
            cursor: self.cursor,
        }
    }
}

impl EventFilter {
    /// Parses a raw query string (`name` may repeat; unknown parameters are ignored).
    pub fn parse(query: &str) -> Result<EventFilter, ApiError> {
        let mut filter = EventFilter {
            names: Vec::new(),
            player_uuid: None,
            from: None,
            to: None,
            internal: false,
            limit: DEFAULT_LIMIT,
            cursor: None,
        };
        let mut page = PageRequest::default();
        let mut errors = FieldErrors::new();
        for (key, value) in query_pairs(query)? {
            if page.take(&key, &value, &mut errors) {
                continue;
            }
            match key.as_str() {
                // Reserved prefixes are fine: `internal=true` lists the service's own events.
                "name" => match EventName::parse_lookup(&value) {
                    Ok(name) => filter.names.push(name.into()),
                    Err(error) => errors.push("name", error.code(), error.to_string()),
                },
                "player_uuid" => match Uuid::parse_str(&value) {
                    Ok(uuid) => filter.player_uuid = Some(uuid),
                    Err(_) => errors.push("player_uuid", "invalid_uuid", "not a UUID"),
                },
                "from" | "to" => match parse_time(&value) {
                    Some(t) if key == "from" => filter.from = Some(t),
                    Some(t) => filter.to = Some(t),
                    None => errors.push(
                        &key,
                        "invalid_timestamp",
                        "not an RFC 3339 timestamp (e.g. 2025-01-31T12:00:00Z)",
                    ),
                },
                "internal" => match value.as_str() {
                    "true" | "1" => filter.internal = true,
                    "false" | "0" => filter.internal = false,
                    _ => errors.push("internal", "invalid_boolean", "must be true or false"),
                },
                _ => {}
            }
        }
        (filter.limit, filter.cursor) = (page.limit, page.cursor);
        if filter.names.len() > MAX_NAMES {
            errors.push("name", "too_many", format!("at most {MAX_NAMES} names"));
        }
        // Bounded like every stored time (shared::validation), so no bound reaches the edge of
        // what PostgreSQL or chrono can represent.
        errors.query_time("from", filter.from);
        errors.query_time("to", filter.to);
        if let (Some(from), Some(to)) = (filter.from, filter.to)
            && from > to
        {
            errors.push("from", "out_of_range", "from must not be after to");
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_codes(query: &str) -> Vec<(String, String)> {
        match EventFilter::parse(query) {
            Err(ApiError::Validation { errors, .. }) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn bad_cursors_are_field_errors() {
        assert_eq!(
            field_codes("cursor=nope"),
            [("cursor".into(), "invalid_cursor".into())]
        );
    }

    #[test]
    fn internal_names_can_be_looked_up() -> Result<(), ApiError> {
        let f = EventFilter::parse("name=session_start&name=chat_message&internal=true")?;
        assert_eq!(f.names, ["session_start", "chat_message"]);
        Ok(())
    }

    #[test]
    fn defaults_and_repeated_names() -> Result<(), ApiError> {
        let f = EventFilter::parse("")?;
        assert_eq!(
            (f.limit, f.internal, f.names.len()),
            (DEFAULT_LIMIT, false, 0)
        );
        let f = EventFilter::parse("name=a&name=level_up&internal=true&limit=500&other=x")?;
        assert_eq!(f.names, ["a", "level_up"]);
        assert!(f.internal);
        assert_eq!(f.limit, 500);
        Ok(())
    }

    #[test]
    fn timestamps_with_offsets() -> Result<(), ApiError> {
        let f =
            EventFilter::parse("from=2025-01-01T01:00:00%2B01:00&to=2025-01-02T00:00:00+01:00")?;
        assert_eq!(
            f.from.map(|t| t.to_rfc3339()),
            Some("2025-01-01T00:00:00+00:00".into())
        );
        assert_eq!(
            f.to.map(|t| t.to_rfc3339()),
            Some("2025-01-01T23:00:00+00:00".into())
        );
        Ok(())
    }

    #[test]
    fn invalid_parameters_are_field_errors() {
        assert_eq!(
            field_codes("limit=0"),
            [("limit".into(), "out_of_range".into())]
        );
        assert_eq!(
            field_codes("limit=501"),
            [("limit".into(), "out_of_range".into())]
        );
        assert_eq!(
            field_codes("limit=ten"),
            [("limit".into(), "out_of_range".into())]
        );
        assert_eq!(
            field_codes("player_uuid=x"),
            [("player_uuid".into(), "invalid_uuid".into())]
        );
        assert_eq!(
            field_codes("from=yesterday"),
            [("from".into(), "invalid_timestamp".into())]
        );
        assert_eq!(
            field_codes("name=Bad-Name"),
            [("name".into(), "invalid_event_name".into())]
        );
        assert_eq!(
            field_codes("internal=maybe"),
            [("internal".into(), "invalid_boolean".into())]
        );
        assert_eq!(
            field_codes("from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z"),
            [("from".into(), "out_of_range".into())]
        );
    }

    #[test]
    fn time_bounds_outside_1970_to_9999_are_out_of_range() -> Result<(), ApiError> {
        assert_eq!(
            field_codes("from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59-01:00"),
            [
                ("from".into(), "out_of_range".into()),
                ("to".into(), "out_of_range".into())
            ]
        );
        assert_eq!(
            field_codes("to=1969-12-31T23:59:59Z"),
            [("to".into(), "out_of_range".into())]
        );
        let f = EventFilter::parse("from=1970-01-01T00:00:00Z&to=9999-12-31T23:59:59Z")?;
        assert_eq!(
            f.to.map(|t| t.to_rfc3339()),
            Some("9999-12-31T23:59:59+00:00".into())
        );
        Ok(())
    }

    /// The stream's filter keeps the list's SQL bounds: `from` inclusive, `to` exclusive,
    /// internal events only when asked, any of the names, only the player.
    #[test]
    fn matches_keeps_the_lists_bounds() -> Result<(), ApiError> {
        let at = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&Utc))
                .expect("valid")
        };
        let player = Uuid::from_u128(7);
        let event = |name: &str, internal: bool, time: &str| shared::timeline::TimelineEvent {
            account_id: Uuid::nil(),
            id: Uuid::nil(),
            seq: 1,
            name: name.into(),
            is_internal: internal,
            player_uuid: Some(player),
            server_id: None,
            properties: "{}".into(),
            occurred_at: at(time),
            received_at: at(time),
        };
        let f = EventFilter::parse(
            "name=level_up&name=session_start&from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z",
        )?;
        assert!(f.matches(&event("level_up", false, "2025-01-01T00:00:00Z")));
        assert!(!f.matches(&event("level_up", false, "2025-01-02T00:00:00Z")));
        assert!(!f.matches(&event("quest_done", false, "2025-01-01T12:00:00Z")));
        assert!(!f.matches(&event("session_start", true, "2025-01-01T12:00:00Z")));
        let f = EventFilter::parse("internal=true&name=session_start")?;
        assert!(f.matches(&event("session_start", true, "2025-01-01T12:00:00Z")));
        let other = EventFilter::parse(&format!("player_uuid={}", Uuid::from_u128(8)))?;
        assert!(!other.matches(&event("level_up", false, "2025-01-01T12:00:00Z")));
        Ok(())
    }
}
