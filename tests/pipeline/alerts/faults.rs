//! Fault tests of delivery: a receiver that fails and then is down for a while gets everything
//! once back (each notification under one `webhook-id` however often it was tried), and a
//! receiver that hangs holds an attempt no longer than `NOTIFIER_TIMEOUT_MS`.

use super::{AlertRig, punishment};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use test_support::{ReceiverMode, by_webhook_id};

const DEADLINE: Duration = pipeline_tests::WAIT;
const NOTIFICATIONS: usize = 5;

#[tokio::test]
async fn a_receiver_down_for_a_while_gets_every_notification_once_back() -> anyhow::Result<()> {
    let mut rig = AlertRig::start(|vars| vars).await?;
    let (destination, _) = rig.webhook_destination().await?;
    rig.punishment_rule(&destination, &[]).await?;
    rig.receiver.set_mode(ReceiverMode::Fail).await?;
    let records: Vec<Value> = (0..NOTIFICATIONS)
        .map(|i| punishment("warning", &format!("warning {i}"), &format!("w-{i}")))
        .collect();
    rig.post_punishments(json!(records)).await?;

    // First it answers 503 to each of them...
    rig.receiver
        .wait_until(DEADLINE, "a 503 for every notification", |all| {
            by_webhook_id(all)
                .values()
                .filter(|group| group.iter().any(|r| r.status == Some(503)))
                .count()
                == NOTIFICATIONS
        })
        .await?;
    // ...then it is gone (connection refused) while every delivery is tried again at least
    // twice more.
    rig.receiver.kill();
    let failed_before: BTreeMap<String, i64> = rig
        .deliveries(&destination)
        .await?
        .iter()
        .map(|d| (text(&d["id"]), d["attempts"].as_i64().unwrap_or(0)))
        .collect();
    rig.wait_deliveries(
        &destination,
        "attempts while the receiver was down",
        |log| {
            log.len() == NOTIFICATIONS
                && log.iter().all(|d| {
                    let before = failed_before.get(&text(&d["id"])).copied().unwrap_or(0);
                    d["status"] == "pending"
                        && d["attempts"].as_i64().unwrap_or(0) >= before + 2
                        && d["last_status_code"].is_null()
                        && !d["last_error"].is_null()
                })
        },
    )
    .await?;
    rig.receiver.set_mode(ReceiverMode::Ok).await?;
    rig.receiver.restart().await?;

    let received = rig
        .receiver
        .wait_for_verified(NOTIFICATIONS, DEADLINE)
        .await?;
    let groups = by_webhook_id(&received);
    assert_eq!(
        groups.len(),
        NOTIFICATIONS,
        "one webhook-id per notification"
    );
    for (id, requests) in &groups {
        assert!(id.starts_with("msg_"), "{id}");
        assert!(requests.iter().all(|r| r.verified), "{id}: {requests:?}");
        assert!(requests.len() >= 2, "{id} was not retried: {requests:?}");
        assert!(
            requests.iter().all(|r| r.body == requests[0].body),
            "{id}: a retry changed the body"
        );
        assert_eq!(requests.last().and_then(|r| r.status), Some(200));
    }
    let reasons: BTreeSet<String> = groups
        .values()
        .map(|requests| text(&requests[0].body["data"]["reason"]))
        .collect();
    let expected: BTreeSet<String> = (0..NOTIFICATIONS).map(|i| format!("warning {i}")).collect();
    assert_eq!(reasons, expected);

    let log = rig
        .wait_deliveries(&destination, "every delivery delivered", |log| {
            log.iter().all(|d| d["status"] == "delivered")
        })
        .await?;
    assert_eq!(log.len(), NOTIFICATIONS);
    for entry in &log {
        assert!(entry["attempts"].as_i64().unwrap_or(0) >= 4, "{entry}");
        assert!(groups.contains_key(&text(&entry["webhook_id"])), "{entry}");
    }
    Ok(())
}

#[tokio::test]
async fn a_hanging_receiver_is_given_up_on_after_the_timeout_then_delivered() -> anyhow::Result<()>
{
    const TIMEOUT_MS: i64 = 700;
    let mut rig = AlertRig::start(|vars| vars.set("NOTIFIER_TIMEOUT_MS", TIMEOUT_MS)).await?;
    let (destination, _) = rig.webhook_destination().await?;
    rig.punishment_rule(&destination, &["kick"]).await?;
    rig.receiver.set_mode(ReceiverMode::Hang).await?;
    rig.post_punishments(punishment("kick", "afk", "k-1"))
        .await?;

    let hung = rig
        .receiver
        .wait_until(DEADLINE, "two hung attempts", |all| {
            all.iter().filter(|r| r.status.is_none()).count() >= 2
        })
        .await?;
    let log = rig
        .wait_deliveries(&destination, "a timed-out attempt", |log| {
            log.len() == 1
                && log[0]["attempts"].as_i64().unwrap_or(0) >= 1
                && !log[0]["last_error"].is_null()
        })
        .await?;
    let id = text(&log[0]["id"]);
    let path = format!("/destinations/{destination}/deliveries/{id}");
    let (status, detail) = rig.admin(reqwest::Method::GET, &path, None).await;
    assert_eq!(status, 200, "{detail}");
    let first = &detail["attempt_log"][0];
    let took = first["duration_ms"].as_i64().unwrap_or(-1);
    // Given up on at the timeout: not before it, and not at the 10 s default either.
    assert!(
        (TIMEOUT_MS - 50..TIMEOUT_MS + 3_000).contains(&took),
        "the hung attempt took {took} ms: {first}"
    );
    assert!(first["status_code"].is_null(), "{first}");
    assert!(!first["error"].is_null(), "{first}");

    rig.receiver.set_mode(ReceiverMode::Ok).await?;
    let received = rig.receiver.wait_for_verified(1, DEADLINE).await?;
    let ids: BTreeSet<String> = received
        .iter()
        .filter_map(|r| r.webhook_id.clone())
        .collect();
    assert_eq!(
        ids.len(),
        1,
        "every attempt carries the same webhook-id: {ids:?}"
    );
    assert_eq!(
        hung[0].webhook_id,
        received.last().and_then(|r| r.webhook_id.clone())
    );
    rig.wait_deliveries(&destination, "the delivery delivered", |log| {
        log[0]["status"] == "delivered" && log[0]["attempts"].as_i64().unwrap_or(0) >= 3
    })
    .await?;
    Ok(())
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}
