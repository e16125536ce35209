use super::*;
use shared::records::Heartbeat;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const STAFF: &str = "11111111-44e9-4726-a5be-fca90e38aaf5";
const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";

fn t(minute: u32) -> DateTime<Utc> {
    format!("2025-03-01T12:{minute:02}:00Z")
        .parse()
        .expect("valid time")
}

fn message<T: serde::de::DeserializeOwned>(
    wrap: fn(Vec<Logged<T>>) -> RecordBatch,
    records: &[String],
) -> LogMessage {
    let records = records
        .iter()
        .map(|json| Logged {
            id: Uuid::now_v7(),
            record: serde_json::from_str(json).expect("well-formed record"),
        })
        .collect();
    LogMessage::new(Uuid::nil(), t(59), wrap(records))
}

fn join(name: &str, minute: u32) -> String {
    format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"{name}","event":"join",
            "at":"{}"}}"#,
        t(minute).to_rfc3339()
    )
}

fn rank(action: &str, group: &str, previous: Option<&str>, minute: u32) -> String {
    let previous = previous.map_or(String::new(), |p| format!(r#","previous_group":"{p}""#));
    format!(
        r#"{{"player_uuid":"{PLAYER}","action":"{action}","group":"{group}"{previous},
            "changed_at":"{}"}}"#,
        t(minute).to_rfc3339()
    )
}

fn link(action: &str, id: &str, minute: u32) -> String {
    format!(
        r#"{{"player_uuid":"{PLAYER}","platform":"discord","external_id":"{id}","external_name":"n{id}",
            "action":"{action}","at":"{}"}}"#,
        t(minute).to_rfc3339()
    )
}

/// Folds `messages` (stream sequences 1, 2, ...) one at a time, as separate chunks would,
/// and returns the final row of the player.
fn fold_all(messages: &[LogMessage]) -> Option<PlayerRow> {
    let mut stored = BTreeMap::new();
    for (i, m) in messages.iter().enumerate() {
        let sightings = sightings_of(i as u64 + 1, m);
        for row in fold(&stored, &sightings) {
            stored.insert((row.account_id, row.uuid), row);
        }
    }
    stored.into_values().next()
}

/// Every prefix of `messages` re-applied (with its original log positions) after all of them
/// changes nothing.
fn assert_replay_safe(messages: &[LogMessage]) {
    let mut stored = BTreeMap::new();
    let sightings: Vec<Vec<Sighting<'_>>> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| sightings_of(i as u64 + 1, m))
        .collect();
    for s in &sightings {
        for row in fold(&stored, s) {
            stored.insert((row.account_id, row.uuid), row);
        }
    }
    for s in &sightings {
        assert_eq!(fold(&stored, s), Vec::new(), "re-applying {s:?}");
    }
}

#[test]
fn names_follow_record_time_not_log_order() {
    let messages = [
        message(RecordBatch::Session, &[join("Old", 1)]),
        message(RecordBatch::Session, &[join("Newest", 5)]),
        message(RecordBatch::Session, &[join("Late", 3)]),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.username.as_deref(), Some("Newest"));
    assert_eq!(row.username_at, Some(t(5)));
    assert_eq!((row.first_seen, row.last_seen), (t(1), t(5)));
    assert_replay_safe(&messages);
}

#[test]
fn every_name_is_kept_once_in_byte_order_whatever_the_order_seen() {
    let messages = [
        message(RecordBatch::Session, &[join("steve", 4)]),
        message(RecordBatch::Session, &[join("Old", 1), join("Zed", 9)]),
        message(RecordBatch::Session, &[join("Old", 2), join("Émile", 3)]),
    ];
    let row = fold_all(&messages).expect("a row");
    // Byte order (PostgreSQL's COLLATE "C"): upper case before lower, non-ASCII last.
    assert_eq!(row.names, ["Old", "Zed", "steve", "Émile"]);
    assert_eq!(row.username.as_deref(), Some("Zed"));
    let reversed: Vec<LogMessage> = messages.iter().rev().cloned().collect();
    assert_eq!(fold_all(&reversed).expect("a row").names, row.names);
    assert_replay_safe(&messages);
}

