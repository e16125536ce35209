//! Sealing, the writers: every personal field a plugin or the dashboard writes is sealed in
//! the event log (its raw bytes hold none of them in clear, identifiers and non-personal
//! fields stay readable), while the read models, opened by the projector, show them in clear.
//! With `PRIVACY_ENCRYPTION=off` the log keeps them in clear.

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use async_nats::jetstream;
use pipeline_tests::TestStack;
use serde_json::{Value, json};
use shared::privacy::{PrivacyConfig, PrivacyPolicy};

const SERVER: &str = "5ea1ed00-0000-4000-8000-000000000001";
const PLAYER: &str = "5ea1ed00-0000-4000-8000-0000000000aa";
const STAFF: &str = "5ea1ed00-0000-4000-8000-0000000000bb";

/// Personal values written below, each distinctive enough to look for in raw bytes.
const PERSONAL: [&str; 9] = [
    "SealedSam",
    "meet me behind the old mill",
    "griefing the spawn castle",
    "ModMarlow",
    "discord-81828384",
    "sam#4242",
    "sam@example.test",
    "repeat offender, see the clip",
    "https://clips.example.test/sam-1",
];

/// The whole event log of `stack`, as text (the envelope is JSON).
async fn raw_log(stack: &TestStack) -> String {
    let client = async_nats::connect(stack.nats.url())
        .await
        .expect("connect");
    let mut stream = jetstream::new(client)
        .get_stream(&stack.event_log.stream)
        .await
        .expect("the stream");
    let last = stream.info().await.expect("info").state.last_sequence;
    let mut bytes = Vec::new();
    for sequence in 1..=last {
        let message = stream.get_raw_message(sequence).await.expect("a message");
        bytes.extend_from_slice(&message.payload);
    }
    String::from_utf8(bytes).expect("the log is UTF-8 JSON")
}

/// Keeps the custom-event property `item` in clear in the account's privacy policy (every
/// other property is sealed).
async fn keep_item_clear(net: &Network) {
    let client = async_nats::connect(net.stack.nats.url())
        .await
        .expect("connect");
    let privacy = PrivacyConfig::from_vars(&net.stack.vars).expect("privacy settings");
    let keyring = privacy
        .keyring(&jetstream::new(client), &net.stack.event_log)
        .await
        .expect("the privacy buckets");
    let policy = PrivacyPolicy {
        clear_properties: vec!["item".into()],
        ..PrivacyPolicy::default()
    };
    let account = net.account.id.parse().expect("an account id");
    keyring
        .set_policy(account, &policy)
        .await
        .expect("the policy is stored");
}

/// Signs `login` in and adds a note about [`PLAYER`] through the dashboard form.
async fn add_note(net: &Network, login: &str, text: &str, evidence: &str) {
    let member = Member::sign_in(&net.stack.base, login).await;
    let (status, _, _) = member
        .post_form(
            &format!("/players/{PLAYER}/notes"),
            &[
                ("text", text),
                ("evidence", evidence),
                ("punishment_id", ""),
            ],
            None,
        )
        .await;
    assert_eq!(status, 303, "the note is added");
}

