//! The erasure test's writes: a signed-in member, and everything personal of both players.

use super::{EVE, KIM, SERVER, SHARED_IP};
use crate::dashboard::{Network, ago, now};
use crate::member::Member;
use async_nats::jetstream;
use reqwest::Method;
use serde_json::json;
use shared::privacy::{PrivacyConfig, PrivacyPolicy};

/// Adds a note about `player` through the dashboard form.
async fn note(member: &Member, player: &str, text: &str, evidence: &str) {
    let form = [
        ("text", text),
        ("evidence", evidence),
        ("punishment_id", ""),
    ];
    let path = format!("/players/{player}/notes");
    let (status, _, _) = member.post_form(&path, &form, None).await;
    assert_eq!(status, 303, "the note is added");
}

/// Keeps the custom-event property `item` in clear (ingest seals every other one, `email`
/// among them).
pub(super) async fn keep_item_clear(net: &Network) {
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
    keyring.set_policy(account, &policy).await.expect("stored");
}

/// Everything personal, of both players.
pub(super) async fn write_both(net: &Network, owner: &Member) {
    let now = now();
    for (player, name, seconds) in [(EVE, "ErasedEve", 600), (KIM, "KeptKim", 590)] {
        net.post(
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                   "event": "join", "ip": SHARED_IP, "at": ago(now, seconds)}),
        )
        .await;
    }
    net.post(
        "/api/plugin/chat",
        json!([
            {"server_id": SERVER, "player_uuid": EVE, "player_name": "ErasedEve",
             "entry_type": "chat", "message": "eve meets the gang at the old mill",
             "channel": "global", "sent_at": ago(now, 500)},
            {"server_id": SERVER, "player_uuid": EVE, "player_name": "ErasedEve",
             "entry_type": "command", "message": "/home eve private spawn",
             "sent_at": ago(now, 495)},
            {"server_id": SERVER, "player_uuid": KIM, "player_name": "KeptKim",
             "entry_type": "chat", "message": "kim says hello to everyone",
             "channel": "global", "sent_at": ago(now, 490)},
        ]),
    )
    .await;
    // Each punishes the other: Eve's name as staff goes, Kim's reason stays.
    net.post(
        "/api/plugin/punishments",
        json!([
            {"server_id": SERVER, "player_uuid": EVE, "player_name": "ErasedEve", "type": "ban",
             "reason": "eve xray at the diamond vein", "staff_uuid": KIM,
             "staff_name": "KeptKim", "source_plugin": "litebans", "external_id": "77",
             "issued_at": ago(now, 400)},
            {"server_id": SERVER, "player_uuid": KIM, "player_name": "KeptKim",
             "type": "warning", "reason": "kim spammed the lobby", "staff_uuid": EVE,
             "staff_name": "ErasedEve", "issued_at": ago(now, 390)},
        ]),
    )
    .await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": EVE, "player_name": "ErasedEve",
               "type": "ban", "action": "revoke", "source_plugin": "litebans",
               "external_id": "77", "revoke_reason": "eve appeal accepted",
               "staff_uuid": KIM, "staff_name": "KeptKim", "issued_at": ago(now, 380)}),
    )
    .await;
    for (player, name) in [(EVE, "ErasedEve"), (KIM, "KeptKim")] {
        net.post(
            "/api/plugin/anticheat-flags",
            json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                   "check_name": "Reach", "violation_level": 2.0, "flagged_at": ago(now, 300)}),
        )
        .await;
    }
    net.post(
        "/api/plugin/rank-changes",
        json!({"player_uuid": KIM, "player_name": "KeptKim", "action": "add",
               "group": "helper", "staff_uuid": EVE, "staff_name": "ErasedEve",
               "changed_at": ago(now, 250)}),
    )
    .await;
    for (player, id, name) in [
        (EVE, "eve-discord-1111", "evie#1111"),
        (KIM, "kim-discord-2222", "kimmy#2222"),
    ] {
        net.post(
            "/api/plugin/account-links",
            json!({"player_uuid": player, "platform": "discord", "external_id": id,
                   "external_name": name, "action": "link", "at": ago(now, 200)}),
        )
        .await;
    }
    for (player, email) in [(EVE, "eve@example.test"), (KIM, "kim@example.test")] {
        let event = json!({"player_uuid": player, "name": "shop_purchase",
                           "occurred_at": ago(now, 100),
                           "properties": {"email": email, "item": "diamond_sword"}});
        let (status, answer) = net
            .stack
            .call(
                Method::POST,
                "/api/v1/plugin/events",
                &net.account.plugin_key,
                Some(event),
            )
            .await;
        assert_eq!(status, 202, "{answer}");
    }
    net.stack.projected().await.expect("projected");
    let clips = "https://clips.example.test/eve";
    note(owner, EVE, "note about eve and her clips", clips).await;
    note(owner, KIM, "note about kim and the lobby", "").await;
    net.stack.projected().await.expect("projected");
}