#[test]
fn equal_times_go_to_the_later_record_in_the_log() {
    let messages = [message(
        RecordBatch::Session,
        &[join("First", 2), join("Second", 2)],
    )];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.username.as_deref(), Some("Second"));
    assert_replay_safe(&messages);
}

#[test]
fn records_without_a_name_only_move_first_and_last_seen() {
    let chat = format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","entry_type":"chat","message":"hi",
            "sent_at":"{}"}}"#,
        t(9).to_rfc3339()
    );
    let messages = [
        message(RecordBatch::Session, &[join("Named", 4)]),
        message(RecordBatch::Chat, &[chat]),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.username.as_deref(), Some("Named"));
    assert_eq!(row.last_seen, t(9));
}

#[test]
fn punishments_create_the_punished_player_not_the_staff_member() {
    let ban = format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"Griefer","type":"ban",
            "staff_uuid":"{STAFF}","staff_name":"Mod"}}"#
    );
    let m = message(RecordBatch::Punishment, &[ban]);
    let sightings = sightings_of(1, &m);
    assert_eq!(sightings.len(), 1);
    assert_eq!(sightings[0].player, PLAYER.parse::<Uuid>().expect("uuid"));
    assert_eq!(sightings[0].name, Some("Griefer"));
    // No issued_at: the time of receipt.
    assert_eq!(sightings[0].at, t(59));
}

#[test]
fn heartbeats_and_custom_events_create_no_player() {
    let beat = format!(r#"{{"server_id":"{SERVER}","tps":20,"player_count":1,"max_players":5}}"#);
    let m = message::<Heartbeat>(RecordBatch::Heartbeat, &[beat]);
    assert!(sightings_of(1, &m).is_empty());
    let custom = format!(r#"{{"player_uuid":"{PLAYER}","name":"vote"}}"#);
    let m = message(RecordBatch::Custom, &[custom]);
    assert!(sightings_of(1, &m).is_empty());
}

#[test]
fn set_and_add_remember_the_previous_group() {
    let messages = [
        message(RecordBatch::RankChange, &[rank("set", "member", None, 1)]),
        message(RecordBatch::RankChange, &[rank("add", "vip", None, 2)]),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.rank.as_deref(), Some("vip"));
    assert_eq!(row.previous_rank.as_deref(), Some("member"));

    let explicit = [message(
        RecordBatch::RankChange,
        &[rank("set", "mod", Some("helper"), 1)],
    )];
    let row = fold_all(&explicit).expect("a row");
    assert_eq!(row.previous_rank.as_deref(), Some("helper"));
    assert_replay_safe(&messages);
}

#[test]
fn renewing_the_current_group_keeps_what_it_falls_back_to() {
    let messages = [
        message(RecordBatch::RankChange, &[rank("set", "member", None, 1)]),
        message(RecordBatch::RankChange, &[rank("add", "vip", None, 2)]),
        message(RecordBatch::RankChange, &[rank("add", "vip", None, 3)]),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.rank.as_deref(), Some("vip"));
    assert_eq!(row.previous_rank.as_deref(), Some("member"));
}

#[test]
fn temporary_groups_carry_their_expiry_and_a_later_set_clears_it() {
    let temporary = format!(
        r#"{{"player_uuid":"{PLAYER}","action":"add","group":"vip","expires_at":"2025-04-01T00:00:00Z",
            "changed_at":"{}"}}"#,
        t(1).to_rfc3339()
    );
    let row = fold_all(&[message(
        RecordBatch::RankChange,
        std::slice::from_ref(&temporary),
    )])
    .expect("row");
    assert_eq!(
        row.rank_expires_at,
        Some("2025-04-01T00:00:00Z".parse().expect("time"))
    );
    let row = fold_all(&[
        message(RecordBatch::RankChange, &[temporary]),
        message(RecordBatch::RankChange, &[rank("set", "mod", None, 2)]),
    ])
    .expect("row");
    assert_eq!(row.rank_expires_at, None);
}

