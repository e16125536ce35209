//! Tests of building and sending one attempt (no database).

use super::*;
use shared::config::Vars;

fn sender(policy: NetworkPolicy) -> anyhow::Result<Sender> {
    let config = DeliveryConfig::from_vars(&Vars::empty().set("NOTIFIER_TIMEOUT_MS", 2000))?;
    Sender::new(&config, policy, SealingKey::new(&"k".repeat(32))?)
}

/// The client itself (not only `check_url`) refuses a name that resolves to a refused
/// address: nothing reaches the listener under the strict policy, and the same request
/// goes through once loopback is allowed.
#[tokio::test]
async fn the_client_connects_only_to_addresses_the_policy_allows() -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://localhost:{}/", listener.local_addr()?.port());

    let strict = sender(NetworkPolicy::default())?;
    let refused = strict.client.get(&url).send().await;
    let error = refused
        .map(|_| ())
        .expect_err("localhost reached under a strict policy");
    assert!(strict.describe(error).contains("network policy refuses"));
    let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(accepted.is_err(), "the strict client connected");

    let open = sender(NetworkPolicy::allow_loopback())?;
    let request = tokio::spawn(async move { open.client.get(&url).send().await });
    let connected = tokio::time::timeout(Duration::from_secs(5), listener.accept()).await;
    assert!(
        matches!(connected, Ok(Ok(_))),
        "the open client did not connect"
    );
    request.abort();
    Ok(())
}

fn claimed(kind: &str, url: &str, key: &SealingKey) -> Claimed {
    let destination_id = uuid::Uuid::now_v7();
    Claimed {
        id: uuid::Uuid::now_v7(),
        destination_id,
        attempt: 1,
        event_type: "test".to_owned(),
        payload: serde_json::json!({"message": "A test event from Warden"}),
        occurred_at: Utc::now(),
        kind: kind.to_owned(),
        url: url.to_owned(),
        secret_sealed: (kind == "webhook")
            .then(|| key.seal(destination_id.as_bytes(), &signing::generate_secret())),
        previous_secret_sealed: None,
        previous_secret_expires_at: None,
    }
}

#[test]
fn a_discord_request_carries_the_embed_and_no_signature() -> anyhow::Result<()> {
    let sender = sender(NetworkPolicy::default())?;
    let claimed = claimed(
        "discord",
        "https://discord.com/api/webhooks/123/tok3n-secret",
        &sender.sealing_key,
    );
    let request = sender
        .prepare(&claimed)
        .map_err(anyhow::Error::msg)?
        .build()?;
    assert!(request.headers().get("webhook-signature").is_none());
    assert_eq!(request.headers()[CONTENT_TYPE], "application/json");
    let body: serde_json::Value = serde_json::from_slice(
        request
            .body()
            .and_then(|b| b.as_bytes())
            .unwrap_or_default(),
    )?;
    assert_eq!(body, discord::render("test", &claimed.payload));
    Ok(())
}

#[test]
fn a_webhook_whose_secret_cannot_be_opened_is_not_sent() -> anyhow::Result<()> {
    let sender = sender(NetworkPolicy::allow_loopback())?;
    let other_key = SealingKey::new(&"o".repeat(32))?;
    let claimed = claimed("webhook", "http://127.0.0.1:9/hook", &other_key);
    let error = sender.prepare(&claimed).err().unwrap_or_default();
    assert!(error.contains("WEBHOOK_SECRETS_KEY"), "{error}");
    Ok(())
}

/// A Discord URL holds its token: an attempt's error text (stored, shown, logged) must not.
#[tokio::test]
async fn error_text_never_holds_the_url() -> anyhow::Result<()> {
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let sender = sender(NetworkPolicy::allow_loopback())?;
    let error = sender
        .client
        .post("http://127.0.0.1:9/api/webhooks/123/tok3n-secret")
        .send()
        .await
        .map(|_| ())
        .expect_err("nothing listens on port 9");
    let text = sender.describe(error);
    assert!(text.starts_with("could not connect"), "{text}");
    assert!(!text.contains("tok3n"), "{text}");
    Ok(())
}

#[test]
fn error_text_is_cut_on_a_character_boundary() {
    assert_eq!(truncate("héllo".to_owned(), 2), "h");
    assert_eq!(truncate("hello".to_owned(), 10), "hello");
}
