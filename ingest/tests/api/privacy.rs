//! Ingest seals every personal field before the append. The log's bytes hold none
//! of them in clear (identifiers and non-personal fields stay readable), the keys open them
//! again, `PRIVACY_ENCRYPTION=off` leaves them clear, and a key bucket ingest cannot reach
//! refuses the write with nothing appended.

use crate::helpers::{PLAYER, SERVER, TestIngest};
use async_nats::jetstream;
use serde_json::{Value, json};
use shared::envelope::RecordBatch;
use shared::privacy::{PrivacyBuckets, PrivacyPolicy, is_sealed};

const STAFF: &str = "3b0c1c1e-5a1d-4c1e-9d3e-2f1a0b9c8d7e";

/// Personal values the writes below carry, each distinctive enough to find in raw bytes.
const PERSONAL: [&str; 10] = [
    "TalkerTom",
    "meet me at the old mill",
    "NotchSession",
    "x-ray mining below y12",
    "ModMira",
    "appeal accepted on review",
    "discord-98765",
    "notch#0001",
    "notch@example.test",
    "FlaggedFred",
];

/// One write of each kind with personal fields, after keeping the custom-event property
/// `crate` in clear (every other property is sealed).
async fn write_everything_personal(ingest: &TestIngest) {
    let policy = PrivacyPolicy {
        clear_properties: vec!["crate".into()],
        ..PrivacyPolicy::default()
    };
    ingest
        .keyring()
        .await
        .set_policy(ingest.account_id, &policy)
        .await
        .expect("the policy is stored");
    let writes = [
        (
            "/api/plugin/chat",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "TalkerTom",
                   "entry_type": "chat", "message": "meet me at the old mill", "channel": "global"}),
        ),
        (
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "NotchSession",
                   "event": "join", "ip": "203.0.113.77", "client_version": "1.21.4"}),
        ),
        (
            "/api/plugin/punishments",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban",
                   "reason": "x-ray mining below y12", "staff_uuid": STAFF, "staff_name": "ModMira",
                   "source_plugin": "litebans", "external_id": "42"}),
        ),
        (
            "/api/plugin/punishments",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban", "action": "revoke",
                   "revoke_reason": "appeal accepted on review", "source_plugin": "litebans",
                   "external_id": "42"}),
        ),
        (
            "/api/plugin/account-links",
            json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "discord-98765",
                   "external_name": "notch#0001", "action": "link"}),
        ),
        (
            "/api/plugin/anticheat-flags",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "FlaggedFred",
                   "check_name": "Reach", "violation_level": 3.5}),
        ),
        (
            "/api/v1/plugin/events",
            json!({"player_uuid": PLAYER, "name": "crate_opened",
                   "properties": {"email": "notch@example.test", "crate": "legendary_crate", "count": 7}}),
        ),
    ];
    for (path, body) in writes {
        let (status, response) = ingest.post(path, body).await;
        assert_eq!(status, 202, "{path}: {response}");
    }
}

/// The whole log as text (the envelope is JSON).
async fn raw_log(ingest: &TestIngest) -> String {
    let bytes: Vec<u8> = ingest
        .log_messages()
        .await
        .into_iter()
        .flat_map(|(_, bytes)| bytes)
        .collect();
    String::from_utf8(bytes).expect("the log is UTF-8 JSON")
}

/// The session's IP hash, as readers see it once opened.
async fn opened_ip_hash(ingest: &TestIngest) -> String {
    ingest
        .decoded_log()
        .await
        .into_iter()
        .find_map(|(_, message)| match message.batch {
            RecordBatch::Session(records) => records[0].record.ip_hash.clone(),
            _ => None,
        })
        .expect("the session's IP hash")
}

