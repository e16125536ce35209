//! Anti-cheat flags through the plugin API, listed newest first and paged.

use crate::dashboard::{Network, ago, items, now, pages};
use serde_json::{Value, json};

const SERVER: &str = "4d000000-0000-4000-8000-000000000001";
const PLAYER: &str = "4d000000-0000-4000-8000-0000000000aa";

#[tokio::test]
async fn flags_are_listed_newest_first_and_paged() {
    let net = Network::start("Flags Network").await;
    let now = now();
    let flag = |check: &str, at: i64| {
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Hacker",
               "check_name": check, "check_type": "A", "violation_level": 7.5,
               "detail": "distance=3.41", "source_plugin": "grim", "is_experimental": false,
               "ping_ms": 35, "tps": 19.9, "flagged_at": ago(now, at)})
    };
    net.post(
        "/api/plugin/anticheat-flags",
        json!([flag("Reach", 30), flag("Timer", 10), flag("Fly", 20)]),
    )
    .await;
    let path = format!("/api/players/{PLAYER}/flags");
    let body = net.wait_for(&path, |b| items(b).len() == 3).await;
    assert_eq!(body["next_cursor"], Value::Null);
    let list = items(&body);
    let checks: Vec<&str> = list
        .iter()
        .filter_map(|f| f["check_name"].as_str())
        .collect();
    assert_eq!(checks, ["Timer", "Fly", "Reach"]);
    let first = &list[0];
    for (field, value) in [
        ("check_type", json!("A")),
        ("violation_level", json!(7.5)),
        ("detail", json!("distance=3.41")),
        ("source_plugin", json!("grim")),
        ("is_experimental", json!(false)),
        ("server_id", json!(SERVER)),
        ("flagged_at", json!(ago(now, 10))),
    ] {
        assert_eq!(first[field], value, "{field}: {first}");
    }
    assert!(first["id"].is_string());

    let paged = pages(&net, &format!("{path}?limit=2")).await;
    assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(paged.concat(), list);
    let (status, body) = net.get(&format!("{path}?cursor=nope")).await;
    assert_eq!((status, &body["code"]), (422, &json!("validation_failed")));
    let (status, profile) = net.get(&format!("/api/players/{PLAYER}")).await;
    assert_eq!(status, 200);
    assert_eq!(profile["recent_anticheat_flags"], json!(list));
}
