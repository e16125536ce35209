//! The request's rules: one event name or kind, a property name that can be stored, a range
//! inside 1970..=9999 that holds at most [`MAX_HOURS`], [`MAX_DAYS`] or [`MAX_WEEKS`] buckets.

use super::{
    MAX_DAYS, MAX_HOURS, MAX_PROPERTY_CHARS, MAX_WEEKS, TrendBreakdown, TrendBucket, TrendKind,
    TrendMeasure, TrendRequest, TrendWhat,
};
use crate::error::ApiError;
use crate::queries::trends::{Breakdown, Bucket, Measure, Subject, TrendSpec};
use chrono::{DateTime, Duration, Utc};
use shared::event_name::EventName;
use shared::validation::{EARLIEST_QUERY_SECS, FieldErrors, LATEST_TIME_SECS};

/// The checked spec of `request`, or a 422 naming every field that is wrong.
pub(super) fn validate(request: TrendRequest, now: DateTime<Utc>) -> Result<TrendSpec, ApiError> {
    let mut errors = FieldErrors::new();
    let subject = match request.what {
        TrendWhat::Event(name) => {
            if let Err(error) = EventName::parse_lookup(&name) {
                errors.push("what.event", error.code(), error.to_string());
            }
            Subject::Events(vec![name])
        }
        TrendWhat::Kind(kind) => subject_of(kind),
    };
    let breakdown = match request.breakdown {
        None => Breakdown::None,
        Some(TrendBreakdown::Server) => Breakdown::Server,
        Some(TrendBreakdown::Property(property)) => {
            let chars = property.chars().count();
            if property.contains('\0') {
                errors.push(
                    "breakdown.property",
                    "invalid_characters",
                    shared::validation::NUL_MESSAGE,
                );
            } else if !(1..=MAX_PROPERTY_CHARS).contains(&chars) {
                errors.push(
                    "breakdown.property",
                    "invalid_length",
                    format!("a property name has 1 to {MAX_PROPERTY_CHARS} characters"),
                );
            }
            Breakdown::Property(property)
        }
    };
    let bucket = match request.bucket {
        TrendBucket::Hour => Bucket::Hour,
        TrendBucket::Day => Bucket::Day,
        TrendBucket::Week => Bucket::Week,
    };
    let to = request.to.unwrap_or(now);
    let from = request.from.unwrap_or_else(|| default_from(bucket, to));
    let mut bounds = FieldErrors::new();
    bounds.query_time("from", Some(from));
    bounds.query_time("to", Some(to));
    let in_range = match bounds.into_result() {
        Ok(()) => true,
        Err(found) => {
            for error in found {
                errors.push(&error.field, &error.code, error.message);
            }
            false
        }
    };
    let measure = match request.measure {
        TrendMeasure::Total => Measure::Total,
        TrendMeasure::Unique => Measure::Unique,
    };
    let spec = TrendSpec::new(
        subject,
        bucket,
        (from, to),
        breakdown,
        measure,
        request.compare,
    );
    if in_range {
        check_length(&mut errors, &spec, from, to);
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok(spec)
}

/// The event names (or the flags table) a kind counts.
fn subject_of(kind: TrendKind) -> Subject {
    let names = |names: &[&str]| Subject::Events(names.iter().map(|n| (*n).to_owned()).collect());
    match kind {
        TrendKind::Joins => names(&["session_join"]),
        TrendKind::Quits => names(&["session_quit"]),
        TrendKind::ChatMessages => names(&["chat_message"]),
        TrendKind::Commands => names(&["chat_command"]),
        TrendKind::Punishments => {
            names(&["punish_ban", "punish_mute", "punish_kick", "punish_warning"])
        }
        TrendKind::Flags => Subject::Flags,
    }
}

/// The default range: 24 hours, 30 days or 12 weeks before `to`, never before 1970.
fn default_from(bucket: Bucket, to: DateTime<Utc>) -> DateTime<Utc> {
    let length = match bucket {
        Bucket::Hour => Duration::hours(24),
        Bucket::Day => Duration::days(30),
        Bucket::Week => Duration::weeks(12),
    };
    let earliest =
        DateTime::<Utc>::from_timestamp(EARLIEST_QUERY_SECS, 0).unwrap_or(DateTime::<Utc>::MIN_UTC);
    to.checked_sub_signed(length)
        .filter(|from| *from >= earliest)
        .unwrap_or(earliest)
}

/// `from` before `to`, at most the bucket's limit of buckets, and whole buckets that end by
/// the last second of year 9999.
fn check_length(
    errors: &mut FieldErrors,
    spec: &TrendSpec,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) {
    if from >= to {
        errors.push("from", "out_of_range", "from must be before to");
        return;
    }
    let latest =
        DateTime::<Utc>::from_timestamp(LATEST_TIME_SECS, 0).unwrap_or(DateTime::<Utc>::MAX_UTC);
    if spec.to > latest + Duration::seconds(1) {
        errors.push(
            "to",
            "out_of_range",
            "the last bucket must end by 10000-01-01T00:00:00Z",
        );
        return;
    }
    let (limit, unit) = match spec.bucket {
        Bucket::Hour => (MAX_HOURS, "744 hour buckets (31 days)"),
        Bucket::Day => (MAX_DAYS, "366 day buckets"),
        Bucket::Week => (MAX_WEEKS, "106 week buckets"),
    };
    let buckets = (spec.to - spec.from).num_seconds() / spec.bucket.step().num_seconds();
    if usize::try_from(buckets).map_or(true, |b| b > limit) {
        errors.push(
            "to",
            "range_too_long",
            format!("a range holds at most {unit}; ask for a wider bucket or a shorter range"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn request(what: TrendWhat, bucket: TrendBucket, days: i64) -> TrendRequest {
        let to = Utc
            .with_ymd_and_hms(2026, 11, 24, 0, 0, 0)
            .single()
            .expect("time");
        TrendRequest {
            what,
            bucket,
            from: Some(to - Duration::days(days)),
            to: Some(to),
            breakdown: None,
            measure: TrendMeasure::Total,
            compare: false,
        }
    }

    fn codes(request: TrendRequest) -> Vec<String> {
        match validate(request, Utc::now()) {
            Ok(_) => Vec::new(),
            Err(ApiError::Validation { errors, .. }) => {
                errors.into_iter().map(|e| e.code).collect()
            }
            Err(other) => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn hour_buckets_cover_at_most_31_days_and_day_buckets_366() {
        let event = || TrendWhat::Event("quest_completed".into());
        assert!(codes(request(event(), TrendBucket::Hour, 31)).is_empty());
        assert_eq!(
            codes(request(event(), TrendBucket::Hour, 32)),
            ["range_too_long"]
        );
        assert!(codes(request(event(), TrendBucket::Day, 366)).is_empty());
        assert_eq!(
            codes(request(event(), TrendBucket::Day, 367)),
            ["range_too_long"]
        );
        assert!(codes(request(event(), TrendBucket::Week, 700)).is_empty());
        assert_eq!(
            codes(request(event(), TrendBucket::Week, 800)),
            ["range_too_long"]
        );
    }

    #[test]
    fn bad_names_properties_and_ranges_are_field_errors() {
        assert_eq!(
            codes(request(
                TrendWhat::Event("Bad Name".into()),
                TrendBucket::Day,
                1
            )),
            ["invalid_event_name"]
        );
        let mut nul = request(TrendWhat::Kind(TrendKind::Joins), TrendBucket::Day, 1);
        nul.breakdown = Some(TrendBreakdown::Property("a\0b".into()));
        assert_eq!(codes(nul), ["invalid_characters"]);
        let mut backwards = request(TrendWhat::Kind(TrendKind::Joins), TrendBucket::Day, 1);
        std::mem::swap(&mut backwards.from, &mut backwards.to);
        assert_eq!(codes(backwards), ["out_of_range"]);
        let mut late = request(TrendWhat::Kind(TrendKind::Joins), TrendBucket::Week, 1);
        late.to = DateTime::<Utc>::from_timestamp(LATEST_TIME_SECS, 0);
        late.from = late.to.map(|to| to - Duration::days(1));
        assert_eq!(codes(late), ["out_of_range"]);
    }

    #[test]
    fn the_document_holds_each_body_object_to_its_one_field() {
        let doc = crate::routes::openapi::document();
        let what = &doc["components"]["schemas"]["TrendWhat"]["oneOf"];
        assert_eq!(
            what[0]["properties"]["event"]["pattern"],
            "^[a-z0-9_]{1,64}$"
        );
        assert_eq!(
            what[1]["properties"].as_object().map(|p| p.len()),
            Some(1),
            "{what}"
        );
        let property = &doc["components"]["schemas"]["TrendBreakdown"]["oneOf"][1];
        assert_eq!(property["properties"]["property"]["maxLength"], 64);
        for branch in [&what[0], &what[1], property] {
            assert_eq!(branch["additionalProperties"], false, "{branch}");
        }
    }
}
