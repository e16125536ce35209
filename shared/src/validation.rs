//! Field-level validation errors, collected per record, and the shared rules every record and
//! admin body uses, so that whatever is accepted can also be stored (`docs/rate-limits.md`,
//! "What ingest accepts"):
//!
//! - text holds no NUL (U+0000): PostgreSQL `text` and `jsonb` cannot store it;
//! - integers fit their column (`integer` is 32 bits);
//! - numbers are finite (JSON cannot carry NaN, but a client's `1e308` is still a number);
//! - timestamps lie in a window PostgreSQL (and chrono) can hold with room to spare, so adding
//!   a window, an interval or a day of retention to them can never overflow.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How far into the future a client timestamp may be (contract §1).
pub const MAX_CLOCK_SKEW: Duration = Duration::minutes(10);

/// The earliest time a record may carry: 2000-01-01T00:00:00Z (Unix seconds). No game-server
/// event predates it, and a floor keeps `time - retention` arithmetic far from any limit.
pub const EARLIEST_RECORD_SECS: i64 = 946_684_800;

/// The latest expiry (and query bound) accepted: 9999-12-31T23:59:59Z (Unix seconds). Four-digit
/// years print as RFC 3339, and PostgreSQL's `timestamptz` reaches year 294276, so adding any
/// window to it stays in range.
pub const LATEST_TIME_SECS: i64 = 253_402_300_799;

/// The earliest `from`/`to` a query may name: 1970-01-01T00:00:00Z (Unix seconds).
pub const EARLIEST_QUERY_SECS: i64 = 0;

/// One problem with one field of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FieldError {
    /// The field's name (a dotted path for nested fields).
    pub field: String,
    /// Stable snake_case code, e.g. `required`, `out_of_range`, `reserved_prefix`.
    pub code: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The problems found in one record; empty means valid.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem.
    pub fn push(&mut self, field: &str, code: &str, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_owned(),
            code: code.to_owned(),
            message: message.into(),
        });
    }

    /// `Ok(())` when nothing was recorded.
    pub fn into_result(self) -> Result<(), Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }

    /// Checks an optional text field: its length in characters, and that it holds no NUL.
    ///
    /// Lengths count characters (like `char_length` in the schema's CHECKs); every limit used
    /// on an indexed column is small enough that even 4-byte characters keep the index entry
    /// far below PostgreSQL's ~2,700-byte btree limit (see `records` for the table).
    pub fn text(&mut self, field: &str, value: Option<&str>, min: usize, max: usize) {
        if let Some(value) = value {
            let len = value.chars().count();
            if len < min || len > max {
                self.push(
                    field,
                    "invalid_length",
                    format!("must be {min} to {max} characters (got {len})"),
                );
            }
            if value.contains('\0') {
                self.push(field, "invalid_characters", NUL_MESSAGE);
            }
        }
    }

    /// Checks that a number is finite and within `min..=max`.
    pub fn number(&mut self, field: &str, value: Option<f64>, min: f64, max: f64) {
        if let Some(value) = value
            && (!value.is_finite() || value < min || value > max)
        {
            self.push(
                field,
                "out_of_range",
                format!("must be between {min} and {max}"),
            );
        }
    }

    /// Checks that an integer is within `min..=max` (e.g. `0..=i32::MAX` for an `integer`
    /// column).
    pub fn integer_range(&mut self, field: &str, value: Option<i64>, min: i64, max: i64) {
        if let Some(value) = value
            && !(min..=max).contains(&value)
        {
            self.push(
                field,
                "out_of_range",
                format!("must be an integer from {min} to {max}"),
            );
        }
    }

    /// Checks when a record says something happened: from 2000-01-01T00:00:00Z
    /// ([`EARLIEST_RECORD_SECS`], else `out_of_range`) to [`MAX_CLOCK_SKEW`] ahead of `now`
    /// (else `in_future`).
    pub fn record_time(&mut self, field: &str, value: Option<DateTime<Utc>>, now: DateTime<Utc>) {
        let Some(value) = value else { return };
        if value.timestamp() < EARLIEST_RECORD_SECS {
            self.push(
                field,
                "out_of_range",
                "must not be before 2000-01-01T00:00:00Z",
            );
        } else if value > now + MAX_CLOCK_SKEW {
            self.push(
                field,
                "in_future",
                "must not be more than 10 minutes in the future; check the server clock",
            );
        }
    }

    /// Checks an expiry: from 2000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (`out_of_range`).
    pub fn expiry(&mut self, field: &str, value: Option<DateTime<Utc>>) {
        if let Some(value) = value
            && !(EARLIEST_RECORD_SECS..=LATEST_TIME_SECS).contains(&value.timestamp())
        {
            self.push(
                field,
                "out_of_range",
                "must be between 2000-01-01T00:00:00Z and 9999-12-31T23:59:59Z",
            );
        }
    }

    /// Checks a query's time bound: from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z
    /// (`out_of_range`).
    pub fn query_time(&mut self, field: &str, value: Option<DateTime<Utc>>) {
        if let Some(value) = value
            && !(EARLIEST_QUERY_SECS..=LATEST_TIME_SECS).contains(&value.timestamp())
        {
            self.push(
                field,
                "out_of_range",
                "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z",
            );
        }
    }
}

