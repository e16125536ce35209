use super::*;
use shared::envelope::Logged;

const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";

fn t(hour: u32, second: u32) -> DateTime<Utc> {
    format!("2025-03-01T{hour:02}:00:{second:02}Z")
        .parse()
        .expect("valid time")
}

fn heartbeat(extra: &str, at: DateTime<Utc>) -> String {
    format!(
        r#"{{"server_id":"{SERVER}","tps":19.5,"player_count":3,"max_players":50,
            "timestamp":"{}"{extra}}}"#,
        at.to_rfc3339()
    )
}

fn message(records: &[String]) -> LogMessage {
    let records = records
        .iter()
        .map(|json| Logged {
            id: Uuid::now_v7(),
            record: serde_json::from_str(json).expect("well-formed heartbeat"),
        })
        .collect();
    LogMessage::new(Uuid::nil(), t(23, 0), RecordBatch::Heartbeat(records))
}

/// Applies `messages` one chunk each (stream sequences 1, 2, ...) and returns the stored
/// row and every sample a chunk offered.
fn fold_all(messages: &[LogMessage]) -> (BTreeMap<ServerKey, ServerRow>, Vec<Sample>) {
    let mut stored = BTreeMap::new();
    let mut samples = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let folded = fold(&stored, &beats_of(i as u64 + 1, m));
        for row in folded.servers {
            stored.insert((row.account_id, row.id), row);
        }
        samples.extend(folded.samples);
    }
    (stored, samples)
}

fn only(stored: &BTreeMap<ServerKey, ServerRow>) -> &ServerRow {
    stored.values().next().expect("a server row")
}

#[test]
fn the_newest_heartbeat_sets_status_and_descriptive_fields_when_carried() {
    let (stored, samples) = fold_all(&[
        message(&[heartbeat(
            r#","name":"Lobby","version":"Paper 1.21.4","memory_used_mb":512,"memory_max_mb":2048"#,
            t(1, 0),
        )]),
        message(&[heartbeat(r#","online":false"#, t(1, 15))]),
    ]);
    let row = only(&stored);
    assert_eq!(row.name.as_deref(), Some("Lobby"), "kept when not carried");
    assert_eq!(row.version.as_deref(), Some("Paper 1.21.4"));
    assert_eq!(row.memory_max_mb, Some(2048.0));
    assert!(!row.online_flag);
    assert_eq!(row.tps, Some(19.5));
    assert_eq!((row.player_count, row.max_players), (Some(3), Some(50)));
    assert_eq!((row.first_seen, row.last_heartbeat_at), (t(1, 0), t(1, 15)));
    assert_eq!(samples.len(), 2);
}

#[test]
fn a_late_heartbeat_moves_first_seen_fills_gaps_and_nothing_else() {
    let (stored, samples) = fold_all(&[
        message(&[heartbeat(r#","name":"New""#, t(2, 0))]),
        message(&[heartbeat(
            r#","name":"Old","version":"Spigot","online":false"#,
            t(1, 0),
        )]),
    ]);
    let row = only(&stored);
    assert_eq!(row.name.as_deref(), Some("New"));
    assert_eq!(row.version.as_deref(), Some("Spigot"), "a gap is filled");
    assert!(row.online_flag, "status is the newest heartbeat's");
    assert_eq!((row.first_seen, row.last_heartbeat_at), (t(1, 0), t(2, 0)));
    assert_eq!(
        samples.len(),
        2,
        "a late heartbeat within a day is still history"
    );
}

#[test]
fn reapplying_any_heartbeat_changes_no_row() {
    let messages = [
        message(&[heartbeat(r#","name":"A""#, t(1, 0))]),
        message(&[heartbeat(r#","name":"B","online":false"#, t(1, 30))]),
        message(&[heartbeat(r#","name":"C""#, t(1, 30))]),
        message(&[heartbeat("", t(1, 10))]),
    ];
    let (stored, _) = fold_all(&messages);
    assert_eq!(
        only(&stored).name.as_deref(),
        Some("C"),
        "equal time: later in log"
    );
    for (i, m) in messages.iter().enumerate() {
        let folded = fold(&stored, &beats_of(i as u64 + 1, m));
        assert_eq!(folded.servers, Vec::new(), "re-applying message {i}");
    }
}

#[test]
fn one_sample_per_server_and_time_in_a_chunk() {
    let m = message(&[heartbeat("", t(1, 0)), heartbeat("", t(1, 0))]);
    let folded = fold(&BTreeMap::new(), &beats_of(1, &m));
    assert_eq!(folded.samples.len(), 1);
    assert_eq!(folded.samples[0].at, t(1, 0));
}

#[test]
fn heartbeats_older_than_a_day_behind_the_latest_are_not_sampled() {
    let latest: DateTime<Utc> = "2025-03-03T00:00:00Z".parse().expect("time");
    let (_, samples) = fold_all(&[
        message(&[heartbeat("", latest)]),
        message(&[heartbeat("", latest - SAMPLE_RETENTION)]),
        message(&[heartbeat(
            "",
            latest - SAMPLE_RETENTION - Duration::seconds(1),
        )]),
    ]);
    let times: Vec<DateTime<Utc>> = samples.iter().map(|s| s.at).collect();
    assert_eq!(times, [latest, latest - SAMPLE_RETENTION]);
}

#[test]
fn a_huge_player_count_saturates() {
    assert_eq!(count(5_000_000_000), i32::MAX);
    assert_eq!(count(7), 7);
}

#[test]
fn the_role_is_the_newest_heartbeats_and_a_game_server_when_it_names_none() {
    let (stored, _) = fold_all(&[message(&[heartbeat(r#","role":"proxy""#, t(1, 0))])]);
    assert_eq!(only(&stored).role, ServerRole::Proxy);
    // An older heartbeat arriving late (here without a role) changes nothing.
    let (stored, _) = fold_all(&[
        message(&[heartbeat(r#","role":"proxy""#, t(1, 15))]),
        message(&[heartbeat("", t(1, 0))]),
    ]);
    assert_eq!(only(&stored).role, ServerRole::Proxy);
    // A newer one without a role (or with null) is a game server's.
    for newer in ["", r#","role":null"#, r#","role":"server""#] {
        let (stored, _) = fold_all(&[
            message(&[heartbeat(r#","role":"proxy""#, t(1, 0))]),
            message(&[heartbeat(newer, t(1, 15))]),
        ]);
        assert_eq!(only(&stored).role, ServerRole::Server, "{newer}");
    }
}
