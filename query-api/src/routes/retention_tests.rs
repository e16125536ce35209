use super::*;

fn day(text: &str) -> NaiveDate {
    text.parse().expect("a test day")
}

fn errors(request: RetentionRequest) -> Vec<String> {
    match validate(request, day("2025-03-31")) {
        Ok(_) => Vec::new(),
        Err(ApiError::Validation { errors, .. }) => errors
            .iter()
            .map(|e| format!("{}:{}", e.field, e.code))
            .collect(),
        Err(other) => panic!("not a validation error: {other}"),
    }
}

#[test]
fn ranges_snap_to_whole_periods_and_default_to_recent_ones() {
    let today = day("2025-03-31");
    let spec = validate(RetentionRequest::default(), today).expect("defaults are valid");
    assert_eq!((spec.from, spec.to), (day("2025-03-02"), today));
    assert_eq!(spec.days, [1, 7, 30]);
    // Wednesday to Wednesday: Monday of the first week to Sunday of the last.
    let weeks = RetentionRequest {
        period: Period::Week,
        from: Some(day("2025-03-05")),
        to: Some(day("2025-03-12")),
        ..RetentionRequest::default()
    };
    let spec = validate(weeks, today).expect("valid");
    assert_eq!((spec.from, spec.to), (day("2025-03-03"), day("2025-03-16")));
    let months = RetentionRequest {
        period: Period::Month,
        from: Some(day("2024-02-29")),
        to: Some(day("2024-02-29")),
        days: vec![30, 1, 30, 0],
        ..RetentionRequest::default()
    };
    let spec = validate(months, today).expect("valid");
    assert_eq!((spec.from, spec.to), (day("2024-02-01"), day("2024-02-29")));
    assert_eq!(spec.days, [0, 1, 30], "ascending, each once");
}

#[test]
fn every_bad_field_is_named_at_once() {
    assert_eq!(
        errors(RetentionRequest {
            from: Some(day("2025-04-02")),
            to: Some(day("2025-04-01")),
            days: vec![1, 366, -1],
            events: Some(RetentionEvents {
                start: "session_join".into(),
                return_event: "Bad Name".into(),
                kind: StartKind::Recurring,
            }),
            ..RetentionRequest::default()
        }),
        [
            "from:out_of_range",
            "days[1]:out_of_range",
            "days[2]:out_of_range",
            "events.start:reserved_prefix",
            "events.return:invalid_event_name"
        ]
    );
    assert_eq!(
        errors(RetentionRequest {
            days: Vec::new(),
            ..RetentionRequest::default()
        }),
        ["days:invalid_length"]
    );
    // 400 days is the most; 401 is refused, before any query.
    let long = |to: &str| RetentionRequest {
        from: Some(day("2024-01-01")),
        to: Some(day(to)),
        ..RetentionRequest::default()
    };
    assert_eq!(errors(long("2025-02-03")), Vec::<String>::new());
    assert_eq!(errors(long("2025-02-04")), ["to:out_of_range"]);
    // The widest dates are no error and no overflow (weeks of year 9999 included).
    assert_eq!(
        errors(RetentionRequest {
            period: Period::Week,
            from: Some(day("9999-12-01")),
            to: Some(day("9999-12-31")),
            days: vec![365],
            ..RetentionRequest::default()
        }),
        Vec::<String>::new()
    );
}

#[test]
fn cells_are_fractions_of_the_cohort_and_complete_once_day_n_is_over() {
    let spec = validate(
        RetentionRequest {
            from: Some(day("2025-03-01")),
            to: Some(day("2025-03-02")),
            days: vec![1, 7],
            ..RetentionRequest::default()
        },
        day("2025-03-31"),
    )
    .expect("valid");
    let counts = vec![
        CohortCounts {
            start: day("2025-03-01"),
            size: 4,
            returned: vec![1, 3],
        },
        CohortCounts {
            start: day("2025-03-02"),
            size: 0,
            returned: vec![0, 0],
        },
    ];
    // On 2025-03-09, day 7 of the 03-02 cohort (03-09) is today: not complete yet.
    let result = shape(&spec, counts, day("2025-03-09"));
    let cells: Vec<(i32, i64, f64, bool)> = result
        .cohorts
        .iter()
        .flat_map(|c| {
            c.returned
                .iter()
                .map(|r| (r.day, r.players, r.fraction, r.complete))
        })
        .collect();
    assert_eq!(
        cells,
        [
            (1, 1, 0.25, true),
            (7, 3, 0.75, true),
            (1, 0, 0.0, true),
            (7, 0, 0.0, false)
        ]
    );
}
