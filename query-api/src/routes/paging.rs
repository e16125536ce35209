//! Keyset paging shared by every list: page-size bounds and the opaque cursor.

use chrono::{DateTime, Utc};
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
