//! The Overview's live activity stream (`/overview/activity`) over records written to the
//! event log as ingest writes them: live, filtered by role, resumable, and ended with the session.

use crate::browser::{Browser, to_sign_in};
use crate::dashboard_pages::{HOSTILE, member};
use crate::helpers::TestApp;
use crate::read_models::{Dashboard, ago, now, server};
use chrono::Utc;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::COOKIE;
use serde_json::{Value, json};
use shared::envelope::{ENVELOPE_VERSION, LogMessage, RecordBatch};
use shared::records::RecordKind;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// One Server-Sent Event: its `event`, `id` and `data`.
#[derive(Debug)]
struct Sse {
    event: String,
    id: Option<String>,
    data: String,
}

/// A reader of `/overview/activity` with a member's cookie.
struct Feed {
    body: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Feed {
    async fn open(app: &TestApp, browser: &Browser, last_id: Option<&str>) -> anyhow::Result<Feed> {
        let mut request = app
            .client
            .get(app.url("/overview/activity"))
            .header(COOKIE, browser.cookie.clone().unwrap_or_default());
        if let Some(id) = last_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await?;
        anyhow::ensure!(response.status() == StatusCode::OK, "{}", response.status());
        let kind = response.headers()["content-type"].to_str()?.to_owned();
        anyhow::ensure!(kind.starts_with("text/event-stream"), "{kind}");
        Ok(Feed {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        })
    }

    /// The next event, `None` when the stream ended, an error past `deadline`.
    async fn next(&mut self, deadline: Instant) -> anyhow::Result<Option<Sse>> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut sse = Sse {
                    event: "message".into(),
                    id: None,
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        sse.event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("id:") {
                        sse.id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        sse.data.push_str(v.trim_start());
                    }
                }
                if !sse.data.is_empty() {
                    return Ok(Some(sse));
                }
                continue;
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, self.body.next()).await {
                Err(_) => anyhow::bail!("nothing from the stream before the deadline"),
                Ok(None) => return Ok(None),
                Ok(Some(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk?)),
            }
        }
    }

    /// The next `activity` event before `deadline`.
    async fn activity(&mut self, deadline: Instant) -> anyhow::Result<Sse> {
        loop {
            match self.next(deadline).await? {
                Some(sse) if sse.event == "activity" => return Ok(sse),
                Some(_) => continue,
                None => anyhow::bail!("the stream ended"),
            }
        }
    }
}

/// Writes one record to the event log as ingest does, waiting for the log's acknowledgement.
async fn log(dash: &Dashboard, kind: RecordKind, record: Value) -> anyhow::Result<()> {
    let id = Uuid::now_v7();
    let batch: RecordBatch = serde_json::from_value(json!({
        "kind": kind.as_str(), "records": [{"id": id, "record": record}]
    }))?;
    let message = LogMessage {
        v: ENVELOPE_VERSION,
        account_id: dash.account,
        received_at: Utc::now(),
        batch,
    };
    let nats = async_nats::connect(&dash.app.nats_url).await?;
    let js = async_nats::jetstream::new(nats);
    let subject = dash
        .app
        .config
        .common
        .event_log
        .subjects()
        .for_records(dash.account, kind, None);
    js.publish(subject, message.encode().into()).await?.await?;
    Ok(())
}

#[tokio::test]
async fn the_activity_stream_is_live_filtered_by_role_and_resumable() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let lobby = server(
        dash.pool(),
        dash.account,
        Some("Lobby"),
        true,
        ago(now(), 5),
    )
    .await?;
    let viewer = member(&dash, "viewer").await?;
    let moderator = member(&dash, "moderator").await?;
    let mut seen_by_viewer = Feed::open(&dash.app, &viewer, None).await?;
    let mut seen_by_moderator = Feed::open(&dash.app, &moderator, None).await?;
    let player = Uuid::new_v4();

    log(
        &dash,
        RecordKind::Punishment,
        json!({
            "server_id": lobby, "player_uuid": player, "player_name": "Griefer", "type": "ban",
            "reason": "xray", "staff_name": "Ada"
        }),
    )
    .await?;
    log(
        &dash,
        RecordKind::AnticheatFlag,
        json!({
            "server_id": lobby, "player_uuid": player, "player_name": "Griefer",
            "check_name": "Reach", "check_type": "A", "violation_level": 3.0
        }),
    )
    .await?;
    let written = Instant::now();
    log(
        &dash,
        RecordKind::Session,
        json!({
            "server_id": lobby, "player_uuid": player, "player_name": HOSTILE, "event": "join"
        }),
    )
    .await?;

    // The viewer's first item is the join, within a second of its write: no ban, no flag.
    let join = seen_by_viewer
        .activity(written + Duration::from_secs(1))
        .await?;
    assert!(join.data.contains("joined on Lobby"), "{}", join.data);
    assert!(
        join.data.contains("&lt;img src=x") || join.data.contains("&#60;img"),
        "{}",
        join.data
    );
    assert!(!join.data.contains("<img"), "escaped: {}", join.data);

    let deadline = Instant::now() + Duration::from_secs(5);
    let ban = seen_by_moderator.activity(deadline).await?;
    assert!(ban.data.contains("was banned by Ada: xray"), "{}", ban.data);
    let flag = seen_by_moderator.activity(deadline).await?;
    assert!(
        flag.data
            .contains("flagged by anti-cheat: Reach A on Lobby"),
        "{}",
        flag.data
    );
    let join_for_moderator = seen_by_moderator.activity(deadline).await?;
    assert_eq!(
        join_for_moderator.id, join.id,
        "one position for the same item"
    );

    // Resuming after the ban sends the flag and the join again, and nothing before.
    let mut resumed = Feed::open(&dash.app, &moderator, ban.id.as_deref()).await?;
    let first = resumed.activity(deadline).await?;
    assert_eq!(first.id, flag.id);
    assert_eq!(resumed.activity(deadline).await?.id, join.id);
    Ok(())
}

#[tokio::test]
async fn the_activity_stream_ends_with_the_session() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let mut viewer = member(&dash, "viewer").await?;
    let mut feed = Feed::open(&dash.app, &viewer, None).await?;
    let viewer_cookie = viewer.cookie.clone();
    let response = viewer.post("/logout", &[]).await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let signed_out = Instant::now();
    let deadline = signed_out + Duration::from_secs(2);
    let ended = feed.next(deadline).await?.expect("an event, then the end");
    assert_eq!(ended.event, "ended");
    assert!(feed.next(deadline).await?.is_none(), "the stream closes");

    // With the ended session the stream does not open: the sign-in page.
    let mut probe = Browser::new(&dash.app);
    probe.cookie = viewer_cookie;
    let refused = probe.get("/overview/activity").await?;
    assert!(to_sign_in(&refused), "{}", refused.status());
    Ok(())
}
