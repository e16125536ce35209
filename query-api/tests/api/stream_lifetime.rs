//! Live event streams end with their key (revocation, the end of a rotation's grace period),
//! and one key holds at most `MAX_STREAMS_PER_KEY` of them at once.

use crate::helpers::{TestApp, WAIT, problem, start, status_becomes_at, text};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long after a key ends its streams may live (the contract's 2 s).
const KEY_END_BOUND: Duration = Duration::from_secs(2);

/// What an open stream yields next.
#[derive(Debug, PartialEq)]
enum Next {
    /// An event (comments are skipped): its `event:` name and `data`.
    Event { event: String, data: String },
    /// The server ended the response.
    End,
}

/// A minimal Server-Sent Events reader that also sees the end of the response.
pub(crate) struct Sse {
    body: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Sse {
    pub(crate) async fn open(
        app_url: &str,
        client: &reqwest::Client,
        key: &str,
    ) -> anyhow::Result<Sse> {
        let response = open_stream(app_url, client, key).await?;
        anyhow::ensure!(
            response.status() == StatusCode::OK,
            "stream answered {}",
            response.status()
        );
        Ok(Sse {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        })
    }

    /// The next event or the end, or an error if neither comes before `deadline`.
    async fn next(&mut self, deadline: Instant) -> anyhow::Result<Next> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut event, mut data) = ("message".to_owned(), Vec::new());
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        event = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.trim_start().to_owned());
                    }
                }
                if !data.is_empty() {
                    let data = data.join("\n");
                    return Ok(Next::Event { event, data });
                }
                continue;
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, self.body.next()).await {
                Err(_) => anyhow::bail!("nothing from the stream before the deadline"),
                Ok(None) => return Ok(Next::End),
                Ok(Some(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk?)),
            }
        }
    }

    /// Asserts that the stream says `event: revoked` and then ends, both before `deadline`.
    pub(crate) async fn ends_revoked(mut self, deadline: Instant) -> anyhow::Result<()> {
        let Next::Event { event, data } = self.next(deadline).await? else {
            anyhow::bail!("the stream ended without saying why");
        };
        anyhow::ensure!(event == "revoked", "got event {event}: {data}");
        let data: Value = serde_json::from_str(&data)?;
        anyhow::ensure!(data["code"] == "key_revoked", "{data}");
        anyhow::ensure!(
            self.next(deadline).await? == Next::End,
            "the stream went on"
        );
        Ok(())
    }
}

async fn open_stream(
    base: &str,
    client: &reqwest::Client,
    key: &str,
) -> anyhow::Result<reqwest::Response> {
    Ok(client
        .get(format!("{base}/api/v1/events/stream"))
        .bearer_auth(key)
        .header("accept", "text/event-stream")
        .send()
        .await?)
}

#[tokio::test]
async fn revoking_a_key_ends_its_open_streams() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    let base = app.url("");
    let (first, second) = (
        Sse::open(&base, &app.client, &secret).await?,
        Sse::open(&base, &app.client, &secret).await?,
    );
    // Another key of the same account keeps its stream.
    let other = text(&app.create_key(&account, "dashboard").await?["key"]);
    let works = app
        .status_becomes("/api/v1/events", &other, StatusCode::OK, WAIT)
        .await?;
    assert!(works, "the other key never started working");
    let mut survivor = Sse::open(&base, &app.client, &other).await?;

    let revoked = app
        .admin(
            Method::DELETE,
            &format!("/api/admin/keys/{}", text(&key["id"])),
        )
        .send()
        .await?;
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    let deadline = Instant::now() + KEY_END_BOUND;
    first.ends_revoked(deadline).await?;
    second.ends_revoked(deadline).await?;
    assert!(
        survivor
            .next(Instant::now() + Duration::from_millis(300))
            .await
            .is_err(),
        "the other key's stream stays open and quiet"
    );
    let refused = open_stream(&base, &app.client, &secret).await?;
    problem(refused, StatusCode::UNAUTHORIZED, "invalid_credentials").await?;
    Ok(())
}

#[tokio::test]
async fn a_rotation_ends_the_old_keys_streams_when_its_grace_ends() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let base = app.url("");
    let rotate = |id: String, grace: i64| {
        app.admin(Method::POST, &format!("/api/admin/keys/{id}/rotate"))
            .json(&json!({ "grace_seconds": grace }))
            .send()
    };

    // Grace 0: the old key ends at once.
    let stream = Sse::open(&base, &app.client, &text(&key["key"])).await?;
    let rotated = rotate(text(&key["id"]), 0).await?;
    assert_eq!(rotated.status(), StatusCode::CREATED);
    stream.ends_revoked(Instant::now() + KEY_END_BOUND).await?;

    // Grace 2 s: the stream lives through the grace period, then ends.
    let new: Value = rotated.json().await?;
    let works = app
        .status_becomes("/api/v1/events", &text(&new["key"]), StatusCode::OK, WAIT)
        .await?;
    assert!(works, "the new key never started working");
    let mut stream = Sse::open(&base, &app.client, &text(&new["key"])).await?;
    let rotated = rotate(text(&new["id"]), 2).await?;
    let grace_ends = Instant::now() + Duration::from_secs(2);
    assert_eq!(rotated.status(), StatusCode::CREATED);
    assert!(
        stream
            .next(grace_ends - Duration::from_millis(300))
            .await
            .is_err(),
        "the stream stays open during the grace period"
    );
    stream.ends_revoked(grace_ends + KEY_END_BOUND).await?;
    Ok(())
}

#[tokio::test]
async fn a_key_holds_at_most_the_configured_number_of_streams() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    let mut config = app.config.clone();
    config.max_streams_per_key = 3;
    let (addr, shutdown) = start(config, &app.client).await?;
    let _stop = shutdown.drop_guard();
    let base = format!("http://{addr}");

    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(Sse::open(&base, &app.client, &secret).await?);
    }
    let refused = open_stream(&base, &app.client, &secret).await?;
    let retry_after = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    assert!(retry_after.is_some_and(|s| s >= 1), "{retry_after:?}");
    problem(refused, StatusCode::TOO_MANY_REQUESTS, "too_many_streams").await?;
    // The cap is per key: another key of the same account still opens. The stream opens on the
    // capped instance, whose own watch brings it the new key: wait there, not on `app`.
    let other = text(&app.create_key(&account, "dashboard").await?["key"]);
    let works = status_becomes_at(
        &app.client,
        addr,
        "/api/v1/events",
        &other,
        StatusCode::OK,
        WAIT,
    )
    .await;
    assert!(works);
    let _other_stream = Sse::open(&base, &app.client, &other).await?;

    // A client that leaves gives its slot back.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    let reopened = loop {
        let response = open_stream(&base, &app.client, &secret).await?;
        if response.status() == StatusCode::OK {
            break true;
        }
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        if Instant::now() >= deadline {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(reopened, "the closed stream's slot was never given back");
    Ok(())
}
