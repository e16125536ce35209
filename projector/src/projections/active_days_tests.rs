use super::*;
use chrono::TimeZone;
use shared::envelope::{LogMessage, Logged};
use shared::records::Session;

fn time(text: &str) -> DateTime<Utc> {
    text.parse().expect("a test time")
}

fn day(text: &str) -> NaiveDate {
    text.parse().expect("a test day")
}

fn session(player: Uuid, event: &str, at: Option<&str>) -> Logged<Session> {
    let at = at.map_or(String::new(), |t| format!(r#","at":"{t}""#));
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(&format!(
            r#"{{"server_id":"{}","player_uuid":"{player}","player_name":"P",
                "event":"{event}"{at}}}"#,
            Uuid::from_u128(5)
        ))
        .expect("a session record"),
    }
}

#[test]
fn days_are_utc_days_of_each_records_own_time_counted_once() {
    let (account, p) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let received = Utc
        .with_ymd_and_hms(2025, 3, 4, 8, 0, 0)
        .single()
        .expect("a time");
    let message = Positioned {
        stream_sequence: 1,
        message: LogMessage::new(
            account,
            received,
            RecordBatch::Session(vec![
                session(p, "join", Some("2025-03-01T23:59:00Z")),
                session(p, "quit", Some("2025-03-02T00:01:00Z")),
                // Twice on one day: one row.
                session(p, "join", Some("2025-03-02T18:00:00Z")),
                // A +01:00 time is the UTC day it falls on.
                session(p, "quit", Some("2025-03-03T00:30:00+01:00")),
                // No time of its own: the time of receipt.
                session(p, "join", None),
            ]),
        ),
    };
    let days: Vec<NaiveDate> = active_days(&[&message])
        .into_iter()
        .map(|(_, _, d)| d)
        .collect();
    assert_eq!(
        days,
        [day("2025-03-01"), day("2025-03-02"), day("2025-03-04")]
    );
    assert_eq!(
        time("2025-03-03T00:30:00+01:00").date_naive(),
        day("2025-03-02")
    );
}

#[test]
fn spans_widen_and_a_late_earlier_day_renumbers_the_player() {
    let (a, p, q) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
    let stored = BTreeMap::from([(
        (a, p),
        Span {
            first_day: day("2025-03-05"),
            last_day: day("2025-03-06"),
        },
    )]);
    let days = BTreeSet::from([
        (a, p, day("2025-03-03")),
        (a, q, day("2025-03-10")),
        (a, q, day("2025-03-08")),
    ]);
    let changes = widen(&stored, &days);
    assert_eq!(changes.moved, [(a, p)]);
    assert_eq!(
        changes.spans.get(&(a, p)),
        Some(&Span {
            first_day: day("2025-03-03"),
            last_day: day("2025-03-06")
        })
    );
    assert_eq!(
        changes.spans.get(&(a, q)),
        Some(&Span {
            first_day: day("2025-03-08"),
            last_day: day("2025-03-10")
        })
    );
    // Days inside the stored span change nothing.
    let inside = BTreeSet::from([(a, p, day("2025-03-05")), (a, p, day("2025-03-06"))]);
    assert_eq!(widen(&stored, &inside), SpanChanges::default());
}

#[test]
fn counts_follow_new_days_and_move_with_a_players_first_day() {
    let (a, p) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let stored = BTreeMap::from([(
        (a, p),
        Span {
            first_day: day("2025-03-05"),
            last_day: day("2025-03-06"),
        },
    )]);
    // A late record from 03-03 and a new day 03-10: p's cohort is now 03-03.
    let days = BTreeSet::from([(a, p, day("2025-03-03")), (a, p, day("2025-03-10"))]);
    let changes = widen(&stored, &days);
    let moved_days = [(a, p, day("2025-03-05")), (a, p, day("2025-03-06"))];
    let new_days: Vec<_> = days.iter().copied().collect();
    let d = deltas(&stored, &changes, &moved_days, &new_days);
    let march = |text: &str| day(&format!("2025-03-{text}"));
    assert_eq!(
        d.returns,
        BTreeMap::from([
            ((a, march("05"), 0), -1),
            ((a, march("05"), 1), -1),
            ((a, march("03"), 0), 1),
            ((a, march("03"), 2), 1),
            ((a, march("03"), 3), 1),
            ((a, march("03"), 7), 1),
        ])
    );
    assert_eq!(
        d.spans,
        BTreeMap::from([((a, march("05"), 1), -1), ((a, march("03"), 7), 1)])
    );
    // Nothing new: no change at all.
    let none = deltas(&stored, &SpanChanges::default(), &[], &[]);
    assert_eq!(none, CountDeltas::default());
}
