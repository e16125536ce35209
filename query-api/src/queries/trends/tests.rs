use super::*;
use chrono::TimeZone;

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("valid time")
}

#[test]
fn weeks_start_on_monday_at_midnight_utc() {
    // 2026-11-22 is a Sunday; its ISO week began on Monday 2026-11-16.
    assert_eq!(
        Bucket::Week.floor(at(2026, 11, 22, 23, 59)),
        at(2026, 11, 16, 0, 0)
    );
    assert_eq!(
        Bucket::Week.floor(at(2026, 11, 23, 0, 0)),
        at(2026, 11, 23, 0, 0)
    );
    assert_eq!(
        Bucket::Week.ceil(at(2026, 11, 23, 0, 1)),
        at(2026, 11, 30, 0, 0)
    );
    // Across a year end: 2027-01-01 is a Friday of the week of Monday 2026-12-28.
    assert_eq!(
        Bucket::Week.floor(at(2027, 1, 1, 12, 0)),
        at(2026, 12, 28, 0, 0)
    );
}

#[test]
fn days_and_hours_floor_and_ceil_in_utc() {
    assert_eq!(
        Bucket::Day.floor(at(2026, 11, 3, 23, 59)),
        at(2026, 11, 3, 0, 0)
    );
    assert_eq!(
        Bucket::Day.ceil(at(2026, 11, 3, 0, 0)),
        at(2026, 11, 3, 0, 0)
    );
    assert_eq!(
        Bucket::Day.ceil(at(2026, 11, 3, 0, 1)),
        at(2026, 11, 4, 0, 0)
    );
    assert_eq!(
        Bucket::Hour.floor(at(2026, 11, 3, 7, 59)),
        at(2026, 11, 3, 7, 0)
    );
}

#[test]
fn the_range_widens_to_whole_buckets_and_the_previous_period_is_as_long() {
    let spec = TrendSpec::new(
        Subject::Flags,
        Bucket::Day,
        (at(2026, 11, 3, 12, 0), at(2026, 11, 5, 1, 0)),
        Breakdown::None,
        Measure::Total,
        true,
    );
    assert_eq!(spec.from, at(2026, 11, 3, 0, 0));
    assert_eq!(spec.to, at(2026, 11, 6, 0, 0));
    assert_eq!(
        spec.buckets(),
        vec![
            at(2026, 11, 3, 0, 0),
            at(2026, 11, 4, 0, 0),
            at(2026, 11, 5, 0, 0)
        ]
    );
    assert_eq!(spec.previous_from(), at(2026, 10, 31, 0, 0));
}

#[test]
fn only_property_breakdowns_and_hourly_or_per_server_uniques_read_raw_events() {
    let spec = |measure, bucket, breakdown| {
        TrendSpec::new(
            Subject::Events(vec!["quest".into()]),
            bucket,
            (at(2026, 11, 1, 0, 0), at(2026, 11, 2, 0, 0)),
            breakdown,
            measure,
            false,
        )
    };
    use sql::{Source, source};
    assert_eq!(
        source(&spec(Measure::Total, Bucket::Day, Breakdown::None)),
        Source::Hours
    );
    assert_eq!(
        source(&spec(Measure::Total, Bucket::Hour, Breakdown::Server)),
        Source::Hours
    );
    assert_eq!(
        source(&spec(Measure::Unique, Bucket::Week, Breakdown::None)),
        Source::PlayerDays
    );
    assert_eq!(
        source(&spec(Measure::Unique, Bucket::Hour, Breakdown::None)),
        Source::Events
    );
    assert_eq!(
        source(&spec(Measure::Unique, Bucket::Day, Breakdown::Server)),
        Source::Events
    );
    assert_eq!(
        source(&spec(
            Measure::Total,
            Bucket::Day,
            Breakdown::Property("map".into())
        )),
        Source::Events
    );
}
