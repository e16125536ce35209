//! Player profiles from sessions, rank changes and account links.

use crate::dashboard::{Network, ago, now};
use serde_json::{Value, json};

const SERVER: &str = "5b0f6a52-4c37-4c62-8d0e-3f1c2b9a7e01";
const PLAYER: &str = "0c3e7a1d-9b2f-4e65-a8d4-6f2b1c0e9d11";

#[tokio::test]
async fn a_profile_follows_names_ranks_and_links() {
    let net = Network::start("Players Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": 1, "max_players": 50}),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch", "event": "join",
               "at": ago(now, 30)}),
    )
    .await;
    let path = format!("/api/players/{PLAYER}");
    let body = net.wait_for(&path, |b| b["username"] == "Notch").await;
    assert_eq!(body["uuid"], PLAYER);
    assert_eq!(body["first_seen"], ago(now, 30));
    assert_eq!(body["rank"], Value::Null);
    assert_eq!(body["is_staff"], false);
    assert_eq!(body["linked_account"], Value::Null);
    assert_eq!(body["recent_punishments"], json!([]));
    assert_eq!(body["recent_anticheat_flags"], json!([]));

    // A rename, a staff group and a linked Discord account.
    net.post(
        "/api/plugin/rank-changes",
        json!({"player_uuid": PLAYER, "player_name": "Notch2", "action": "set", "group": "Admin",
               "previous_group": "default", "changed_at": ago(now, 20)}),
    )
    .await;
    net.post(
        "/api/plugin/account-links",
        json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "80351110224678912",
               "external_name": "notch", "action": "link", "at": ago(now, 10)}),
    )
    .await;
    let body = net
        .wait_for(&path, |b| {
            b["username"] == "Notch2" && b["rank"] == "Admin" && b["linked_account"].is_object()
        })
        .await;
    assert_eq!(body["is_staff"], true, "Admin is a default staff group");
    assert_eq!(
        body["linked_account"],
        json!({"platform": "discord", "external_id": "80351110224678912",
               "external_name": "notch", "linked_at": ago(now, 10)})
    );
    assert_eq!(body["first_seen"], ago(now, 30));

    // A temporary group that already expired falls back to the previous one.
    net.post(
        "/api/plugin/rank-changes",
        json!({"player_uuid": PLAYER, "action": "set", "group": "vip", "previous_group": "member",
               "expires_at": ago(now, 1), "changed_at": ago(now, 5)}),
    )
    .await;
    net.post(
        "/api/plugin/account-links",
        json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "80351110224678912",
               "action": "unlink", "at": ago(now, 4)}),
    )
    .await;
    let body = net
        .wait_for(&path, |b| {
            b["rank"] == "member" && b["linked_account"].is_null()
        })
        .await;
    assert_eq!(body["is_staff"], false);

    let (status, body) = net
        .get("/api/players/9f1c3b1e-0000-4000-8000-000000000000")
        .await;
    assert_eq!((status, &body["code"]), (404, &json!("not_found")));
    let (status, _) = net.get("/api/players/not-a-uuid").await;
    assert_eq!(status, 404);
}
