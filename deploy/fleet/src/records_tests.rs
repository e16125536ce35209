//! Every record the fleet makes has the contract's required fields and passes the service's own
//! validation (the record types of `shared`).

use super::*;
use crate::world::World;
use chrono::Duration;
use serde::de::DeserializeOwned;
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, PluginRecord, Punishment,
    RankChange, Session,
};

fn world() -> World {
    World::generate(5, 2, 20)
}

/// Checks the client id and the required fields, then parses and validates as ingest would.
fn accepted<R: PluginRecord + DeserializeOwned>(value: &Value, required: &[&str]) -> R {
    let id = value["id"].as_str().expect("id is a string");
    let id = Uuid::parse_str(id).expect("id is a UUID");
    assert_eq!(id.get_version_num(), 7, "ids are UUIDv7");
    for field in required {
        assert!(value.get(*field).is_some(), "missing {field} in {value}");
    }
    let parsed: R = serde_json::from_str(&value.to_string()).expect("matches the record shape");
    parsed
        .validate(Utc::now() + Duration::seconds(1))
        .expect("passes validation");
    parsed
}

#[test]
fn heartbeat_shape() {
    let w = world();
    let status = Status {
        tps: 19.987,
        player_count: 3,
        memory_used_mb: 2048,
        online: false,
    };
    let value = heartbeat(&w.servers[0], status, Utc::now());
    let hb: Heartbeat = accepted(&value, &["server_id", "tps", "player_count", "max_players"]);
    assert_eq!(hb.online, Some(false));
    assert_eq!(hb.version.as_deref(), Some("Paper 1.21.4"));
    assert_eq!(hb.tps, 19.99);
}

#[test]
fn chat_shape() {
    let w = world();
    let (s, p) = (&w.servers[1], &w.players[3]);
    let value = chat(s, p, EntryType::Command, "/spawn", "global", Utc::now());
    let required = ["server_id", "player_uuid", "entry_type", "message"];
    let entry: ChatEntry = accepted(&value, &required);
    assert_eq!(value["entry_type"], "command");
    assert_eq!(entry.channel.as_deref(), Some("global"));
}

#[test]
fn session_shapes_carry_the_address_on_join_only() {
    let w = world();
    let (s, p) = (&w.servers[0], &w.players[0]);
    let required = ["server_id", "player_uuid", "player_name", "event"];
    let join: Session = accepted(&session(s, p, true, Utc::now()), &required);
    assert_eq!(join.ip, Some(p.ip.to_string()));
    let quit = session(s, p, false, Utc::now());
    let _: Session = accepted(&quit, &required);
    assert_eq!(quit["event"], "quit");
    assert!(quit.get("ip").is_none());
}

#[test]
fn anticheat_flag_shape() {
    let w = world();
    let flag = Flag {
        check_name: "Reach",
        check_type: "A",
        violation_level: 3.5,
        detail: "distance=3.41".to_owned(),
        source_plugin: "grim",
        is_experimental: false,
        ping_ms: 42,
        tps: 19.9,
    };
    let value = anticheat_flag(&w.servers[0], &w.players[1], &flag, Utc::now());
    let required = ["server_id", "player_uuid", "check_name", "violation_level"];
    let _: AnticheatFlag = accepted(&value, &required);
}

#[test]
fn punishment_issue_and_revoke_name_the_same_external_id() {
    let w = world();
    let now = Utc::now();
    let p = PunishmentRecord {
        server: 1,
        player: 7,
        kind: "mute",
        reason: "Spam".to_owned(),
        staff: Some(0),
        expires_at: Some(now + Duration::hours(1)),
        external_id: "1042".to_owned(),
    };
    let required = ["server_id", "player_uuid", "type"];
    let issued: Punishment = accepted(&punishment(&w, &p, now), &required);
    let revoked: Punishment = accepted(&revoke(&w, &p, Some(1), "Appealed", now), &required);
    assert_eq!(issued.external_id, revoked.external_id);
    assert_eq!(issued.source_plugin.as_deref(), Some("litebans"));
    assert_eq!(revoked.source_plugin.as_deref(), Some("litebans"));
    assert_eq!(
        serde_json::to_value(revoked.action).expect("json"),
        "revoke"
    );
    assert_eq!(issued.staff_uuid, Some(w.players[0].uuid));

    let console = PunishmentRecord {
        staff: None,
        expires_at: None,
        ..p
    };
    let value = punishment(&w, &console, now);
    assert!(value.get("staff_uuid").is_none() && value.get("expires_at").is_none());
}

#[test]
fn rank_change_shape() {
    let w = world();
    let value = rank_change(
        &w.players[4],
        "add",
        "vip",
        Some("default"),
        None,
        Utc::now(),
    );
    let change: RankChange = accepted(&value, &["player_uuid", "action", "group"]);
    assert_eq!(change.group, "vip");
    assert!(change.server_id.is_none(), "a purchase is network-wide");
}

#[test]
fn account_link_shape() {
    let w = world();
    let value = account_link(&w.players[2], 412_345_678_901_234_567, true, Utc::now());
    let required = ["player_uuid", "platform", "external_id", "action"];
    let _: AccountLink = accepted(&value, &required);
    assert_eq!(value["platform"], "discord");
}

#[test]
fn custom_event_keeps_nested_properties() {
    let w = world();
    let props = json!({"crate": "vote", "reward": {"item": "diamond", "amount": 3}});
    let value = custom_event(&w.players[0], "crate_opened", props.clone(), Utc::now());
    let event: CustomEvent = accepted(&value, &["player_uuid", "name"]);
    let kept: Value = serde_json::from_str(event.properties.expect("kept").get()).expect("json");
    assert_eq!(kept, props);
}

#[test]
fn every_plugin_kind_has_its_endpoint() {
    let paths: std::collections::HashSet<_> = RecordKind::PLUGIN
        .iter()
        .map(|k| endpoint(*k).expect("a plugin endpoint"))
        .collect();
    assert_eq!(paths.len(), RecordKind::PLUGIN.len());
    assert_eq!(endpoint(RecordKind::Custom), Some("/api/v1/plugin/events"));
    assert_eq!(endpoint(RecordKind::Note), None);
}