/// The message of an `invalid_characters` error.
pub const NUL_MESSAGE: &str = "must not contain the NUL character (U+0000), which cannot be stored";

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(check: impl FnOnce(&mut FieldErrors)) -> Vec<String> {
        let mut errors = FieldErrors::new();
        check(&mut errors);
        errors
            .into_result()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.code)
            .collect()
    }

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339)
            .expect("valid timestamp")
            .with_timezone(&Utc)
    }

    #[test]
    fn the_time_constants_are_the_documented_instants() {
        let earliest = DateTime::from_timestamp(EARLIEST_RECORD_SECS, 0).expect("in range");
        let latest = DateTime::from_timestamp(LATEST_TIME_SECS, 0).expect("in range");
        assert_eq!(earliest, at("2000-01-01T00:00:00Z"));
        assert_eq!(latest, at("9999-12-31T23:59:59Z"));
        assert_eq!(EARLIEST_QUERY_SECS, DateTime::UNIX_EPOCH.timestamp());
    }

    #[test]
    fn text_refuses_nul_anywhere_and_counts_characters_not_bytes() {
        assert_eq!(
            codes(|e| e.text("f", Some("a\0b"), 1, 64)),
            ["invalid_characters"]
        );
        assert_eq!(
            codes(|e| e.text("f", Some("\0"), 1, 64)),
            ["invalid_characters"]
        );
        assert_eq!(
            codes(|e| e.text("f", Some(&"\0".repeat(65)), 1, 64)),
            ["invalid_length", "invalid_characters"]
        );
        // Hostile but storable: RTL override, emoji, other controls, 4-byte characters.
        let storable = "\u{202e}\u{1f600}\u{1}\u{7f}\u{feff}\u{10ffff}";
        assert!(codes(|e| e.text("f", Some(storable), 1, 64)).is_empty());
        assert!(codes(|e| e.text("f", Some(&"\u{1f600}".repeat(64)), 1, 64)).is_empty());
        assert_eq!(
            codes(|e| e.text("f", Some(&"\u{1f600}".repeat(65)), 1, 64)),
            ["invalid_length"]
        );
        assert!(codes(|e| e.text("f", None, 1, 64)).is_empty());
    }

    #[test]
    fn integers_must_fit_their_range() {
        let int4 = |v: i64| codes(|e| e.integer_range("n", Some(v), 0, i64::from(i32::MAX)));
        assert!(int4(0).is_empty());
        assert!(int4(i64::from(i32::MAX)).is_empty());
        assert_eq!(int4(i64::from(i32::MAX) + 1), ["out_of_range"]);
        assert_eq!(int4(1 << 40), ["out_of_range"]);
        assert_eq!(int4(i64::MAX), ["out_of_range"]);
        assert_eq!(int4(-1), ["out_of_range"]);
        assert_eq!(int4(i64::MIN), ["out_of_range"]);
    }

    #[test]
    fn numbers_must_be_finite_and_in_range() {
        let tps = |v: f64| codes(|e| e.number("tps", Some(v), 0.0, 1000.0));
        assert!(tps(0.0).is_empty());
        assert!(tps(1000.0).is_empty());
        assert_eq!(tps(1e308), ["out_of_range"]);
        assert_eq!(tps(f64::INFINITY), ["out_of_range"]);
        assert_eq!(tps(f64::NAN), ["out_of_range"]);
        assert_eq!(tps(-f64::MIN_POSITIVE), ["out_of_range"]);
    }

    #[test]
    fn record_times_lie_between_2000_and_ten_minutes_ahead() {
        let now = at("2026-06-01T12:00:00Z");
        let time = |t: &str| codes(|e| e.record_time("at", Some(at(t)), now));
        assert!(time("2000-01-01T00:00:00Z").is_empty());
        assert!(time("2026-06-01T12:10:00Z").is_empty());
        assert_eq!(time("1999-12-31T23:59:59.999Z"), ["out_of_range"]);
        assert_eq!(time("0000-01-01T00:00:00Z"), ["out_of_range"]);
        assert_eq!(time("0000-01-01T00:00:00+23:59"), ["out_of_range"]);
        assert_eq!(time("2026-06-01T12:10:01Z"), ["in_future"]);
        assert_eq!(time("9999-12-31T23:59:59-23:59"), ["in_future"]);
        assert!(codes(|e| e.record_time("at", None, now)).is_empty());
    }

    #[test]
    fn expiries_and_query_bounds_stay_inside_four_digit_years() {
        let expiry = |t: &str| codes(|e| e.expiry("expires_at", Some(at(t))));
        assert!(expiry("2000-01-01T00:00:00Z").is_empty());
        assert!(expiry("9999-12-31T23:59:59.999Z").is_empty());
        assert_eq!(expiry("9999-12-31T23:59:59-00:01"), ["out_of_range"]);
        assert_eq!(expiry("1999-12-31T23:59:59Z"), ["out_of_range"]);
        let query = |t: &str| codes(|e| e.query_time("from", Some(at(t))));
        assert!(query("1970-01-01T00:00:00Z").is_empty());
        assert!(query("9999-12-31T23:59:59Z").is_empty());
        assert_eq!(query("1969-12-31T23:59:59Z"), ["out_of_range"]);
        assert_eq!(query("0000-01-01T00:00:00Z"), ["out_of_range"]);
        assert_eq!(query("9999-12-31T23:59:59-01:00"), ["out_of_range"]);
    }
}
