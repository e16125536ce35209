//! The staff roster: staff groups (the account's own or the defaults) and recent punishers.

use crate::dashboard::{Network, ago, items, now};
use serde_json::{Value, json};

const SERVER: &str = "6f000000-0000-4000-8000-000000000001";
const MODERATOR: &str = "6f000000-0000-4000-8000-0000000000a1";
const BUILDER: &str = "6f000000-0000-4000-8000-0000000000a2";
const OFFENDER: &str = "6f000000-0000-4000-8000-0000000000a3";
const CONSOLE_MOD: &str = "6f000000-0000-4000-8000-0000000000a4";

#[tokio::test]
async fn staff_are_group_members_and_recent_punishers() {
    let net = Network::start("Staff Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Hub", "tps": 20, "player_count": 2, "max_players": 50}),
    )
    .await;
    let rank = |player: &str, name: &str, group: &str| {
        json!({"player_uuid": player, "player_name": name, "action": "set", "group": group,
               "changed_at": ago(now, 60)})
    };
    net.post(
        "/api/plugin/rank-changes",
        json!([
            rank(MODERATOR, "Mia", "Moderator"),
            rank(BUILDER, "Bo", "Builder")
        ]),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": MODERATOR, "player_name": "Mia", "event": "join",
               "at": ago(now, 30)}),
    )
    .await;
    // Someone who is not a player on this network but punished recently, and a punishment
    // older than 30 days, which makes nobody staff.
    net.post(
        "/api/plugin/punishments",
        json!([
            {"server_id": SERVER, "player_uuid": OFFENDER, "player_name": "Rude", "type": "warning",
             "staff_uuid": CONSOLE_MOD, "staff_name": "WebPanelMod", "issued_at": ago(now, 86_400)},
            {"server_id": SERVER, "player_uuid": OFFENDER, "type": "kick",
             "staff_uuid": BUILDER, "staff_name": "Bo", "issued_at": ago(now, 31 * 86_400)},
        ]),
    )
    .await;

    let body = net
        .wait_for("/api/staff", |b| {
            items(b).len() == 2 && b["items"][0]["is_online"] == true
        })
        .await;
    assert_eq!(
        items(&body)[0],
        json!({"uuid": MODERATOR, "username": "Mia", "rank": "Moderator", "is_online": true,
               "current_server_id": SERVER, "last_seen": items(&body)[0]["last_seen"],
               "session_started_at": items(&body)[0]["session_started_at"]})
    );
    assert!(body["items"][0]["last_seen"].is_string());
    assert!(body["items"][0]["session_started_at"].is_string());
    assert_eq!(
        items(&body)[1],
        json!({"uuid": CONSOLE_MOD, "username": "WebPanelMod", "rank": null, "is_online": false,
               "current_server_id": null, "last_seen": null, "session_started_at": null})
    );

    // The account's own staff groups replace the defaults (matched case-insensitively).
    net.settings(&["builder"], 15).await;
    let body = net
        .wait_for("/api/staff", |b| {
            items(b).iter().any(|s| s["uuid"] == BUILDER)
        })
        .await;
    let uuids: Vec<Value> = items(&body).iter().map(|s| s["uuid"].clone()).collect();
    assert_eq!(uuids, [json!(BUILDER), json!(CONSOLE_MOD)]);
    let (status, profile) = net.get(&format!("/api/players/{MODERATOR}")).await;
    assert_eq!((status, &profile["is_staff"]), (200, &json!(false)));
    let (status, profile) = net.get(&format!("/api/players/{BUILDER}")).await;
    assert_eq!((status, &profile["is_staff"]), (200, &json!(true)));
}
