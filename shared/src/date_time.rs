//! Request times: every spelling RFC 3339's `date-time` admits, with a leap second folded into
//! the instant after it.
//!
//! chrono already reads what the format allows (`T` or `t`, `Z` or `z` or any `±hh:mm`
//! offset, a fraction of any length, read to the nanosecond). It also reads a leap second
//! (`23:59:60Z`), but keeps it as a 61st second that prints back as `:60` and that every later
//! step (the event log, the projector, PostgreSQL, which reads it as the next minute) would
//! have to agree on. [`deserialize`] folds it on receipt: `23:59:60.5Z` is `00:00:00.5Z` of
//! the next day, the instant PostgreSQL stores for it, so what ingest logs, answers and stores
//! is one ordinary time.
//!
//! ```
//! #[derive(serde::Deserialize)]
//! struct Sent {
//!     #[serde(default, deserialize_with = "shared::date_time::deserialize")]
//!     at: Option<chrono::DateTime<chrono::Utc>>,
//! }
//! let sent: Sent = serde_json::from_str(r#"{"at": "2016-12-31t23:59:60.25z"}"#).expect("leap");
//! assert_eq!(sent.at.map(|t| t.to_rfc3339()).as_deref(), Some("2017-01-01T00:00:00.250+00:00"));
//! ```

use chrono::{DateTime, Duration, Timelike, Utc};
use serde::{Deserialize, Deserializer};

/// Decodes a time (or an optional one), folding a leap second into the next; for
/// `#[serde(deserialize_with = "...")]` (an `Option` also needs `#[serde(default)]`).
pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Times,
{
    T::deserialize_folded(deserializer)
}

/// A type [`deserialize`] can decode: `DateTime<Utc>` or an `Option` of it.
pub trait Times: Sized {
    /// Decodes `Self` with every leap second folded.
    fn deserialize_folded<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

impl Times for DateTime<Utc> {
    fn deserialize_folded<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        DateTime::<Utc>::deserialize(deserializer).map(fold_leap_second)
    }
}

impl Times for Option<DateTime<Utc>> {
    fn deserialize_folded<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<DateTime<Utc>>::deserialize(deserializer).map(|t| t.map(fold_leap_second))
    }
}

/// A leap second (chrono's nanosecond count of a second or more) as the instant one second
/// after the 59th, that is the next minute's first; any other time as it is.
pub fn fold_leap_second(time: DateTime<Utc>) -> DateTime<Utc> {
    let nanos = time.nanosecond();
    if nanos < 1_000_000_000 {
        return time;
    }
    time.with_nanosecond(nanos - 1_000_000_000)
        .and_then(|t| t.checked_add_signed(Duration::seconds(1)))
        .unwrap_or(time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Sent {
        #[serde(default, deserialize_with = "deserialize")]
        at: Option<DateTime<Utc>>,
    }

    fn read(text: &str) -> Result<String, String> {
        let json = serde_json::json!({ "at": text });
        Sent::deserialize(json)
            .map(|s| s.at.map(|t| t.to_rfc3339()).unwrap_or_default())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_rfc3339_spelling_is_read() {
        let noon = Ok("2026-06-01T12:00:00+00:00".to_owned());
        for text in [
            "2026-06-01T12:00:00Z",
            "2026-06-01t12:00:00z",
            "2026-06-01T12:00:00+00:00",
            "2026-06-01T12:00:00-00:00",
            "2026-06-01T17:30:00+05:30",
            "2026-06-01T07:00:00-05:00",
            "2026-06-02T11:59:00+23:59",
            "2026-06-01T12:00:00.000000000000Z",
        ] {
            assert_eq!(read(text), noon, "{text}");
        }
        assert_eq!(
            read("2026-06-01T12:00:00.123456789123Z"),
            Ok("2026-06-01T12:00:00.123456789+00:00".to_owned())
        );
        assert_eq!(
            read("2026-06-01T12:00:00.1Z"),
            Ok("2026-06-01T12:00:00.100+00:00".to_owned())
        );
    }

    #[test]
    fn a_leap_second_is_the_next_minutes_first_instant() {
        assert_eq!(
            read("2016-12-31T23:59:60Z"),
            Ok("2017-01-01T00:00:00+00:00".to_owned())
        );
        assert_eq!(
            read("2017-01-01T08:59:60.5+09:00"),
            Ok("2017-01-01T00:00:00.500+00:00".to_owned())
        );
    }

    #[test]
    fn what_is_not_a_date_time_is_refused() {
        for text in [
            "2026-06-01T12:99:00Z",
            "2026-06-01T12:00:61Z",
            "2026-06-01T12:00:00",
            "2026-13-01T12:00:00Z",
            "yesterday",
        ] {
            assert!(read(text).is_err(), "{text}");
        }
        assert!(Sent::deserialize(serde_json::json!({"at": null})).is_ok_and(|s| s.at.is_none()));
        assert!(Sent::deserialize(serde_json::json!({})).is_ok_and(|s| s.at.is_none()));
    }
}
