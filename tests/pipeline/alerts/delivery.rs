//! A punishment written by a plugin arrives at a webhook, signed per the Standard Webhooks
//! specification (checked by the reference implementation), with the documented payload; the
//! delivery log shows it; a test event and a secret rotation are signed as promised.

use super::{AlertRig, PLAYER, SERVER, STAFF, punishment, webhook_id_of};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use test_support::Received;

const DEADLINE: Duration = pipeline_tests::WAIT;

#[tokio::test]
async fn a_punishment_reaches_the_webhook_signed_with_the_documented_payload() -> anyhow::Result<()>
{
    let mut rig = AlertRig::start(|vars| vars).await?;
    let (destination, _secret) = rig.webhook_destination().await?;
    let rule = rig.punishment_rule(&destination, &["ban"]).await?;
    // A mute does not match the rule's filter; the ban does.
    rig.post_punishments(json!([
        punishment("mute", "spam", "m-1"),
        punishment("ban", "x-ray", "b-1"),
    ]))
    .await?;

    let received = rig.receiver.wait_for_verified(1, DEADLINE).await?;
    let delivery = &received[0];
    assert!(delivery.verified, "{:?}", delivery.error);
    assert_eq!(delivery.status, Some(200));
    assert_eq!(delivery.user_agent.as_deref(), Some("Warden-Webhooks/1"));
    assert_eq!(delivery.content_type.as_deref(), Some("application/json"));
    let timestamp: i64 = delivery
        .webhook_timestamp
        .as_deref()
        .unwrap_or_default()
        .parse()?;
    let now = chrono::Utc::now().timestamp();
    assert!(
        (now - 60..=now + 1).contains(&timestamp),
        "{timestamp} vs {now}"
    );
    let body = &delivery.body;
    assert_eq!(body["type"], "punishment.issued");
    assert!(
        body["timestamp"]
            .as_str()
            .is_some_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()),
        "{body}"
    );
    let data = &body["data"];
    for (field, value) in [
        ("rule_id", json!(rule)),
        ("rule_name", json!("Punishments")),
        ("account_id", json!(rig.account.id)),
        ("punishment_type", json!("ban")),
        ("player_uuid", json!(PLAYER)),
        ("player_name", json!("Griefer")),
        ("reason", json!("x-ray")),
        ("staff_uuid", json!(STAFF)),
        ("staff_name", json!("ModMike")),
        ("server_id", json!(SERVER)),
        ("expires_at", Value::Null),
    ] {
        assert_eq!(data[field], value, "{field}: {data}");
    }
    assert!(data["punishment_id"].is_string(), "{data}");
    assert!(data["issued_at"].is_string(), "{data}");

    // Once the evaluator is past the write, the outbox is final for it: only the ban.
    rig.evaluated().await?;
    let log = rig
        .wait_deliveries(&destination, "the ban delivered", |log| {
            log.len() == 1 && log[0]["status"] == "delivered"
        })
        .await?;
    let entry = &log[0];
    let id = entry["id"].as_str().unwrap_or_default();
    assert_eq!(entry["webhook_id"], webhook_id_of(id));
    assert_eq!(
        delivery.webhook_id.as_deref(),
        Some(webhook_id_of(id).as_str())
    );
    assert_eq!(entry["event_type"], "punishment.issued");
    assert_eq!(entry["attempts"], 1);
    assert_eq!(entry["last_status_code"], 200);
    assert!(entry["delivered_at"].is_string(), "{entry}");
    let path = format!("/destinations/{destination}/deliveries/{id}");
    let (status, detail) = rig.admin(Method::GET, &path, None).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["payload"], *data, "the log keeps what was sent");
    let attempts = detail["attempt_log"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(attempts.len(), 1, "{detail}");
    assert_eq!(attempts[0]["status_code"], 200, "{detail}");

    // "Send again": the same delivery (same webhook-id) arrives a second time.
    let (status, body) = rig
        .admin(Method::POST, &format!("{path}/resend"), None)
        .await;
    assert_eq!(status, 202, "{body}");
    let again = rig
        .receiver
        .wait_until(DEADLINE, "the resent delivery", |all| {
            accepted_with_id(all, &webhook_id_of(id)) == 2
        })
        .await?;
    assert_eq!(again.len(), 2, "nothing else was sent");
    assert_eq!(again[1].body, again[0].body);
    Ok(())
}

