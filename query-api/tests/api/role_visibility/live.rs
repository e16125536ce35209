//! The live streams (Server-Sent Events), fed through the event log while they are open.

use super::Findings;
use super::markers::{ROLES, Secrets};
use super::seed::World;
use crate::browser::Browser;
use crate::read_models::Dashboard;
use chrono::Utc;
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::COOKIE;
use serde_json::{Value, json};
use shared::envelope::{ENVELOPE_VERSION, LogMessage, RecordBatch};
use shared::records::RecordKind;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Writes one record to the event log as ingest does, waiting for the log's acknowledgement.
pub(super) async fn log(dash: &Dashboard, kind: RecordKind, record: Value) -> anyhow::Result<()> {
    let batch: RecordBatch = serde_json::from_value(json!({
        "kind": kind.as_str(), "records": [{"id": Uuid::now_v7(), "record": record}]
    }))?;
    let message = LogMessage {
        v: ENVELOPE_VERSION,
        account_id: dash.account,
        received_at: Utc::now(),
        batch,
    };
    let nats = async_nats::connect(&dash.app.nats_url).await?;
    let js = async_nats::jetstream::new(nats);
    let subjects = dash.app.config.common.event_log.subjects();
    let subject = subjects.for_records(dash.account, kind, None);
    js.publish(subject, message.encode().into()).await?.await?;
    Ok(())
}

/// An open Server-Sent Events answer and what it has sent so far.
struct Stream {
    path: &'static str,
    role: usize,
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    seen: String,
}

impl Stream {
    /// Reads until `until` is in what was sent, or `deadline` passes (false).
    async fn read_until(&mut self, until: &str, deadline: Instant) -> anyhow::Result<bool> {
        while !self.seen.contains(until) {
            let wait = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, self.body.next()).await {
                Err(_) | Ok(None) => return Ok(false),
                Ok(Some(chunk)) => self.seen.push_str(&String::from_utf8_lossy(&chunk?)),
            }
        }
        Ok(true)
    }
}

/// The live streams: each role's streams open, records with new markers are written to the
/// event log, and each stream is read until the last record's event arrives (or a deadline).
pub(super) async fn live(
    world: &World,
    members: &[Browser],
    findings: &mut Findings,
) -> anyhow::Result<()> {
    let dash = &world.dash;
    let names = "chat_message,chat_command,punish_ban,punish_revoke,session_join";
    let paths: [(&'static str, String); 3] = [
        (
            "/events/stream",
            format!("/events/stream?internal=true&names={names}"),
        ),
        ("/overview/activity", "/overview/activity".into()),
        ("/anticheat/stream", "/anticheat/stream".into()),
    ];
    let mut streams = Vec::new();
    for (role, browser) in members.iter().enumerate() {
        for (path, address) in &paths {
            let response = dash
                .app
                .client
                .get(dash.app.url(address))
                .header(COOKIE, browser.cookie.clone().unwrap_or_default())
                .send()
                .await?;
            match response.status() {
                StatusCode::OK => streams.push(Stream {
                    path,
                    role,
                    body: response.bytes_stream().boxed(),
                    seen: String::new(),
                }),
                StatusCode::FORBIDDEN => {}
                other => anyhow::bail!("{} {address}: {other}", ROLES[role]),
            }
        }
    }

    let s = Secrets::new("live");
    let (lobby, griefer) = (world.lobby, world.griefer);
    let chat = |kind: &str, message: String| {
        json!({"server_id": lobby, "player_uuid": griefer, "player_name": "Griefer",
               "entry_type": kind, "message": message, "channel": "global"})
    };
    log(dash, RecordKind::Chat, chat("chat", s.chat.text.clone())).await?;
    let command = format!("/tell bob {}", s.command.text);
    log(dash, RecordKind::Chat, chat("command", command)).await?;
    let punishment = Uuid::now_v7();
    log(
        dash,
        RecordKind::Punishment,
        json!({"server_id": lobby, "player_uuid": griefer, "player_name": "Griefer",
               "type": "ban", "reason": s.reason.text, "staff_name": "Ada",
               "external_id": punishment.to_string()}),
    )
    .await?;
    log(
        dash,
        RecordKind::Punishment,
        json!({"server_id": lobby, "player_uuid": griefer, "type": "ban", "action": "revoke",
               "revoke_reason": s.revoke.text, "staff_name": "Ada",
               "external_id": punishment.to_string()}),
    )
    .await?;
    log(
        dash,
        RecordKind::AnticheatFlag,
        json!({"server_id": lobby, "player_uuid": griefer, "player_name": "Griefer",
               "check_name": s.flag.text, "check_type": "A", "violation_level": 3.0}),
    )
    .await?;
    // The last record: every stream but the flags' shows it, so it says the rest has passed.
    log(
        dash,
        RecordKind::Session,
        json!({"server_id": lobby, "player_uuid": griefer, "player_name": "Sentinel",
               "event": "join"}),
    )
    .await?;

    let secrets = s.all();
    let deadline = Instant::now() + Duration::from_secs(10);
    for stream in &mut streams {
        let last = match stream.path {
            "/anticheat/stream" => s.flag.text.as_str(),
            _ => "Sentinel",
        };
        let arrived = stream.read_until(last, deadline).await?;
        let role = ROLES[stream.role];
        assert!(
            arrived,
            "{role} {}: the last record never came: {}",
            stream.path, stream.seen
        );
        findings.hidden(&secrets, stream.role, stream.path, &stream.seen);
        // The roles allowed see the values live (the events stream carries every kind).
        if stream.path == "/events/stream" {
            let shown = [&s.chat, &s.command, &s.reason, &s.revoke];
            findings.shown(&shown, stream.role, stream.path, &stream.seen);
            // Every role is told a chat line was sent, without its text.
            assert!(
                stream.seen.contains(r#""name":"chat_message""#),
                "{}",
                stream.seen
            );
        }
    }
    Ok(())
}