#[test]
fn remove_falls_back_only_from_the_current_group() {
    let messages = [
        message(RecordBatch::RankChange, &[rank("set", "member", None, 1)]),
        message(RecordBatch::RankChange, &[rank("add", "vip", None, 2)]),
        // Not the current group: nothing changes but the stamp.
        message(
            RecordBatch::RankChange,
            &[rank("remove", "builder", None, 3)],
        ),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.rank.as_deref(), Some("vip"));
    assert_eq!(row.rank_changed_at, Some(t(3)));

    let mut removed = messages.to_vec();
    removed.push(message(
        RecordBatch::RankChange,
        &[rank("remove", "vip", None, 4)],
    ));
    let row = fold_all(&removed).expect("a row");
    assert_eq!(row.rank.as_deref(), Some("member"), "stored previous_rank");

    removed.pop();
    removed.push(message(
        RecordBatch::RankChange,
        &[rank("remove", "vip", Some("default"), 4)],
    ));
    let row = fold_all(&removed).expect("a row");
    assert_eq!(
        row.rank.as_deref(),
        Some("default"),
        "record's previous_group"
    );
    assert_replay_safe(&removed);
}

#[test]
fn an_older_rank_change_is_ignored_and_equal_times_take_log_order() {
    let messages = [
        message(RecordBatch::RankChange, &[rank("set", "mod", None, 5)]),
        message(RecordBatch::RankChange, &[rank("set", "admin", None, 4)]),
        message(
            RecordBatch::RankChange,
            &[
                rank("remove", "mod", Some("default"), 5),
                rank("add", "owner", None, 5),
            ],
        ),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.rank.as_deref(), Some("owner"));
    assert_eq!(row.previous_rank.as_deref(), Some("default"));
    assert_replay_safe(&messages);
}

#[test]
fn link_and_unlink_by_time() {
    let messages = [
        message(RecordBatch::AccountLink, &[link("link", "1", 1)]),
        message(RecordBatch::AccountLink, &[link("unlink", "1", 3)]),
        // Older than the unlink: must not come back.
        message(RecordBatch::AccountLink, &[link("link", "2", 2)]),
    ];
    let row = fold_all(&messages).expect("a row");
    assert_eq!(row.linked_platform, None);
    assert_eq!(row.linked_external_id, None);
    assert_eq!(row.linked_at, Some(t(3)));
    assert_eq!(row.username, None, "links carry no name");
    assert_replay_safe(&messages);

    let relinked = [
        message(RecordBatch::AccountLink, &[link("link", "1", 1)]),
        message(RecordBatch::AccountLink, &[link("unlink", "1", 3)]),
        message(RecordBatch::AccountLink, &[link("link", "2", 4)]),
    ];
    let row = fold_all(&relinked).expect("a row");
    assert_eq!(row.linked_platform.as_deref(), Some("discord"));
    assert_eq!(row.linked_external_id.as_deref(), Some("2"));
    assert_eq!(row.linked_external_name.as_deref(), Some("n2"));
    assert_eq!(row.linked_at, Some(t(4)));
}

#[test]
fn unchanged_rows_are_not_returned() {
    let m = message(RecordBatch::Session, &[join("Same", 1)]);
    let sightings = sightings_of(1, &m);
    let mut stored = BTreeMap::new();
    for row in fold(&stored, &sightings) {
        stored.insert((row.account_id, row.uuid), row);
    }
    // The same message applied again (a replay): nothing to write.
    let again = sightings_of(1, &m);
    assert!(fold(&stored, &again).is_empty());
}
