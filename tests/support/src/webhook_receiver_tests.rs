//! The receiver harness against the real receiver.py: kill and restart, modes, and our
//! signatures checked by the reference library.

use super::*;

#[tokio::test]
async fn kill_and_restart_keep_port_config_and_records() -> anyhow::Result<()> {
    let mut receiver = WebhookReceiver::start().await?;
    receiver
        .set_secrets(&["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        .await?;
    let http = reqwest::Client::new();
    // Unsigned: recorded, not verified.
    let status = http
        .post(receiver.url())
        .json(&json!({"type": "test"}))
        .send()
        .await?;
    assert_eq!(status.status(), 200);
    let received = receiver.received().await?;
    assert_eq!(received.len(), 1);
    assert!(!received[0].verified);
    assert_eq!(received[0].event_type.as_deref(), Some("test"));
    assert!(
        received[0]
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("Missing")
    );

    receiver.set_mode(ReceiverMode::Fail).await?;
    let port = receiver.port();
    receiver.kill();
    assert!(
        http.post(receiver.url()).send().await.is_err(),
        "killed, yet it answered"
    );
    receiver.restart().await?;
    assert_eq!(receiver.port(), port);
    let answer = http.post(receiver.url()).json(&json!({})).send().await?;
    assert_eq!(answer.status(), 503, "the mode survives a restart");
    let received = receiver.received().await?;
    assert_eq!(received.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(received[1].status, Some(503));

    receiver.set_mode(ReceiverMode::Hang).await?;
    let hung = http
        .post(receiver.url())
        .timeout(Duration::from_millis(300))
        .json(&json!({}))
        .send()
        .await;
    assert!(
        hung.is_err_and(|e| e.is_timeout()),
        "a hanging receiver answered"
    );
    assert_eq!(receiver.received().await?[2].status, None);
    Ok(())
}

/// Our signing (shared::alerts::signing) checked by the reference implementation: one
/// secret, two (a rotation), a secret the receiver does not know, and a tampered body.
#[tokio::test]
async fn the_reference_library_accepts_our_signatures() -> anyhow::Result<()> {
    use shared::alerts::signing::generate_secret;
    let (old, new) = (generate_secret(), generate_secret());
    let mut receiver = WebhookReceiver::start().await?;
    let url = receiver.url();
    let body: &[u8] = br#"{"type":"test","timestamp":"2026-01-01T00:00:00Z","data":{}}"#;
    receiver.set_secrets(&[&old]).await?;
    post_signed(&url, &[&old], body, body).await?;
    post_signed(&url, &[&new, &old], body, body).await?;
    receiver.set_secrets(&[&new]).await?;
    post_signed(&url, &[&new, &old], body, body).await?;
    post_signed(&url, &[&old], body, body).await?;
    post_signed(&url, &[&new], body, br#"{"type":"test","data":{"x":1}}"#).await?;
    let verdicts: Vec<bool> = receiver
        .received()
        .await?
        .iter()
        .map(|r| r.verified)
        .collect();
    assert_eq!(verdicts, [true, true, true, false, false]);
    Ok(())
}

/// POSTs `sent`, signed (as `signed`) with `secrets` now.
async fn post_signed(
    url: &str,
    secrets: &[&str],
    signed: &[u8],
    sent: &'static [u8],
) -> anyhow::Result<()> {
    use shared::alerts::signing::{message_id, signature_header};
    let id = message_id(Uuid::new_v4());
    let now = chrono_free_now();
    let signature = signature_header(secrets, &id, now, signed)?;
    reqwest::Client::new()
        .post(url)
        .header("webhook-id", id)
        .header("webhook-timestamp", now.to_string())
        .header("webhook-signature", signature)
        .header("content-type", "application/json")
        .body(sent)
        .send()
        .await?;
    Ok(())
}

fn chrono_free_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}
