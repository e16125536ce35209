//! Punishments issued and revoked through the plugin API, listed with `is_active` and paged.

use crate::dashboard::{Network, ago, items, now, pages};
use serde_json::{Value, json};

const SERVER: &str = "3c000000-0000-4000-8000-000000000001";
const PLAYER: &str = "3c000000-0000-4000-8000-0000000000aa";
const STAFF: &str = "3c000000-0000-4000-8000-0000000000bb";

#[tokio::test]
async fn punishments_are_listed_newest_first_with_their_state() {
    let net = Network::start("Punishments Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Survival", "tps": 20, "player_count": 1, "max_players": 50}),
    )
    .await;
    let issue = |kind: &str, at: i64, expires: Option<i64>, external: &str| {
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer", "type": kind,
               "reason": format!("{kind} reason"), "staff_uuid": STAFF, "staff_name": "ModMike",
               "issued_at": ago(now, at), "expires_at": expires.map(|e| ago(now, e)),
               "scope": "global", "source_plugin": "litebans", "external_id": external})
    };
    net.post(
        "/api/plugin/punishments",
        json!([
            issue("ban", 100, Some(-3600), "1"),
            issue("mute", 200, Some(150), "2"),
            issue("kick", 300, None, "3"),
            issue("warning", 400, None, "4"),
            issue("ban", 500, None, "5"),
        ]),
    )
    .await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban", "action": "revoke",
               "source_plugin": "litebans", "external_id": "5", "staff_uuid": STAFF,
               "staff_name": "ModMike", "issued_at": ago(now, 50), "revoke_reason": "appeal"}),
    )
    .await;

    let path = format!("/api/players/{PLAYER}/punishments");
    let body = net
        .wait_for(&path, |b| {
            items(b).len() == 5 && !b["items"][4]["revoked_at"].is_null()
        })
        .await;
    assert_eq!(body["next_cursor"], Value::Null);
    let list = items(&body);
    let kinds: Vec<&str> = list.iter().filter_map(|p| p["type"].as_str()).collect();
    assert_eq!(kinds, ["ban", "mute", "kick", "warning", "ban"]);
    let active: Vec<bool> = list
        .iter()
        .filter_map(|p| p["is_active"].as_bool())
        .collect();
    assert_eq!(active, [true, false, false, false, false]);
    let first = &list[0];
    for (field, value) in [
        ("reason", json!("ban reason")),
        ("staff_uuid", json!(STAFF)),
        ("staff_username", json!("ModMike")),
        ("server_id", json!(SERVER)),
        ("server_name", json!("Survival")),
        ("issued_at", json!(ago(now, 100))),
        ("expires_at", json!(ago(now, -3600))),
        ("revoked_at", Value::Null),
        ("revoked_by", Value::Null),
        ("revoke_reason", Value::Null),
        ("scope", json!("global")),
        ("source_plugin", json!("litebans")),
    ] {
        assert_eq!(first[field], value, "{field}: {first}");
    }
    assert!(first["id"].is_string());
    assert_eq!(list[2]["expires_at"], Value::Null, "kicks have no duration");
    let revoked = &list[4];
    assert_eq!(revoked["revoked_at"], ago(now, 50));
    assert_eq!(revoked["revoked_by"], STAFF);
    assert_eq!(revoked["revoke_reason"], "appeal");

    let paged = pages(&net, &format!("{path}?limit=2")).await;
    assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(paged.concat(), list);
    let (status, body) = net.get(&format!("{path}?limit=0")).await;
    assert_eq!((status, &body["code"]), (422, &json!("validation_failed")));

    // The profile shows the newest ten, the same items.
    let (status, profile) = net.get(&format!("/api/players/{PLAYER}")).await;
    assert_eq!(status, 200);
    assert_eq!(profile["recent_punishments"], json!(list));
}