#[tokio::test]
async fn personal_fields_are_sealed_in_the_log_and_identifiers_stay_clear() {
    let ingest = TestIngest::start().await;
    write_everything_personal(&ingest).await;
    let raw = raw_log(&ingest).await;
    let ip_hash = opened_ip_hash(&ingest).await;
    for personal in PERSONAL.iter().copied().chain([ip_hash.as_str()]) {
        assert!(
            !raw.contains(personal),
            "{personal:?} is in clear in the log"
        );
    }
    // Joins, filters and subjects still work on what stays clear.
    for clear in [
        PLAYER,
        SERVER,
        STAFF,
        "crate_opened",
        r#""crate":"legendary_crate""#,
        r#""count":"#,
        "litebans",
        "Reach",
        "1.21.4",
        "global",
    ] {
        assert!(raw.contains(clear), "{clear:?} is missing from the log");
    }
    assert!(
        !raw.contains(r#""count":7"#),
        "a property not kept in clear is sealed"
    );

    // Every reader opens them again with the keys.
    let log = ingest.decoded_log().await;
    let opened = serde_json::to_string(
        &log.iter()
            .map(|(_, message)| serde_json::from_slice::<Value>(&message.encode()))
            .collect::<Result<Vec<_>, _>>()
            .expect("JSON"),
    )
    .expect("text");
    for personal in PERSONAL {
        assert!(opened.contains(personal), "{personal:?} does not open");
    }
    let custom = log
        .iter()
        .find_map(|(_, message)| match &message.batch {
            RecordBatch::Custom(events) => events[0].record.properties.clone(),
            _ => None,
        })
        .expect("the custom event");
    let properties: Value = serde_json::from_str(custom.get()).expect("JSON");
    assert_eq!(
        properties,
        json!({"email": "notch@example.test", "crate": "legendary_crate", "count": 7})
    );
    assert_eq!(ip_hash.len(), 64, "a hex SHA-256: {ip_hash}");
}

#[tokio::test]
async fn sealed_values_in_the_log_are_marked_sealed() {
    let ingest = TestIngest::start().await;
    write_everything_personal(&ingest).await;
    for (_, message) in ingest.sealed_log().await {
        match message.batch {
            RecordBatch::Chat(records) => {
                let chat = &records[0].record;
                assert!(is_sealed(&chat.message), "{:?}", chat.message);
                assert!(is_sealed(chat.player_name.as_deref().expect("a name")));
            }
            RecordBatch::Session(records) => {
                let session = &records[0].record;
                assert!(is_sealed(&session.player_name));
                assert!(is_sealed(session.ip_hash.as_deref().expect("a hash")));
                assert_eq!(session.client_version.as_deref(), Some("1.21.4"));
            }
            RecordBatch::AccountLink(records) => {
                let link = &records[0].record;
                assert!(is_sealed(&link.external_id));
                assert_eq!(link.platform, "discord");
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn with_encryption_off_personal_fields_stay_clear() {
    let ingest = TestIngest::start_configured(|config| config.privacy.seal = false).await;
    write_everything_personal(&ingest).await;
    let raw = raw_log(&ingest).await;
    for personal in PERSONAL {
        assert!(raw.contains(personal), "{personal:?} was sealed");
    }
    assert!(!raw.contains("\\u0000w1."), "nothing is sealed: {raw}");
}

#[tokio::test]
async fn without_its_key_bucket_a_personal_write_is_503_and_nothing_is_appended() {
    let ingest = TestIngest::start().await;
    let client = async_nats::connect(ingest.nats.url())
        .await
        .expect("connect");
    let buckets = PrivacyBuckets::of(&ingest.log);
    jetstream::new(client)
        .delete_key_value(&buckets.players.bucket)
        .await
        .expect("the players' key bucket is deleted");

    let chat = json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat",
                      "message": "no key, no log"});
    let response = ingest
        .post_raw(
            "/api/plugin/chat",
            &ingest.plugin_key,
            "application/json",
            chat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    assert!(response.headers().contains_key("retry-after"));
    let problem: Value = response.json().await.expect("problem details");
    assert_eq!(problem["code"], "unavailable", "{problem}");
    assert!(
        !problem.to_string().contains(&buckets.players.bucket),
        "no internals: {problem}"
    );
    assert!(ingest.log_messages().await.is_empty(), "nothing appended");

    // What holds nothing personal needs no key and is still taken.
    let heartbeat = json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10});
    assert_eq!(ingest.post("/api/plugin/heartbeat", heartbeat).await.0, 202);
    assert_eq!(ingest.log_messages().await.len(), 1);
}

#[tokio::test]
async fn a_burst_of_more_new_players_than_key_fetch_slots_is_sealed_and_opens() {
    // 8 writes at once of 100 chat lines, each line by a player never seen: 800 keys to make,
    // more than a write fetches at once (64) and than the process does (256), so writes wait
    // for fetch slots held by the others (keyring::fetch) and must all get through.
    let ingest = TestIngest::start().await;
    let batches: Vec<Value> = (0..8)
        .map(|batch| {
            let records: Vec<Value> = (0..100)
                .map(|line| {
                    json!({"server_id": SERVER, "player_uuid": uuid::Uuid::new_v4(),
                           "player_name": format!("Burst{batch}x{line}"), "entry_type": "chat",
                           "message": format!("burst line {batch}/{line}")})
                })
                .collect();
            Value::Array(records)
        })
        .collect();
    let writes = batches
        .into_iter()
        .map(|batch| ingest.post("/api/plugin/chat", batch));
    let answers = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        futures::future::join_all(writes),
    )
    .await
    .expect("every write is answered within 60 s");
    for (status, body) in answers {
        assert_eq!(status, 202, "{body}");
        assert_eq!(body["accepted"], 100, "{body}");
    }
    assert!(!raw_log(&ingest).await.contains("burst line"), "sealed");
    let opened: Vec<String> = ingest
        .decoded_log()
        .await
        .into_iter()
        .flat_map(|(_, message)| match message.batch {
            RecordBatch::Chat(records) => records.into_iter().map(|r| r.record.message).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(opened.len(), 800);
    for batch in 0..8 {
        for line in 0..100 {
            let text = format!("burst line {batch}/{line}");
            assert!(opened.contains(&text), "{text:?} does not open");
        }
    }
}

/// With no policy at all, every property value of a custom event is sealed (not only
/// listed ones), whatever its type; the names stay readable and the keys open the values to
/// exactly what was sent.
#[tokio::test]
async fn without_a_policy_every_custom_event_property_is_sealed() {
    let ingest = TestIngest::start().await;
    let properties = json!({
        "email": "nora@example.test",
        "count": 9_371.5,
        "flag": true,
        "address": {"street": "nora lane 4", "rooms": [2, "nora-loft"]},
    });
    let (status, response) = ingest
        .post(
            "/api/v1/plugin/events",
            json!({"player_uuid": PLAYER, "name": "crate_opened", "properties": properties}),
        )
        .await;
    assert_eq!(status, 202, "{response}");
    let raw = raw_log(&ingest).await;
    for personal in ["nora@example.test", "9371.5", "nora lane 4", "nora-loft"] {
        assert!(!raw.contains(personal), "{personal:?} is in clear: {raw}");
    }
    for name in [r#""email":"#, r#""count":"#, r#""flag":"#, r#""address":"#] {
        assert!(raw.contains(name), "{name} is missing from the log");
    }
    let sealed = ingest
        .sealed_log()
        .await
        .into_iter()
        .find_map(|(_, message)| match message.batch {
            RecordBatch::Custom(events) => events[0].record.properties.clone(),
            _ => None,
        })
        .expect("the custom event");
    let sealed: serde_json::Map<String, Value> =
        serde_json::from_str(sealed.get()).expect("an object");
    assert!(
        sealed.values().all(|v| v.as_str().is_some_and(is_sealed)),
        "{sealed:?}"
    );
    let opened = ingest
        .decoded_log()
        .await
        .into_iter()
        .find_map(|(_, message)| match message.batch {
            RecordBatch::Custom(events) => events[0].record.properties.clone(),
            _ => None,
        })
        .expect("the custom event");
    let opened: Value = serde_json::from_str(opened.get()).expect("JSON");
    assert_eq!(opened, properties);
}
