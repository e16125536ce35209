//! Keyset paging shared by every list: `?limit` and `?cursor` (parsed here, once), the opaque
//! cursor, and the SQL and page cut that go with them.

use crate::error::ApiError;
use chrono::{DateTime, Utc};
use shared::validation::FieldErrors;
use sqlx::{Postgres, QueryBuilder};
use std::fmt::Display;
use std::str::FromStr;

/// Default page size.
pub const DEFAULT_LIMIT: i64 = 50;
/// Largest page size.
pub const MAX_LIMIT: i64 = 500;

/// Where a page ends: the last item's time and its tie-breaker (`seq` for events, the row id
/// for histories); lists are ordered by both, descending, and the next page starts below it.
///
/// Encoded as `<time in Unix microseconds>_<tie-breaker>`; clients treat it as opaque.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeysetCursor<K> {
    /// The last item's time (microsecond precision, like PostgreSQL).
    pub at: DateTime<Utc>,
    /// The last item's tie-breaker.
    pub key: K,
}

impl<K: Display + FromStr> KeysetCursor<K> {
    /// The text form.
    pub fn encode(&self) -> String {
        format!("{}_{}", self.at.timestamp_micros(), self.key)
    }

    /// Reads the text form; `None` when it is not one, or names a time PostgreSQL cannot hold.
    pub fn parse(text: &str) -> Option<KeysetCursor<K>> {
        let (micros, key) = text.split_once('_')?;
        let micros: i64 = micros.parse().ok()?;
        // Roughly years 1200 BC to 11476 AD: every stored time, with room, and inside
        // `timestamptz`, whose bounds a forged cursor would otherwise hit as a 500.
        if !(-100_000_000_000_000_000..=300_000_000_000_000_000).contains(&micros) {
            return None;
        }
        Some(KeysetCursor {
            at: DateTime::from_timestamp_micros(micros)?,
            key: key.parse().ok()?,
        })
    }
}

/// The `key=value` pairs of a raw query string, in order (a key may repeat); 422
/// `malformed_query` when it is not URL-encoded.
pub fn query_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    serde_urlencoded::from_str(query).map_err(|_| {
        ApiError::invalid_field(
            "query",
            "malformed_query",
            "the query string is not URL-encoded",
        )
    })
}

/// `?limit` (1..=500, default 50) and `?cursor` of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest<K> {
    /// Page size.
    pub limit: i64,
    /// Continue after this position.
    pub cursor: Option<KeysetCursor<K>>,
}

impl<K> Default for PageRequest<K> {
    fn default() -> Self {
        PageRequest {
            limit: DEFAULT_LIMIT,
            cursor: None,
        }
    }
}

