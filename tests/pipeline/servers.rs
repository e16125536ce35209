//! The server list from heartbeats: figures, order, online rules and the sync interval.

use crate::dashboard::{Network, ago, items, now};
use serde_json::json;

const ALPHA: &str = "2b000000-0000-4000-8000-0000000000a1";
const BETA: &str = "2b000000-0000-4000-8000-0000000000b2";
const GAMMA: &str = "2b000000-0000-4000-8000-0000000000c3";

#[tokio::test]
async fn servers_report_their_last_heartbeat_and_whether_they_are_online() {
    let net = Network::start("Servers Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!([
            {"server_id": GAMMA, "name": "gamma", "tps": 19.5, "player_count": 12, "max_players": 100,
             "version": "Paper 1.21.4", "memory_used_mb": 2048, "memory_max_mb": 4096, "timestamp": ago(now, 2)},
            {"server_id": ALPHA, "name": "Alpha", "tps": 20, "player_count": 0, "max_players": 10,
             "online": false, "timestamp": ago(now, 1)},
            {"server_id": BETA, "name": "Beta", "tps": 18, "player_count": 3, "max_players": 10,
             "timestamp": ago(now, 60)},
        ]),
    )
    .await;
    let body = net.wait_for("/api/servers", |b| items(b).len() == 3).await;
    let list = items(&body);
    let names: Vec<&str> = list.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["Alpha", "Beta", "gamma"]);
    for (field, value) in [
        ("id", json!(GAMMA)),
        ("is_online", json!(true)),
        ("tps", json!(19.5)),
        ("player_count", json!(12)),
        ("max_players", json!(100)),
        ("version", json!("Paper 1.21.4")),
        ("last_heartbeat_at", json!(ago(now, 2))),
    ] {
        assert_eq!(list[2][field], value, "{field}: {}", list[2]);
    }
    assert_eq!(list[0]["is_online"], false, "a graceful shutdown");
    assert_eq!(
        list[1]["is_online"], false,
        "60 s without a heartbeat > 3 x 15 s"
    );

    // A slower sync interval: 60 s is within 3 x 30 s.
    net.settings(&["admin"], 30).await;
    let body = net
        .wait_for("/api/servers", |b| b["items"][1]["is_online"] == true)
        .await;
    assert_eq!(body["items"][0]["is_online"], false);

    // A newer heartbeat moves the figures; an older one arriving late does not.
    net.post(
        "/api/plugin/heartbeat",
        json!([
            {"server_id": GAMMA, "tps": 15, "player_count": 40, "max_players": 100, "timestamp": ago(now, 0)},
            {"server_id": GAMMA, "tps": 5, "player_count": 1, "max_players": 100, "timestamp": ago(now, 30)},
        ]),
    )
    .await;
    let body = net
        .wait_for("/api/servers", |b| b["items"][2]["player_count"] == 40)
        .await;
    assert_eq!(body["items"][2]["tps"], 15.0);
    assert_eq!(
        body["items"][2]["name"], "gamma",
        "a heartbeat without a name keeps it"
    );
    assert_eq!(body["items"][2]["last_heartbeat_at"], ago(now, 0));
}
