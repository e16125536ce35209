//! Chat messages and commands through the plugin API, read back as the chatlog.

use crate::dashboard::{Network, ago, items, now, pages};
use serde_json::{Value, json};

const SERVER: &str = "5e000000-0000-4000-8000-000000000001";
const PLAYER: &str = "5e000000-0000-4000-8000-0000000000aa";

#[tokio::test]
async fn the_chatlog_is_newest_first_paged_and_limited() {
    let net = Network::start("Chat Network").await;
    let now = now();
    let line = |kind: &str, message: &str, at: i64| {
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Talker",
               "entry_type": kind, "message": message, "channel": "global", "sent_at": ago(now, at)})
    };
    net.post(
        "/api/plugin/chat",
        json!([
            line("chat", "hello", 50),
            line("command", "/spawn", 40),
            line("chat", "gg", 30),
            line("chat", "bye", 20),
            line("command", "/home", 10),
        ]),
    )
    .await;
    let path = format!("/api/players/{PLAYER}/chatlog");
    let body = net.wait_for(&path, |b| items(b).len() == 5).await;
    assert_eq!(body["next_cursor"], Value::Null);
    let list = items(&body);
    let messages: Vec<&str> = list.iter().filter_map(|c| c["message"].as_str()).collect();
    assert_eq!(messages, ["/home", "bye", "gg", "/spawn", "hello"]);
    let first = &list[0];
    for (field, value) in [
        ("entry_type", json!("command")),
        ("channel", json!("global")),
        ("server_id", json!(SERVER)),
        ("sent_at", json!(ago(now, 10))),
    ] {
        assert_eq!(first[field], value, "{field}: {first}");
    }
    assert!(first["id"].is_string());

    let paged = pages(&net, &format!("{path}?limit=2")).await;
    assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(paged.concat(), list);
    for bad in ["0", "501", "many"] {
        let (status, body) = net.get(&format!("{path}?limit={bad}")).await;
        assert_eq!(
            (status, &body["code"]),
            (422, &json!("validation_failed")),
            "{bad}"
        );
        assert_eq!(body["errors"][0]["field"], "limit");
    }
    let (status, _) = net.get(&format!("{path}?limit=500")).await;
    assert_eq!(status, 200);
}
