//! Appeal links: the `appeal` object the action feed adds to each ban, and
//! `POST /api/plugin/appeal-links`, against a real nats-server. Each link's token is checked
//! with the account's link key, as the appeal form checks it.

use crate::actions::write_issue;
use crate::helpers::TestIngest;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use shared::appeal_link::{AppealClaims, Unverified};
use shared::keys::KeyKind;
use uuid::Uuid;

const PATH: &str = "/api/plugin/appeal-links";

/// The feed's actions (`wait=0`), sent with `host` as the `Host` header when given.
async fn feed(ingest: &TestIngest, host: Option<&str>) -> Vec<Value> {
    let mut request = ingest
        .http
        .get(format!("{}/api/plugin/actions?wait=0", ingest.base))
        .bearer_auth(&ingest.plugin_key);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.expect("sent");
    assert_eq!(response.status(), 200);
    let page: Value = response.json().await.expect("json");
    page["actions"].as_array().cloned().unwrap_or_default()
}

/// `url`'s claims, checked with `account`'s link key, once it starts with `base` + `/appeal/`.
async fn claims(ingest: &TestIngest, url: &str, base: &str) -> AppealClaims {
    let token = url
        .strip_prefix(&format!("{base}/appeal/"))
        .unwrap_or_else(|| panic!("{url} is not under {base}/appeal/"));
    let unverified = Unverified::read(token).expect("a token");
    let key = ingest
        .keyring()
        .await
        .link_key(unverified.account_id())
        .await
        .expect("the link key");
    unverified.verify(&key, Utc::now()).expect("valid")
}

/// `expires_at` read back, and checked to be about 30 days off.
fn thirty_days_off(value: &Value) -> DateTime<Utc> {
    let at: DateTime<Utc> = serde_json::from_value(value.clone()).expect("an RFC 3339 time");
    let left = at - Utc::now();
    assert!(
        left > Duration::days(29) && left <= Duration::days(30),
        "{at}"
    );
    at
}

#[tokio::test]
async fn each_ban_on_the_feed_carries_a_signed_link_to_the_request_host() {
    let ingest = TestIngest::start().await;
    let ban = write_issue(&ingest, ingest.account_id, "ban", "griefing").await;
    write_issue(&ingest, ingest.account_id, "kick", "afk").await;
    let actions = feed(&ingest, None).await;
    assert_eq!(actions.len(), 2);
    assert!(actions[1].get("appeal").is_none(), "a kick has no appeal");
    let appeal = &actions[0]["appeal"];
    let url = appeal["url"].as_str().expect("a url");
    // The test reaches ingest on 127.0.0.1: a loopback host is plain http.
    let signed = claims(&ingest, url, &ingest.base).await;
    assert_eq!(
        (signed.account_id, signed.punishment_id),
        (ingest.account_id, ban)
    );
    assert_eq!(thirty_days_off(&appeal["expires_at"]), signed.expires_at);

    // A public host gets https; a Host that is not a plain host gets no link at all.
    let actions = feed(&ingest, Some("warden.example.net")).await;
    let url = actions[0]["appeal"]["url"].as_str().expect("a url");
    claims(&ingest, url, "https://warden.example.net").await;
    let actions = feed(&ingest, Some("evil\"host")).await;
    assert!(actions[0].get("appeal").is_none(), "{}", actions[0]);
}

#[tokio::test]
async fn dashboard_url_is_the_links_base_whatever_the_host() {
    let ingest = TestIngest::start_configured(|config| {
        config.dashboard_url = Some("https://dash.example.org/warden".into());
    })
    .await;
    let ban = write_issue(&ingest, ingest.account_id, "ban", "x").await;
    let actions = feed(&ingest, Some("evil\"host")).await;
    let url = actions[0]["appeal"]["url"].as_str().expect("a url");
    let signed = claims(&ingest, url, "https://dash.example.org/warden").await;
    assert_eq!(signed.punishment_id, ban);

    let (status, answer) = ingest.post(PATH, json!({"punishment_ids": [ban]})).await;
    assert_eq!(status, 200, "{answer}");
    let url = answer["links"][0]["url"].as_str().expect("a url");
    claims(&ingest, url, "https://dash.example.org/warden").await;
}

#[tokio::test]
async fn fresh_links_are_signed_for_each_punishment_asked_about_once() {
    let ingest = TestIngest::start().await;
    let (first, second) = (Uuid::now_v7(), Uuid::now_v7());
    let (status, answer) = ingest
        .post(PATH, json!({"punishment_ids": [first, second, first]}))
        .await;
    assert_eq!(status, 200, "{answer}");
    let links = answer["links"].as_array().expect("links");
    assert_eq!(links.len(), 2, "a repeated id once: {answer}");
    for (link, id) in links.iter().zip([first, second]) {
        assert_eq!(link["punishment_id"], json!(id));
        let url = link["url"].as_str().expect("a url");
        let signed = claims(&ingest, url, &ingest.base).await;
        assert_eq!(
            (signed.account_id, signed.punishment_id),
            (ingest.account_id, id)
        );
        assert_eq!(thirty_days_off(&link["expires_at"]), signed.expires_at);
    }

    // Another account's key signs with that account's key: its links name it.
    let other = Uuid::now_v7();
    let other_key = ingest.add_key(other, KeyKind::Plugin).await;
    ingest.wait_until_accepts(&other_key).await;
    let answer: Value = ingest
        .http
        .post(format!("{}{PATH}", ingest.base))
        .bearer_auth(&other_key)
        .json(&json!({"punishment_ids": [first]}))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    let url = answer["links"][0]["url"].as_str().expect("a url");
    assert_eq!(claims(&ingest, url, &ingest.base).await.account_id, other);
}

#[tokio::test]
async fn bad_input_is_a_problem() {
    let ingest = TestIngest::start().await;
    let many: Vec<Uuid> = (0..101).map(|_| Uuid::now_v7()).collect();
    for (body, expected, field) in [
        (json!({"punishment_ids": []}), 422, Some("punishment_ids")),
        (json!({"punishment_ids": many}), 422, Some("punishment_ids")),
        (
            json!({"punishment_ids": ["nope"]}),
            400,
            Some("punishment_ids[0]"),
        ),
        (json!({"punishment_ids": [], "x": 1}), 400, None),
        (json!({}), 400, None),
        (json!([]), 400, None),
    ] {
        let (status, problem) = ingest.post(PATH, body.clone()).await;
        assert_eq!(status, expected, "{body}: {problem}");
        assert!(problem["code"].is_string(), "{problem}");
        if let Some(field) = field {
            assert_eq!(problem["errors"][0]["field"], json!(field), "{problem}");
        }
    }
    let response = ingest
        .post_raw(PATH, &ingest.plugin_key, "text/plain", b"{}".to_vec())
        .await;
    assert_eq!(response.status(), 415);
    for (key, expected) in [
        ("wdn_plugin_nope", 401),
        (ingest.dashboard_key.as_str(), 403),
    ] {
        let response = ingest
            .post_raw(
                PATH,
                key,
                "application/json",
                br#"{"punishment_ids": []}"#.to_vec(),
            )
            .await;
        assert_eq!(response.status(), expected);
    }
}
