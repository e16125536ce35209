use super::*;
use proptest::prelude::*;

const WEEK: i64 = 604_800;

/// A walk over `steps` with entries allowed from -3600 s to one day, times in seconds.
fn walk(steps: &[&str], window: i64, order: FunnelOrder) -> Walk {
    let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
    Walk::new(&steps, order, window, -3600, 86_400)
}

/// The seconds at which each step was reached, for `(name, seconds)` events in order; both
/// the walk and the reference must agree.
fn progress(events: &[(&str, i64)], steps: &[&str], window: i64, order: FunnelOrder) -> Vec<i64> {
    let walk = walk(steps, window, order);
    let events: Vec<JourneyEvent> = events
        .iter()
        .map(|(name, at)| JourneyEvent {
            code: walk.code_of(name.as_bytes()),
            at: *at,
        })
        .collect();
    let fast = walk.progress(&events).as_slice().to_vec();
    assert_eq!(
        fast,
        reference::progress(&walk, &events),
        "walk vs reference"
    );
    fast
}

use FunnelOrder::{Any, Sequential, Strict};
const ABC: [&str; 3] = ["a", "b", "c"];

#[test]
fn sequential_lets_other_events_come_between() {
    let events = [("a", 0), ("x", 5), ("b", 10), ("c", 20)];
    assert_eq!(progress(&events, &ABC, WEEK, Sequential), [0, 10, 20]);
}

#[test]
fn steps_out_of_order_do_not_count_in_sequence() {
    let events = [("a", 0), ("c", 5), ("b", 10)];
    assert_eq!(progress(&events, &ABC, WEEK, Sequential), [0, 10]);
}

#[test]
fn the_window_bound_is_inclusive() {
    assert_eq!(
        progress(&[("a", 0), ("b", 50)], &ABC, 50, Sequential),
        [0, 50]
    );
    assert_eq!(progress(&[("a", 0), ("b", 51)], &ABC, 50, Sequential), [0]);
}

#[test]
fn a_later_entry_converts_after_the_first_times_out() {
    let events = [("a", 0), ("a", 1000), ("b", 1010)];
    assert_eq!(progress(&events, &ABC, 100, Sequential), [1000, 1010]);
}

#[test]
fn the_best_entry_wins_and_the_earliest_among_equals() {
    let events = [("a", 0), ("b", 5), ("a", 100), ("b", 105)];
    assert_eq!(progress(&events, &ABC, WEEK, Sequential), [0, 5]);
}

#[test]
fn strict_breaks_on_any_other_event() {
    assert_eq!(
        progress(&[("a", 0), ("x", 5), ("b", 10)], &ABC, WEEK, Strict),
        [0]
    );
    assert_eq!(
        progress(&[("a", 0), ("a", 1), ("b", 2)], &ABC, WEEK, Strict),
        [1, 2]
    );
    assert_eq!(
        progress(&[("a", 0), ("b", 3), ("c", 4)], &ABC, WEEK, Strict),
        [0, 3, 4]
    );
}

#[test]
fn any_order_counts_a_step_once_all_before_it_happened() {
    assert_eq!(
        progress(&[("a", 0), ("c", 5), ("b", 10)], &ABC, WEEK, Any),
        [0, 10, 10]
    );
    assert_eq!(progress(&[("a", 0), ("c", 5)], &ABC, WEEK, Any), [0]);
}

#[test]
fn ties_in_time_keep_timeline_order() {
    assert_eq!(
        progress(&[("a", 0), ("b", 0)], &ABC, WEEK, Sequential),
        [0, 0]
    );
    assert_eq!(progress(&[("b", 0), ("a", 0)], &ABC, WEEK, Sequential), [0]);
}

#[test]
fn a_step_name_may_repeat() {
    let events = [("a", 0), ("b", 5), ("a", 9)];
    assert_eq!(
        progress(&events, &["a", "b", "a"], WEEK, Sequential),
        [0, 5, 9]
    );
    let events = [("a", 0), ("b", 5), ("b", 9)];
    assert_eq!(progress(&events, &["a", "b", "b"], WEEK, Any), [0, 5, 9]);
    assert_eq!(
        progress(&[("a", 0), ("b", 5)], &["a", "b", "b"], WEEK, Any),
        [0, 5]
    );
}

#[test]
fn entries_outside_the_range_do_not_count() {
    let events = [("a", -7200), ("b", -7100)];
    assert!(progress(&events, &ABC, WEEK, Sequential).is_empty());
    let events = [("a", 86_400), ("b", 86_401)];
    assert!(progress(&events, &ABC, WEEK, Any).is_empty());
}

/// Journeys over few names and close times, so that entries, repeats, ties and windows
/// interact often.
fn journeys() -> impl Strategy<Value = (Vec<(u8, i64)>, Vec<u8>, i64, u8)> {
    (
        prop::collection::vec((0u8..5, 0i64..40), 0..60),
        prop::collection::vec(1u8..5, 2..=5),
        1i64..60,
        0u8..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn the_linear_walk_agrees_with_the_rules_read_directly(
        (raw, step_names, window, order) in journeys()
    ) {
        let names = ["x", "a", "b", "c", "d"];
        let steps: Vec<String> = step_names.iter().map(|&n| names[n as usize].to_owned()).collect();
        let order = [Sequential, Strict, Any][order as usize];
        let walk = Walk::new(&steps, order, window, 10, 150);
        let mut at = 0;
        let events: Vec<JourneyEvent> = raw
            .iter()
            .map(|&(name, gap)| {
                // Gaps of 0 make ties; the walk gets the timeline order as given.
                at += gap / 4;
                JourneyEvent { code: walk.code_of(names[name as usize].as_bytes()), at }
            })
            .collect();
        let fast = walk.progress(&events);
        let (entry, expected) = reference::progress_from(&walk, &events);
        prop_assert_eq!(fast.as_slice(), expected.as_slice());
        // A breakdown reads the entry's property: the walk names the same entry event.
        prop_assert_eq!(fast.entry(), entry);
    }
}
