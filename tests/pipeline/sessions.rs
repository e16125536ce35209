//! Joins, quits, online status, playtime, and sessions ended by a server going offline.

use crate::dashboard::{Network, ago, now};
use serde_json::{Value, json};

const LOBBY: &str = "1a2b3c4d-0000-4000-8000-00000000000a";
const SILENT: &str = "1a2b3c4d-0000-4000-8000-00000000000b";
const PLAYER: &str = "6e1f0b7a-3c2d-4b59-9e8f-7a6b5c4d3e21";
const STRANDED: &str = "6e1f0b7a-3c2d-4b59-9e8f-7a6b5c4d3e22";

fn session(server: &str, event: &str, at: String) -> Value {
    json!({"server_id": server, "player_uuid": PLAYER, "player_name": "Steve", "event": event, "at": at})
}

#[tokio::test]
async fn online_status_and_playtime_follow_joins_quits_and_heartbeats() {
    let net = Network::start("Sessions Network").await;
    let now = now();
    let heartbeat = |server: &str, name: &str, at: String| {
        json!({"server_id": server, "name": name, "tps": 20, "player_count": 1, "max_players": 20,
               "timestamp": at})
    };
    // The silent server's last heartbeat is 300 s old: offline under the default 3 x 15 s.
    net.post(
        "/api/plugin/heartbeat",
        heartbeat(SILENT, "Silent", ago(now, 300)),
    )
    .await;
    net.post(
        "/api/plugin/heartbeat",
        heartbeat(LOBBY, "Lobby", ago(now, 1)),
    )
    .await;
    // Another player, 100 s on the silent server and never quit: the session ends at the
    // server's last heartbeat.
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SILENT, "player_uuid": STRANDED, "player_name": "Alex",
               "event": "join", "at": ago(now, 400)}),
    )
    .await;
    // 60 s on the lobby, then quit.
    net.post(
        "/api/plugin/sessions",
        session(LOBBY, "join", ago(now, 200)),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        session(LOBBY, "quit", ago(now, 140)),
    )
    .await;
    // And back on the lobby, still there.
    net.post("/api/plugin/sessions", session(LOBBY, "join", ago(now, 20)))
        .await;

    let stranded = net
        .wait_for(&format!("/api/players/{STRANDED}"), |b| {
            b["joins"].as_array().map(Vec::len) == Some(1)
        })
        .await;
    assert_eq!(
        stranded["joins"],
        json!([{"server_id": SILENT, "server_name": "Silent", "joined_at": ago(now, 400),
                "left_at": ago(now, 300)}])
    );
    assert_eq!(stranded["is_online"], false);
    assert_eq!(stranded["current_server_id"], Value::Null);
    assert_eq!(stranded["total_playtime"], 100);

    let path = format!("/api/players/{PLAYER}");
    let body = net
        .wait_for(&path, |b| b["joins"].as_array().map(Vec::len) == Some(2))
        .await;
    assert_eq!(body["is_online"], true);
    assert_eq!(body["current_server_id"], LOBBY);
    assert_eq!(body["username"], "Steve");
    assert_eq!(
        body["joins"],
        json!([
            {"server_id": LOBBY, "server_name": "Lobby", "joined_at": ago(now, 20), "left_at": null},
            {"server_id": LOBBY, "server_name": "Lobby", "joined_at": ago(now, 200), "left_at": ago(now, 140)},
        ])
    );
    let playtime = body["total_playtime"].as_i64().unwrap_or_default();
    assert!((60 + 20..60 + 20 + 60).contains(&playtime), "{playtime}");

    // A switch to another server closes the open session at the new join.
    net.post(
        "/api/plugin/sessions",
        session(SILENT, "join", ago(now, 10)),
    )
    .await;
    let body = net
        .wait_for(&path, |b| b["joins"].as_array().map(Vec::len) == Some(3))
        .await;
    assert_eq!(body["joins"][1]["left_at"], ago(now, 10));
    // The silent server is offline (its last heartbeat predates the join): ends at joined_at.
    assert_eq!(body["joins"][0]["left_at"], ago(now, 10));
    assert_eq!(body["is_online"], false);
    assert_eq!(body["total_playtime"], 60 + 10);

    // A graceful shutdown of the lobby ends the sessions open on it at that heartbeat.
    net.post("/api/plugin/sessions", session(LOBBY, "join", ago(now, 5)))
        .await;
    net.wait_for(&path, |b| b["is_online"] == true).await;
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": LOBBY, "tps": 20, "player_count": 0, "max_players": 20,
               "online": false, "timestamp": ago(now, 0)}),
    )
    .await;
    let body = net.wait_for(&path, |b| b["is_online"] == false).await;
    assert_eq!(body["current_server_id"], Value::Null);
    assert_eq!(body["joins"][0]["left_at"], ago(now, 0));
    // The join at -5 closed the silent-server session as a switch: a recorded end wins.
    assert_eq!(body["joins"][1]["left_at"], ago(now, 5));
    assert_eq!(body["total_playtime"], 60 + 10 + 5 + 5);
}