/// One write of each kind with personal fields, and a note.
async fn write_everything_personal(net: &Network) {
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "SealedSam",
               "event": "join", "ip": "198.51.100.23", "at": ago(now, 300)}),
    )
    .await;
    net.post(
        "/api/plugin/chat",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "SealedSam",
               "entry_type": "chat", "message": "meet me behind the old mill",
               "channel": "global", "sent_at": ago(now, 240)}),
    )
    .await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "SealedSam",
               "type": "ban", "reason": "griefing the spawn castle", "staff_uuid": STAFF,
               "staff_name": "ModMarlow", "issued_at": ago(now, 180)}),
    )
    .await;
    net.post(
        "/api/plugin/account-links",
        json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "discord-81828384",
               "external_name": "sam#4242", "action": "link", "at": ago(now, 120)}),
    )
    .await;
    net.post(
        "/api/v1/plugin/events",
        json!([{"player_uuid": PLAYER, "name": "shop_purchase", "occurred_at": ago(now, 60),
                "properties": {"email": "sam@example.test", "item": "diamond_sword", "price": 250}}]),
    )
    .await;
    net.stack.projected().await.expect("projected");
    net.stack
        .create_member(&net.account.id, "mod@sealed.test", "Mo", "moderator")
        .await
        .expect("a member");
    add_note(
        net,
        "mod@sealed.test",
        "repeat offender, see the clip",
        "https://clips.example.test/sam-1",
    )
    .await;
    net.stack.projected().await.expect("projected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_holds_personal_fields_sealed_and_the_read_models_in_clear() {
    let net = Network::start("Sealed Network").await;
    keep_item_clear(&net).await;
    write_everything_personal(&net).await;

    let raw = raw_log(&net.stack).await;
    let ip_hash: String =
        sqlx::query_scalar("SELECT ip_hash FROM sessions WHERE player_uuid = $1::text::uuid")
            .bind(PLAYER)
            .fetch_one(&net.stack.db.pool)
            .await
            .expect("the session's IP hash");
    assert_eq!(ip_hash.len(), 64, "the projector stored the opened hash");
    for personal in PERSONAL.iter().copied().chain([ip_hash.as_str()]) {
        assert!(
            !raw.contains(personal),
            "{personal:?} is in clear in the log"
        );
    }
    for clear in [
        PLAYER,
        SERVER,
        STAFF,
        "shop_purchase",
        r#""item":"diamond_sword""#,
        r#""price":"#,
        "discord",
    ] {
        assert!(raw.contains(clear), "{clear:?} is missing from the log");
    }
    assert!(
        !raw.contains(r#""price":250"#),
        "a property not kept in clear is sealed"
    );

    // The projector opened everything: the read models and the API show it in clear.
    let (_, player) = net.get(&format!("/api/players/{PLAYER}")).await;
    assert_eq!(player["username"], "SealedSam", "{player}");
    assert_eq!(
        player["linked_account"]["external_id"], "discord-81828384",
        "{player}"
    );
    assert_eq!(player["linked_account"]["external_name"], "sam#4242");
    let (_, chat) = net.get(&format!("/api/players/{PLAYER}/chatlog")).await;
    assert_eq!(items(&chat)[0]["message"], "meet me behind the old mill");
    let (_, punishments) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    let punishment = &items(&punishments)[0];
    assert_eq!(
        punishment["reason"], "griefing the spawn castle",
        "{punishment}"
    );
    assert_eq!(punishment["staff_username"], "ModMarlow", "{punishment}");
    let (_, notes) = net.get(&format!("/api/players/{PLAYER}/notes")).await;
    let note = &items(&notes)[0];
    assert_eq!(note["text"], "repeat offender, see the clip", "{note}");
    assert_eq!(
        note["evidence"],
        json!(["https://clips.example.test/sam-1"])
    );
    let (_, events) = net.get("/api/v1/events?name=shop_purchase").await;
    let properties: Value = items(&events)[0]["properties"].clone();
    assert_eq!(
        properties,
        json!({"email": "sam@example.test", "item": "diamond_sword", "price": 250})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_encryption_off_the_log_keeps_personal_fields_in_clear() {
    let stack = TestStack::start_with(|vars| vars.set("PRIVACY_ENCRYPTION", "off"))
        .await
        .expect("stack starts");
    let account = stack
        .create_account("Clear Network")
        .await
        .expect("account");
    let net = Network { stack, account };
    keep_item_clear(&net).await;
    write_everything_personal(&net).await;
    let raw = raw_log(&net.stack).await;
    for personal in PERSONAL {
        assert!(raw.contains(personal), "{personal:?} was sealed");
    }
    assert!(!raw.contains("\\u0000w1."), "nothing is sealed");
    let (_, chat) = net.get(&format!("/api/players/{PLAYER}/chatlog")).await;
    assert_eq!(items(&chat)[0]["message"], "meet me behind the old mill");
}