#[tokio::test]
async fn a_test_event_and_a_rotated_secret_are_signed_as_promised() -> anyhow::Result<()> {
    let mut rig = AlertRig::start(|vars| vars).await?;
    let (destination, old_secret) = rig.webhook_destination().await?;
    let test_path = format!("/destinations/{destination}/test");

    let (status, body) = rig.admin(Method::POST, &test_path, None).await;
    assert_eq!(status, 202, "{body}");
    let received = rig.receiver.wait_for_verified(1, DEADLINE).await?;
    assert_eq!(received[0].event_type.as_deref(), Some("test"));
    let data = &received[0].body["data"];
    assert_eq!(data["destination_id"], destination.as_str());
    assert_eq!(data["message"], "A test event from Warden");
    let delivery_id = body["delivery_id"].as_str().unwrap_or_default();
    assert_eq!(
        received[0].webhook_id.as_deref(),
        Some(webhook_id_of(delivery_id).as_str())
    );

    let path = format!("/destinations/{destination}/rotate-secret");
    let (status, rotated) = rig.admin(Method::POST, &path, None).await;
    assert_eq!(status, 200, "{rotated}");
    let new_secret = rotated["secret"].as_str().unwrap_or_default().to_owned();
    assert!(new_secret.starts_with("whsec_") && new_secret != old_secret);
    assert!(rotated["previous_expires_at"].is_string(), "{rotated}");

    // Until the old secret expires both sign: a receiver knowing either one verifies.
    for (secrets, seen) in [(&new_secret, 2), (&old_secret, 3)] {
        rig.receiver.set_secrets(&[secrets]).await?;
        let (status, body) = rig.admin(Method::POST, &test_path, None).await;
        assert_eq!(status, 202, "{body}");
        let received = rig.receiver.wait_for_verified(seen, DEADLINE).await?;
        let last = received.last().map(|r| r.webhook_signature.clone());
        let signatures = last.flatten().unwrap_or_default();
        assert_eq!(signatures.matches("v1,").count(), 2, "{signatures}");
    }
    // And a receiver with another secret refuses it: the check can fail.
    rig.receiver
        .set_secrets(&["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        .await?;
    let (status, _) = rig.admin(Method::POST, &test_path, None).await;
    assert_eq!(status, 202);
    let received = rig
        .receiver
        .wait_until(DEADLINE, "a fourth request", |all| all.len() >= 4)
        .await?;
    assert!(
        !received[3].verified,
        "verified with a secret it was not signed with"
    );
    assert!(
        received[3]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("No matching signature")),
        "{:?}",
        received[3].error
    );
    Ok(())
}

#[tokio::test]
async fn link_local_and_private_addresses_stay_refused_when_loopback_is_allowed()
-> anyhow::Result<()> {
    let rig = AlertRig::start(|vars| vars).await?;
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/hook",
    ] {
        let (status, body) = rig
            .admin(
                Method::POST,
                "/destinations",
                Some(json!({"kind": "webhook", "url": url})),
            )
            .await;
        assert_eq!(
            (status, &body["code"]),
            (422, &json!("forbidden_address")),
            "{url}: {body}"
        );
    }
    Ok(())
}

/// How many times the request with `webhook_id` was accepted.
pub(crate) fn accepted_with_id(received: &[Received], webhook_id: &str) -> usize {
    received
        .iter()
        .filter(|r| r.accepted() && r.webhook_id.as_deref() == Some(webhook_id))
        .count()
}
