//! Erasure covers every property of a player's custom events, not only those an
//! operator thought of listing. With no list at all, ingest seals every property value with
//! the player's key; the account keeps only the properties it names in clear
//! (`clear_properties`). Trends break down by sealed and clear properties alike (the projector
//! opens them), and once a player is erased no property value of theirs can be read from the
//! event log's raw messages: a fresh reader with every key that is left opens them as `null`,
//! but for the property kept in clear.

use crate::dashboard::{Network, ago, items, now};
use async_nats::jetstream;
use reqwest::Method;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::PrivacyConfig;
use uuid::Uuid;

/// Erased.
const EVE: &str = "e7a5e000-0000-4000-8000-0000000034e1";
/// Kept.
const KIM: &str = "e7a5e000-0000-4000-8000-0000000034c2";
const SERVER: &str = "e7a5e000-0000-4000-8000-000000003401";

/// A player's event properties: `item` is kept in clear, every other one is personal (a
/// string, a number, an object, a list), each value distinctive enough to find in raw bytes
/// (a number with a fraction: base64 has no `.`, so no sealed value can spell it).
fn properties(who: &str, score: f64) -> Value {
    json!({
        "email": format!("{who}@props.example.test"),
        "tier": format!("{who}-gold-tier"),
        "score": score,
        "address": {"street": format!("{who} lane 7"), "floors": [3, format!("{who}-attic")]},
        "item": format!("{who}-sword"),
    })
}

/// Every value of `properties(who, score)` that is personal, as it would stand in the log.
fn personal_texts(who: &str, score: f64) -> Vec<String> {
    vec![
        format!("{who}@props.example.test"),
        format!("{who}-gold-tier"),
        format!("{score}"),
        format!("{who} lane 7"),
        format!("{who}-attic"),
    ]
}

/// Every message of the event log, decoded but not opened.
async fn raw_messages(net: &Network) -> (String, Vec<LogMessage>) {
    let client = async_nats::connect(net.stack.nats.url())
        .await
        .expect("connect");
    let mut stream = jetstream::new(client)
        .get_stream(&net.stack.event_log.stream)
        .await
        .expect("the stream");
    let last = stream.info().await.expect("info").state.last_sequence;
    let (mut bytes, mut messages) = (Vec::new(), Vec::new());
    for sequence in 1..=last {
        let raw = stream.get_raw_message(sequence).await.expect("a message");
        messages.push(LogMessage::decode(&raw.payload).expect("a log message"));
        bytes.extend_from_slice(&raw.payload);
    }
    (
        String::from_utf8(bytes).expect("the log is UTF-8 JSON"),
        messages,
    )
}

/// Each custom event's properties in `messages`, opened by a new process (nothing cached),
/// by player.
async fn opened_properties(net: &Network, mut messages: Vec<LogMessage>) -> Vec<(Uuid, Value)> {
    let client = async_nats::connect(net.stack.nats.url())
        .await
        .expect("connect");
    let privacy = PrivacyConfig::from_vars(&net.stack.vars).expect("privacy settings");
    let keyring = privacy
        .keyring(&jetstream::new(client), &net.stack.event_log)
        .await
        .expect("the privacy buckets");
    keyring.open(&mut messages).await.expect("opened");
    let mut found = Vec::new();
    for message in messages {
        if let RecordBatch::Custom(events) = message.batch {
            for event in events {
                let props = event.record.properties.expect("properties");
                let value = serde_json::from_str(props.get()).expect("JSON");
                found.push((event.record.player_uuid, value));
            }
        }
    }
    found
}

