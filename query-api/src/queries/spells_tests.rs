use super::*;

fn t(minute: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(1_740_830_400, 0).expect("valid") + Duration::minutes(minute)
}

fn slots(minutes: &[(i64, f64)]) -> Vec<Slot> {
    minutes
        .iter()
        .map(|&(m, avg_tps)| Slot { at: t(m), avg_tps })
        .collect()
}

fn up(first_seen: i64, last: i64) -> Liveness {
    Liveness {
        first_seen: t(first_seen),
        last_heartbeat_at: t(last),
        is_online: true,
    }
}

#[test]
fn a_gap_of_empty_minutes_is_downtime_once_it_passes_the_offline_threshold() {
    // Minutes 0-2 up, 3-5 empty, 6-9 up; 12 and 14 up with 13 empty.
    let present: Vec<(i64, f64)> = [0, 1, 2, 6, 7, 8, 9, 12, 14]
        .iter()
        .map(|&m| (m, 20.0))
        .collect();
    let spells = downtime(
        &slots(&present),
        Duration::minutes(1),
        Duration::seconds(45),
        (t(0), t(15)),
        up(-100, 14),
    );
    assert_eq!(
        spells,
        [
            Downtime {
                from: t(3),
                to: Some(t(6))
            },
            Downtime {
                from: t(10),
                to: Some(t(12))
            },
            Downtime {
                from: t(13),
                to: Some(t(14))
            },
        ]
    );
    // A sync interval of 60 s (offline after 180 s): only the three-minute gap counts.
    let spells = downtime(
        &slots(&present),
        Duration::minutes(1),
        Duration::seconds(180),
        (t(0), t(15)),
        up(-100, 14),
    );
    assert_eq!(
        spells,
        [Downtime {
            from: t(3),
            to: Some(t(6))
        }]
    );
}

#[test]
fn before_the_first_heartbeat_is_not_downtime_but_a_quiet_start_is() {
    let present = slots(&[(5, 20.0), (6, 20.0)]);
    let window = (t(0), t(7));
    let new_server = downtime(
        &present,
        Duration::minutes(1),
        Duration::seconds(45),
        window,
        up(5, 6),
    );
    assert_eq!(new_server, []);
    let old_server = downtime(
        &present,
        Duration::minutes(1),
        Duration::seconds(45),
        window,
        up(-50, 6),
    );
    assert_eq!(
        old_server,
        [Downtime {
            from: t(0),
            to: Some(t(5))
        }]
    );
}

#[test]
fn a_server_offline_now_is_down_from_its_last_heartbeat_without_end() {
    let present = slots(&[(0, 20.0), (1, 20.0)]);
    let live = Liveness {
        first_seen: t(-10),
        last_heartbeat_at: t(1) + Duration::seconds(30),
        is_online: false,
    };
    let spells = downtime(
        &present,
        Duration::minutes(1),
        Duration::seconds(45),
        (t(0), t(60)),
        live,
    );
    assert_eq!(
        spells,
        [Downtime {
            from: t(1) + Duration::seconds(30),
            to: None
        }]
    );
    // Down since before the window: the whole window.
    let live = Liveness {
        last_heartbeat_at: t(-5),
        ..live
    };
    let spells = downtime(
        &[],
        Duration::minutes(1),
        Duration::seconds(45),
        (t(0), t(60)),
        live,
    );
    assert_eq!(
        spells,
        [Downtime {
            from: t(0),
            to: None
        }]
    );
}

#[test]
fn low_tps_spells_need_three_adjacent_slow_minutes() {
    let history = slots(&[
        (0, 19.9),
        (1, 17.0), // one slow minute: a hiccup
        (2, 19.5),
        (3, 12.0),
        (4, 15.5),
        (5, 17.9),
        (6, 18.0), // exactly the threshold is not low
        (8, 10.0), // two slow minutes with a gap between them: not adjacent
        (10, 10.0),
        (11, 9.0),
        (12, 11.0),
    ]);
    assert_eq!(
        low_tps_spells(&history, Duration::minutes(1)),
        [
            LowTpsSpell {
                from: t(3),
                to: t(6),
                lowest_avg_tps: 12.0
            },
            LowTpsSpell {
                from: t(10),
                to: t(13),
                lowest_avg_tps: 9.0
            },
        ]
    );
}

#[test]
fn one_slow_hour_is_a_spell_in_hour_slots() {
    let history = slots(&[(0, 19.0), (60, 16.0), (120, 19.0)]);
    assert_eq!(
        low_tps_spells(&history, Duration::hours(1)),
        [LowTpsSpell {
            from: t(60),
            to: t(120),
            lowest_avg_tps: 16.0
        }]
    );
}
