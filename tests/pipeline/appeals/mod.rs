//! The appeals inbox end to end: players' appeals (appended to the event log as the public
//! appeal form does) listed by status for moderators and decided by them ([`inbox`],
//! [`decide`]), a decision the log did not confirm sent again ([`outage`]), and the inbox in a
//! real browser ([`browser`]).

mod browser;
mod decide;
mod inbox;
mod outage;

use crate::dashboard::{Network, ago, items, now};
use chrono::Utc;
use pipeline_tests::TestStack;
use reqwest::Method;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged};
use shared::privacy::{PrivacyConfig, PrivacyPolicy};
use shared::publisher::Publisher;
use shared::records::{Appeal, AppealStep};
use std::time::Duration;
use uuid::Uuid;

const SERVER: &str = "a99ea100-0000-4000-8000-000000000001";
const PLAYER: &str = "a99ea100-0000-4000-8000-0000000000a1";

/// A network where [`PLAYER`] ("Appealer") played and got a ban for each `(reason, issued
/// seconds ago, ends in seconds ago or None for permanent)`; returns it with the bans' ids.
pub(super) async fn banned(name: &str, bans: &[(&str, i64, Option<i64>)]) -> (Network, Vec<Uuid>) {
    let net = Network::start(name).await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "event": "join", "at": ago(now, 7200)}),
    )
    .await;
    let records: Vec<Value> = bans
        .iter()
        .enumerate()
        .map(|(i, (reason, issued, ends))| {
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
                   "type": "ban", "reason": reason, "staff_name": "ModMike",
                   "issued_at": ago(now, *issued), "expires_at": ends.map(|e| ago(now, e)),
                   "scope": "global", "source_plugin": "litebans",
                   "external_id": (i + 1).to_string()})
        })
        .collect();
    net.post("/api/plugin/punishments", Value::Array(records))
        .await;
    net.stack.projected().await.expect("projected");
    let mut ids = Vec::new();
    for (reason, _, _) in bans {
        ids.push(punishment_id(&net, reason).await);
    }
    (net, ids)
}

/// [`PLAYER`]'s appeal of `punishment`, stored (the projector caught up).
pub(super) async fn appeal(net: &Network, punishment: Uuid, message: &str) -> Uuid {
    let player = PLAYER.parse().expect("uuid");
    let id = submit(&net.stack, &net.account.id, punishment, player, message).await;
    net.stack.projected().await.expect("projected");
    id
}

/// The revoke actions of the servers' action feed.
pub(super) async fn feed_revokes(net: &Network) -> Vec<Value> {
    let path = "/api/plugin/actions?after=0&wait=0";
    let (status, feed) = net
        .stack
        .call(Method::GET, path, &net.account.plugin_key, None)
        .await;
    assert_eq!(status, 200, "{feed}");
    let actions = feed["actions"].as_array().expect("actions");
    actions
        .iter()
        .filter(|a| a["type"] == "revoke")
        .cloned()
        .collect()
}

/// Appends a player's appeal of `punishment` to the account's event log, sealed and under the
/// message id the public form uses; returns the appeal's id.
pub(super) async fn submit(
    stack: &TestStack,
    account: &str,
    punishment: Uuid,
    player: Uuid,
    message: &str,
) -> Uuid {
    let account: Uuid = account.parse().expect("an account id");
    let client = async_nats::connect(stack.nats.url()).await.expect("nats");
    let js = async_nats::jetstream::new(client.clone());
    let keyring = PrivacyConfig::from_vars(&stack.vars)
        .expect("privacy settings")
        .keyring(&js, &stack.event_log)
        .await
        .expect("the privacy buckets");
    let subjects = shared::nats::open_event_stream(&js, &stack.event_log)
        .await
        .expect("the event stream")
        .subjects;
    let id = Uuid::now_v7();
    let at = Utc::now();
    let appeal = Appeal {
        id,
        step: AppealStep::Submitted,
        punishment_id: punishment,
        player_uuid: player,
        message: Some(message.to_owned()),
        reply: None,
        by: None,
        revoke_action: None,
        at,
    };
    appeal.validate(at).expect("a valid appeal");
    let batch = Appeal::into_batch(vec![Logged {
        id: Uuid::now_v7(),
        record: appeal,
    }]);
    let mut message = LogMessage::new(account, at, batch);
    keyring
        .seal(&mut message, &PrivacyPolicy::default())
        .await
        .expect("sealed");
    let publisher = Publisher::new(
        client,
        stack.event_log.stream.clone(),
        Duration::from_secs(5),
        "test_appeal_publish_seconds",
    );
    publisher
        .append(
            subjects.for_records(account, Appeal::KIND, None),
            Some(format!("appeal_submitted:{account}:{id}")),
            message.encode(),
        )
        .await
        .expect("the appeal is appended");
    id
}

/// The player's punishments as the API lists them.
pub(super) async fn punishments(net: &Network) -> Vec<Value> {
    let (status, page) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    assert_eq!(status, 200, "{page}");
    items(&page)
}

/// The id of the player's punishment given for `reason`.
pub(super) async fn punishment_id(net: &Network, reason: &str) -> Uuid {
    let found = punishments(net).await;
    let item = found
        .iter()
        .find(|p| p["reason"] == reason)
        .unwrap_or_else(|| panic!("no punishment for {reason}: {found:?}"));
    item["id"].as_str().expect("an id").parse().expect("a uuid")
}

/// The appeal's stored status and revoke action.
pub(super) async fn stored(net: &Network, id: Uuid) -> (String, Option<Uuid>) {
    sqlx::query_as("SELECT status, revoke_action FROM appeals WHERE id = $1")
        .bind(id)
        .fetch_one(&net.stack.db.pool)
        .await
        .expect("the appeal row")
}

pub(super) fn decision<'a>(step: &'a str, reply: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![("step", step), ("reply", reply), ("action_id", "")]
}