/// The labels of a daily trend of `shop_purchase` broken down by `property`.
async fn breakdown(net: &Network, property: &str) -> Vec<String> {
    let body = json!({"what": {"event": "shop_purchase"}, "bucket": "day",
                      "breakdown": {"property": property}});
    let (status, answer) = net
        .stack
        .call(
            Method::POST,
            "/api/v1/trends",
            &net.account.dashboard_key,
            Some(body),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let mut labels: Vec<String> = answer["series"]
        .as_array()
        .expect("series")
        .iter()
        .filter(|s| s["other"] != true)
        .map(|s| s["label"].as_str().unwrap_or_default().to_owned())
        .collect();
    labels.sort();
    labels
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_property_is_sealed_unless_kept_clear_and_erasure_leaves_none_readable() {
    let net = Network::start("Properties Network").await;
    let path = format!("/api/admin/accounts/{}/privacy", net.account.id);
    let (status, answer) = net
        .stack
        .call(
            Method::PUT,
            &path,
            &net.stack.admin_key,
            Some(json!({"clear_properties": ["item"]})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let now = now();
    // A join each: erasure is for players the account has seen.
    for (player, name) in [(EVE, "PropsEve"), (KIM, "PropsKim")] {
        net.post(
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                   "event": "join", "at": ago(now, 120)}),
        )
        .await;
    }
    let (eve_score, kim_score) = (73_519.625, 61_407.375);
    net.post(
        "/api/v1/plugin/events",
        json!([
            {"player_uuid": EVE, "name": "shop_purchase", "occurred_at": ago(now, 60),
             "properties": properties("eve", eve_score)},
            {"player_uuid": KIM, "name": "shop_purchase", "occurred_at": ago(now, 50),
             "properties": properties("kim", kim_score)},
        ]),
    )
    .await;
    net.stack.projected().await.expect("projected");

    // In the log: property names and the clear-kept `item` readable, nothing else.
    let (raw, _) = raw_messages(&net).await;
    for text in personal_texts("eve", eve_score)
        .into_iter()
        .chain(personal_texts("kim", kim_score))
    {
        assert!(!raw.contains(&text), "{text:?} is in clear in the log");
    }
    for clear in [
        r#""item":"eve-sword""#,
        r#""item":"kim-sword""#,
        r#""email":"#,
        r#""address":"#,
    ] {
        assert!(raw.contains(clear), "{clear:?} is missing from the log");
    }
    // Analytics break down by a sealed property and a clear one (the projector opened them).
    assert_eq!(
        breakdown(&net, "tier").await,
        ["eve-gold-tier", "kim-gold-tier"]
    );
    assert_eq!(breakdown(&net, "item").await, ["eve-sword", "kim-sword"]);
    let (_, events) = net.get("/api/v1/events?name=shop_purchase").await;
    let eves: Vec<Value> = items(&events)
        .into_iter()
        .filter(|e| e["player_uuid"] == EVE)
        .collect();
    assert_eq!(eves[0]["properties"], properties("eve", eve_score));

    let erase = format!("/api/admin/accounts/{}/players/{EVE}/erase", net.account.id);
    let (status, answer) = net
        .stack
        .call(Method::POST, &erase, &net.stack.admin_key, None)
        .await;
    // The answer waits 5 s for the projector; past that it is 202 pending.
    assert!(status == 200 || status == 202, "{status}: {answer}");
    net.stack.projected().await.expect("projected");

    // The log's raw messages: a fresh reader opens none of Eve's property values (only the
    // one kept in clear), all of Kim's.
    let (_, messages) = raw_messages(&net).await;
    let opened = opened_properties(&net, messages).await;
    let of = |player: &str| -> Vec<Value> {
        let player: Uuid = player.parse().expect("a UUID");
        opened
            .iter()
            .filter(|(p, _)| *p == player)
            .map(|(_, v)| v.clone())
            .collect()
    };
    assert_eq!(
        of(EVE),
        [
            json!({"email": null, "tier": null, "score": null, "address": null,
                "item": "eve-sword"})
        ]
    );
    assert_eq!(of(KIM), [properties("kim", kim_score)]);

    // The read models are scrubbed as before: Eve's events keep no property, Kim's all.
    let (_, events) = net.get("/api/v1/events?name=shop_purchase").await;
    for event in items(&events) {
        let expected = if event["player_uuid"] == EVE {
            json!({})
        } else {
            properties("kim", kim_score)
        };
        assert_eq!(event["properties"], expected, "{event}");
    }
    assert_eq!(breakdown(&net, "tier").await, ["kim-gold-tier"]);
}
