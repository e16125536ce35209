use super::*;
use crate::queries::retention::{ReturnMode, StartKind};
use crate::routes::retention::{Cohort, CohortReturn};

fn day(text: &str) -> NaiveDate {
    text.parse().expect("a test day")
}

#[test]
fn the_form_reads_every_field_and_links_a_cohort_with_them() {
    let filters = Filters::read(Some(
        "period=week&from=2025-03-03&to=2025-03-16&days=1%2C+7&mode=on_or_after\
         &start=quest_started&return=quest_completed&kind=recurring&cohort=2025-03-03",
    ));
    let request = filters.request().expect("a valid form");
    assert_eq!(request.period, Period::Week);
    assert_eq!(request.from, Some(day("2025-03-03")));
    assert_eq!(request.days, [1, 7]);
    assert_eq!(request.mode, ReturnMode::OnOrAfter);
    let events = request.events.expect("the event variant");
    assert_eq!(
        (
            events.start.as_str(),
            events.return_event.as_str(),
            events.kind
        ),
        ("quest_started", "quest_completed", StartKind::Recurring)
    );
    assert_eq!(filters.cohort, Some(day("2025-03-03")));
    assert_eq!(
        filters.link(day("2025-03-10")),
        "/analytics/retention?period=week&from=2025-03-03&to=2025-03-16&days=1%2C+7\
         &mode=on_or_after&start=quest_started&return=quest_completed&kind=recurring\
         &cohort=2025-03-10#cohort-players"
    );
}

#[test]
fn wrong_fields_are_said_in_the_forms_words() {
    let filters = Filters::read(Some("from=March&days=1,x&start=quest_started"));
    let errors = filters.request().err().unwrap_or_default();
    assert_eq!(errors.len(), 3, "{errors:?}");
    // Defaults: D1, D7, D30 by day.
    let request = Filters::read(None).request().expect("defaults");
    assert_eq!(
        (request.period, request.days),
        (Period::Day, vec![1, 7, 30])
    );
}

#[test]
fn heat_buckets_and_percentages() {
    let buckets: Vec<&str> = [0.0, 0.05, 0.1, 0.25, 0.5, 0.74, 0.75, 1.0]
        .into_iter()
        .map(heat)
        .collect();
    assert_eq!(
        buckets,
        [
            "heat-0", "heat-1", "heat-2", "heat-3", "heat-4", "heat-4", "heat-5", "heat-5"
        ]
    );
    assert_eq!(percent(1.0 / 3.0), "33.3%");
    assert_eq!(percent(0.5), "50%");
}

#[test]
fn the_average_curve_weighs_cohorts_by_size_and_skips_incomplete_cells() {
    let cell = |day, players, size: i64, complete| CohortReturn {
        day,
        players,
        fraction: players as f64 / size as f64,
        complete,
    };
    let result = RetentionResult {
        period: Period::Day,
        mode: ReturnMode::On,
        from: day("2025-03-01"),
        to: day("2025-03-02"),
        days: vec![1, 7],
        cohorts: vec![
            Cohort {
                start: day("2025-03-01"),
                end: day("2025-03-01"),
                size: 4,
                returned: vec![cell(1, 1, 4, true), cell(7, 2, 4, true)],
            },
            Cohort {
                start: day("2025-03-02"),
                end: day("2025-03-02"),
                size: 1,
                returned: vec![cell(1, 1, 1, true), cell(7, 0, 1, false)],
            },
        ],
    };
    let curves = curves(&result);
    assert_eq!(curves.x, [1, 7]);
    assert_eq!(curves.series[0].values, [Some(40.0), Some(50.0)]);
    // Latest cohort first; its unfinished day 7 is a gap.
    assert_eq!(curves.series[1].label, "2025-03-02");
    assert_eq!(curves.series[1].values, [Some(100.0), None]);
    assert_eq!(curves.series.len(), 3);
}
