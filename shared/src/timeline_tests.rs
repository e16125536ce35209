use super::*;
use crate::records::{ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session};
use chrono::TimeZone;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn message(batch: RecordBatch) -> LogMessage {
    LogMessage::new(Uuid::nil(), received(), batch)
}

fn logged<T: serde::de::DeserializeOwned>(json: &str) -> Logged<T> {
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(json).expect("well-formed record"),
    }
}

#[test]
fn custom_events_keep_their_properties_text_and_place_in_the_log() {
    let raw = r#"{"z":1.10,"a":[1,null,{"deep":true}],"n":1e3}"#;
    let with = logged::<CustomEvent>(&format!(
        r#"{{"player_uuid":"{PLAYER}","name":"crate_opened","properties":{raw},
            "occurred_at":"2025-03-01T11:59:00Z"}}"#
    ));
    let without = logged::<CustomEvent>(&format!(r#"{{"player_uuid":"{PLAYER}","name":"x"}}"#));
    let events = events_of(
        42,
        &message(RecordBatch::Custom(vec![with.clone(), without])),
    );

    assert_eq!(events.len(), 2);
    let first = &events[0];
    assert_eq!(first.id, with.id);
    assert_eq!(first.seq, 42_000);
    assert_eq!(first.name, "crate_opened");
    assert!(!first.is_internal);
    assert_eq!(first.properties, raw);
    assert_eq!(first.player_uuid, Some(PLAYER.parse().expect("uuid")));
    assert_eq!(first.server_id, None);
    assert_eq!(first.occurred_at.to_rfc3339(), "2025-03-01T11:59:00+00:00");
    assert_eq!(first.received_at, received());

    let second = &events[1];
    assert_eq!(second.seq, 42_001);
    assert_eq!(second.properties, "{}");
    assert_eq!(
        second.occurred_at,
        received(),
        "falls back to the time of receipt"
    );
}

#[test]
fn sessions_become_joins_and_quits_without_the_ip_hash() {
    let join = logged::<Session>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"Notch","event":"join",
            "client_version":"1.21.4","ip_hash":"abc123","at":"2025-03-01T11:00:00Z"}}"#
    ));
    let quit = logged::<Session>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"Notch","event":"quit"}}"#
    ));
    let events = events_of(1, &message(RecordBatch::Session(vec![join, quit])));

    assert_eq!(events[0].name, "session_join");
    assert!(events[0].is_internal);
    assert_eq!(events[0].server_id, Some(SERVER.parse().expect("uuid")));
    assert_eq!(
        events[0].properties,
        r#"{"client_version":"1.21.4","player_name":"Notch"}"#
    );
    assert!(!events[0].properties.contains("abc123"));
    assert_eq!(
        events[0].occurred_at.to_rfc3339(),
        "2025-03-01T11:00:00+00:00"
    );
    assert_eq!(events[1].name, "session_quit");
    assert_eq!(
        events[1].properties,
        r#"{"client_version":null,"player_name":"Notch"}"#
    );
}

#[test]
fn chat_entries_become_messages_and_commands() {
    let said = logged::<ChatEntry>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"Notch",
            "entry_type":"chat","message":"hi \"all\"","channel":"global"}}"#
    ));
    let ran = logged::<ChatEntry>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","entry_type":"command","message":"/spawn"}}"#
    ));
    let events = events_of(3, &message(RecordBatch::Chat(vec![said, ran])));

    assert_eq!(events[0].name, "chat_message");
    assert_eq!(
        events[0].properties,
        r#"{"channel":"global","message":"hi \"all\"","player_name":"Notch"}"#
    );
    assert_eq!(events[1].name, "chat_command");
    assert_eq!(
        events[1].properties,
        r#"{"channel":null,"message":"/spawn","player_name":null}"#
    );
}

#[test]
fn punishments_are_named_by_type_or_revoke_and_keep_their_fields() {
    let ban = logged::<Punishment>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"ban","reason":"x-ray",
            "issued_at":"2025-03-01T10:00:00Z","source_plugin":"litebans","external_id":"17"}}"#
    ));
    let revoke = logged::<Punishment>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"ban","action":"revoke",
            "external_id":"17","source_plugin":"litebans","revoke_reason":"appeal"}}"#
    ));
    let kick = logged::<Punishment>(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"kick"}}"#
    ));
    let events = events_of(
        9,
        &message(RecordBatch::Punishment(vec![ban, revoke, kick])),
    );

    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["punish_ban", "punish_revoke", "punish_kick"]);
    let ban: Value = serde_json::from_str(&events[0].properties).expect("json");
    assert_eq!(ban["type"], "ban");
    assert_eq!(ban["action"], "issue");
    assert_eq!(ban["reason"], "x-ray");
    assert_eq!(ban["external_id"], "17");
    assert!(ban.get("player_uuid").is_none() && ban.get("server_id").is_none());
    assert_eq!(
        events[0].occurred_at.to_rfc3339(),
        "2025-03-01T10:00:00+00:00"
    );
    let revoke: Value = serde_json::from_str(&events[1].properties).expect("json");
    assert_eq!(revoke["revoke_reason"], "appeal");
}

#[test]
fn rank_changes_keep_their_fields_and_optional_server() {
    let change = logged::<RankChange>(&format!(
        r#"{{"player_uuid":"{PLAYER}","action":"set","group":"mod","previous_group":"default",
            "changed_at":"2025-03-01T09:00:00Z"}}"#
    ));
    let events = events_of(5, &message(RecordBatch::RankChange(vec![change])));

    assert_eq!(events[0].name, "rank_change");
    assert_eq!(events[0].server_id, None);
    assert_eq!(
        events[0].properties,
        r#"{"action":"set","changed_at":"2025-03-01T09:00:00Z","group":"mod","previous_group":"default"}"#
    );
}

#[test]
fn heartbeats_leave_no_trace_on_the_timeline() {
    let beat = logged::<Heartbeat>(&format!(
        r#"{{"server_id":"{SERVER}","tps":20.0,"player_count":3,"max_players":100}}"#
    ));
    assert!(events_of(2, &message(RecordBatch::Heartbeat(vec![beat]))).is_empty());
}

#[test]
fn api_json_is_valid_and_keeps_properties_byte_exact() {
    let raw = r#"{"price":19.990,"big":123456789012345678901234567890}"#;
    let event = logged::<CustomEvent>(&format!(
        r#"{{"player_uuid":"{PLAYER}","name":"shop_purchase","properties":{raw}}}"#
    ));
    let rows = events_of(7, &message(RecordBatch::Custom(vec![event])));
    let text = rows[0].to_api_json();
    assert!(text.contains(raw), "{text}");
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(parsed["seq"], 7000);
    assert_eq!(parsed["name"], "shop_purchase");
    assert_eq!(parsed["player_uuid"], PLAYER);
    assert!(parsed["occurred_at"].as_str().expect("time").ends_with('Z'));
}
