//! Two networks on one stack: neither sees the other's players, servers or staff, even for
//! the same player and server UUIDs.

use crate::dashboard::{Network, ago, get_as, items, now, post_as, wait_as};
use serde_json::json;

const SERVER: &str = "7a000000-0000-4000-8000-000000000001";
const PLAYER: &str = "7a000000-0000-4000-8000-0000000000aa";

#[tokio::test]
async fn another_account_sees_none_of_the_first_ones_data() {
    let net = Network::start("First Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "First Hub", "tps": 20, "player_count": 1, "max_players": 50}),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Shared", "event": "join",
               "at": ago(now, 30)}),
    )
    .await;
    net.post(
        "/api/plugin/rank-changes",
        json!({"player_uuid": PLAYER, "action": "set", "group": "admin", "changed_at": ago(now, 20)}),
    )
    .await;
    net.post("/api/plugin/chat", json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": "secret", "sent_at": ago(now, 10)})).await;
    net.post("/api/plugin/anticheat-flags", json!({"server_id": SERVER, "player_uuid": PLAYER, "check_name": "Reach", "violation_level": 1, "flagged_at": ago(now, 10)})).await;
    net.post("/api/plugin/punishments", json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "warning", "staff_uuid": PLAYER, "issued_at": ago(now, 10)})).await;
    let path = format!("/api/players/{PLAYER}");
    net.wait_for(&path, |b| {
        b["is_online"] == true
            && b["rank"] == "admin"
            && b["recent_punishments"].as_array().map(Vec::len) == Some(1)
            && b["recent_anticheat_flags"].as_array().map(Vec::len) == Some(1)
    })
    .await;
    net.wait_for(&format!("{path}/chatlog"), |b| items(b).len() == 1)
        .await;
    net.wait_for("/api/staff", |b| items(b).len() == 1).await;
    net.wait_for("/api/servers", |b| items(b).len() == 1).await;

    let other = net.other_account("Second Network").await;
    for suffix in ["", "/punishments", "/flags", "/chatlog"] {
        let (status, body) = get_as(&net.stack, &other, &format!("{path}{suffix}")).await;
        assert_eq!(
            (status, &body["code"]),
            (404, &json!("not_found")),
            "{suffix}"
        );
    }
    for list in ["/api/servers", "/api/staff"] {
        let (status, body) = get_as(&net.stack, &other, list).await;
        assert_eq!((status, &body["items"]), (200, &json!([])), "{list}");
    }

    // The same player and server on the second network: it sees only its own records.
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Elsewhere",
               "event": "join", "at": ago(now, 5)}),
    )
    .await;
    let body = wait_as(&net.stack, &other, &path, |b| b["username"] == "Elsewhere").await;
    assert_eq!(body["rank"], json!(null));
    assert_eq!(body["is_staff"], false);
    assert_eq!(body["recent_punishments"], json!([]));
    assert_eq!(body["recent_anticheat_flags"], json!([]));
    assert_eq!(body["joins"].as_array().map(Vec::len), Some(1));
    let (status, body) = get_as(&net.stack, &other, &format!("{path}/chatlog")).await;
    assert_eq!((status, &body["items"]), (200, &json!([])));
    let (_, body) = get_as(&net.stack, &other, "/api/servers").await;
    assert_eq!(
        body["items"],
        json!([]),
        "no heartbeat from the second network"
    );
    let (_, body) = net.get(&path).await;
    assert_eq!(body["username"], "Shared");
}