impl<K: Display + FromStr> PageRequest<K> {
    /// Parses a raw query string; other parameters are ignored.
    pub fn parse(query: &str) -> Result<PageRequest<K>, ApiError> {
        let mut page = PageRequest::default();
        let mut errors = FieldErrors::new();
        for (key, value) in query_pairs(query)? {
            page.take(&key, &value, &mut errors);
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(page)
    }

    /// Takes one query parameter if it is `limit` or `cursor` (then true), recording a bad
    /// value in `errors`: for lists whose query strings carry more than paging.
    pub fn take(&mut self, key: &str, value: &str, errors: &mut FieldErrors) -> bool {
        match key {
            "limit" => match value.parse::<i64>() {
                Ok(limit) if (1..=MAX_LIMIT).contains(&limit) => self.limit = limit,
                _ => errors.push(
                    "limit",
                    "out_of_range",
                    format!("must be an integer from 1 to {MAX_LIMIT}"),
                ),
            },
            "cursor" => match KeysetCursor::parse(value) {
                Some(cursor) => self.cursor = Some(cursor),
                None => errors.push(
                    "cursor",
                    "invalid_cursor",
                    "not a cursor from this API: pass next_cursor back unchanged",
                ),
            },
            _ => return false,
        }
        true
    }

    /// Cuts rows fetched by [`PageRequest::push_keyset`] to the page, with its `next_cursor`
    /// (None at the end).
    pub fn finish<T>(
        &self,
        mut rows: Vec<T>,
        position: impl Fn(&T) -> KeysetCursor<K>,
    ) -> (Vec<T>, Option<String>) {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = more
            .then(|| rows.last())
            .flatten()
            .map(|last| position(last).encode());
        (rows, next)
    }
}

impl<K> PageRequest<K>
where
    K: Copy + Send + 'static + sqlx::Type<Postgres> + for<'q> sqlx::Encode<'q, Postgres>,
{
    /// Appends ` AND (time, key) < (cursor)` when there is a cursor, then the newest-first
    /// order and a limit one past the page (that extra row says whether there is a next page).
    ///
    /// `time` and `key` are the columns of the list's `(…, time DESC, key DESC)` index, so a
    /// page is one index range however deep it is: no OFFSET, no sort.
    pub fn push_keyset(&self, sql: &mut QueryBuilder<'_, Postgres>, time: &str, key: &str) {
        if let Some(cursor) = self.cursor {
            sql.push(format!(" AND ({time}, {key}) < ("))
                .push_bind(cursor.at)
                .push(", ")
                .push_bind(cursor.key)
                .push(")");
        }
        sql.push(format!(" ORDER BY {time} DESC, {key} DESC LIMIT "))
            .push_bind(self.limit + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    type HistoryPage = PageRequest<Uuid>;

    fn field_codes(query: &str) -> Vec<(String, String)> {
        match HistoryPage::parse(query) {
            Err(ApiError::Validation { errors, .. }) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn cursors_round_trip_for_either_tie_breaker() {
        let at = DateTime::from_timestamp_micros(1_735_689_600_123_456).expect("valid");
        let by_seq = KeysetCursor {
            at,
            key: 42_001_i64,
        };
        assert_eq!(by_seq.encode(), "1735689600123456_42001");
        assert_eq!(KeysetCursor::parse(&by_seq.encode()), Some(by_seq));
        let by_id = KeysetCursor {
            at,
            key: Uuid::nil(),
        };
        assert_eq!(
            by_id.encode(),
            "1735689600123456_00000000-0000-0000-0000-000000000000"
        );
        assert_eq!(KeysetCursor::parse(&by_id.encode()), Some(by_id));
    }

    #[test]
    fn bad_cursors_are_refused() {
        for bad in [
            "",
            "abc",
            "1_",
            "_1",
            "1-2",
            "1_2_3",
            "x_1",
            "99999999999999999999_1",
            "-8000000000000000000_1",
            "8000000000000000000_1",
        ] {
            assert_eq!(KeysetCursor::<i64>::parse(bad), None, "{bad}");
        }
        for bad in ["_00000000-0000-0000-0000-000000000000", "1_2"] {
            assert_eq!(KeysetCursor::<Uuid>::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn limits_and_cursors_are_checked() -> Result<(), ApiError> {
        assert_eq!(HistoryPage::parse("")?.limit, DEFAULT_LIMIT);
        assert_eq!(HistoryPage::parse("limit=500&x=y")?.limit, 500);
        assert_eq!(HistoryPage::parse("limit=1")?.limit, 1);
        for bad in ["limit=0", "limit=501", "limit=ten", "limit=2.5", "limit=-1"] {
            assert_eq!(
                field_codes(bad),
                [("limit".into(), "out_of_range".into())],
                "{bad}"
            );
        }
        assert_eq!(
            field_codes("cursor=abc"),
            [("cursor".into(), "invalid_cursor".into())]
        );
        Ok(())
    }

    #[test]
    fn finish_reports_a_next_page_only_when_there_is_one() -> Result<(), ApiError> {
        let page = HistoryPage::parse("limit=2")?;
        let at = |i: i64| KeysetCursor {
            at: DateTime::from_timestamp_micros(i).expect("valid"),
            key: Uuid::nil(),
        };
        let (items, next) = page.finish(vec![3, 2, 1], |i| at(*i));
        assert_eq!((items, next), (vec![3, 2], Some(at(2).encode())));
        let (items, next) = page.finish(vec![3, 2], |i| at(*i));
        assert_eq!((items, next), (vec![3, 2], None));
        Ok(())
    }
}
