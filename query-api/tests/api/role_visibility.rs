//! One rule for what each role sees of the records, on every view (`docs/dashboard.md`,
//! "Roles"): chat lines and commands only for admins and owners, punishment reasons, anti-cheat
//! flags' details and notes only for moderators and up, whatever page, partial, live stream,
//! trend, funnel or export shows them.
//!
//! The test seeds records whose texts are unique markers (stored rows, and records written to
//! the event log while streams are open), then walks every GET route of the dashboard's pages
//! as a viewer, a moderator, an admin and an owner, and fails when a role sees a marker it may
//! not. The routes are read from the page routers' source, so a new page that is not walked
//! here fails the test. It also checks that the roles allowed do see the markers where they
//! should, so it cannot pass by showing nothing.

use crate::browser::Browser;
use crate::dashboard_pages::member;
use crate::read_models::{Dashboard, ago, now, player, server};
use chrono::Utc;
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::COOKIE;
use serde_json::{Value, json};
use shared::envelope::{ENVELOPE_VERSION, LogMessage, RecordBatch};
use shared::records::RecordKind;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The roles, least trusted first (their index is their rank below).
const ROLES: [&str; 4] = ["viewer", "moderator", "admin", "owner"];
const MODERATOR: usize = 1;
const ADMIN: usize = 2;

/// A text only some roles may see.
#[derive(Debug, Clone)]
struct Secret {
    /// The marker itself: letters and digits, so it reads the same in HTML, JSON and CSV.
    text: String,
    /// What it is, for the failure message.
    what: &'static str,
    /// The least role (index in [`ROLES`]) that may see it.
    least: usize,
}

/// One set of markers: a chat line, a command, a punishment's reason, a revoke's reason, an
/// anti-cheat check's name and a note's text.
#[derive(Debug, Clone)]
struct Secrets {
    chat: Secret,
    command: Secret,
    reason: Secret,
    revoke: Secret,
    flag: Secret,
    note: Secret,
}

impl Secrets {
    fn new(tag: &str) -> Secrets {
        let secret = |what: &'static str, least: usize| Secret {
            text: format!("{tag}{}{}", what.replace(' ', ""), Uuid::new_v4().simple()),
            what,
            least,
        };
        Secrets {
            chat: secret("chat line", ADMIN),
            command: secret("command", ADMIN),
            reason: secret("punishment reason", MODERATOR),
            revoke: secret("revoke reason", MODERATOR),
            flag: secret("flag check", MODERATOR),
            note: secret("note", MODERATOR),
        }
    }

    fn all(&self) -> [&Secret; 6] {
        [
            &self.chat,
            &self.command,
            &self.reason,
            &self.revoke,
            &self.flag,
            &self.note,
        ]
    }
}

/// What the account holds: a server, a player, and the seeded markers.
struct World {
    dash: Dashboard,
    lobby: Uuid,
    griefer: Uuid,
    stored: Secrets,
}

/// Seeds the read models and the timeline as the projector would have written them.
async fn seed() -> anyhow::Result<World> {
    let dash = Dashboard::start().await?;
    let (pool, account, t) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(t, 5)).await?;
    let griefer = player(pool, account, "Griefer", ago(t, 3600), ago(t, 60)).await?;
    let s = Secrets::new("stored");
    let command = format!("/tell bob {}", s.command.text);
    let punishment = Uuid::new_v4();
    sqlx::query(
        "WITH c AS (INSERT INTO chat_messages (account_id, id, player_uuid, server_id, \
             entry_type, message, channel, sent_at) \
           VALUES ($1, gen_random_uuid(), $2, $3, 'chat', $4, 'global', $10), \
                  ($1, gen_random_uuid(), $2, $3, 'command', $5, NULL, $10)), \
         p AS (INSERT INTO punishments (account_id, id, player_uuid, type, reason, staff_name, \
             server_id, issued_at, scope, source_plugin, revoked_at, revoked_by_name, \
             revoke_reason) \
           VALUES ($1, $11, $2, 'ban', $6, 'Ada', $3, $10, 'global', 'litebans', $10, 'Ada', \
                   $7)), \
         f AS (INSERT INTO anticheat_flags (account_id, id, player_uuid, server_id, check_name, \
             check_type, violation_level, detail, source_plugin, is_experimental, ping_ms, tps, \
             flagged_at) \
           VALUES ($1, gen_random_uuid(), $2, $3, $8, 'A', 4.5, $8, 'grim', false, 42, 19.9, \
                   $10)) \
         INSERT INTO notes (account_id, id, player_uuid, text, evidence, author_member_id, \
             author_name, written_at, seq) \
           VALUES ($1, gen_random_uuid(), $2, $9, '[]', $1, 'Mod', $10, 1)",
    )
    .bind(account)
    .bind(griefer)
    .bind(lobby)
    .bind(&s.chat.text)
    .bind(&command)
    .bind(&s.reason.text)
    .bind(&s.revoke.text)
    .bind(&s.flag.text)
    .bind(&s.note.text)
    .bind(ago(t, 600))
    .bind(punishment)
    .execute(pool)
    .await?;
    // The timeline rows of the same records, and a custom event for funnels and trends.
    let events = [
        (
            "chat_message",
            json!({"message": s.chat.text, "channel": "global", "player_name": "Griefer"}),
        ),
        (
            "chat_command",
            json!({"message": command, "channel": null, "player_name": "Griefer"}),
        ),
        (
            "punish_ban",
            json!({"type": "ban", "action": "issue", "reason": s.reason.text,
                   "staff_name": "Ada", "player_name": "Griefer"}),
        ),
        (
            "punish_revoke",
            json!({"type": "ban", "action": "revoke", "punishment_id": punishment,
                   "revoke_reason": s.revoke.text, "staff_name": "Ada"}),
        ),
        ("quest_started", json!({"tag": "open"})),
    ];
    for (index, (name, properties)) in events.iter().enumerate() {
        let seq = 1000 * (i64::try_from(index)? + 1);
        sqlx::query(
            "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, \
               server_id, properties, occurred_at, received_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $9)",
        )
        .bind(account)
        .bind(Uuid::now_v7())
        .bind(seq)
        .bind(name)
        .bind(!name.starts_with("quest"))
        .bind(griefer)
        .bind(lobby)
        .bind(properties.to_string())
        .bind(ago(t, 500 - i64::try_from(index)?))
        .execute(pool)
        .await?;
    }
    Ok(World {
        dash,
        lobby,
        griefer,
        stored: s,
    })
}

/// The GET routes of the dashboard's pages, read from the routers' source
/// (`query-api/src/pages`): each `.route(path, get(...))`, with `path` a literal, a `PATH`
/// constant of the file or of a sibling module, or the alert destination page's `base`.
fn page_routes() -> anyhow::Result<BTreeSet<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pages");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let literal = |text: &str| -> Option<String> {
        let start = text.find('"')? + 1;
        let end = start + text[start..].find('"')?;
        Some(text[start..end].to_owned())
    };
    let constant = |source: &str, name: &str| -> Option<String> {
        let at = source.find(&format!("const {name}: &str = "))?;
        literal(&source[at..])
    };
    let mut routes = BTreeSet::new();
    for file in files {
        let source = std::fs::read_to_string(&file)?;
        let dir = file.parent().map(std::path::Path::to_path_buf);
        for call in source.split(".route(").skip(1) {
            let call = call.trim_start();
            let (first, rest) = call.split_once(',').unwrap_or((call, ""));
            let rest = rest.split(".route(").next().unwrap_or_default();
            if !rest.trim_start().starts_with("get(") {
                continue;
            }
            let first = first.trim();
            let path = if first.starts_with('"') {
                literal(first)
            } else if let Some((module, name)) = first.split_once("::") {
                let sibling = dir.as_ref().map(|d| d.join(format!("{module}.rs")));
                let text = sibling.and_then(|p| std::fs::read_to_string(p).ok());
                text.and_then(|text| constant(&text, name))
            } else if first == "base" {
                let at = source.find("let base = ");
                at.and_then(|at| literal(&source[at..]))
            } else {
                constant(&source, first)
            };
            let Some(path) = path else {
                anyhow::bail!("{}: cannot read the route {first}", file.display());
            };
            routes.insert(path);
        }
    }
    Ok(routes)
}

/// Routes that show no records of the account: the sign-in and invite pages, the assets.
const NOT_RECORDS: [&str; 3] = ["/login", "/invite/{token}", "/assets/{file}"];

/// The Server-Sent Events routes (walked by [`live`], not by a plain GET).
const STREAMS: [&str; 3] = ["/events/stream", "/overview/activity", "/anticheat/stream"];

/// Every route walked with a plain GET: its pattern, the address used, and the markers every
/// role that may open it must see there (so the walk cannot pass by showing nothing).
fn walks(world: &World) -> Vec<(&'static str, String, Vec<Secret>)> {
    let s = &world.stored;
    let internal = "internal=true&names=chat_message%2Cchat_command%2Cpunish_ban%2Cpunish_revoke";
    let (griefer, lobby) = (world.griefer, world.lobby);
    let trend = |query: &str| format!("/analytics/trends?{query}&breakdown=property");
    vec![
        ("/", "/".into(), vec![s.reason.clone()]),
        ("/overview/summary", "/overview/summary".into(), vec![]),
        ("/servers", "/servers".into(), vec![]),
        ("/servers/{id}", format!("/servers/{lobby}"), vec![]),
        ("/staff", "/staff".into(), vec![]),
        ("/players", "/players?q=Griefer".into(), vec![]),
        ("/players/find", "/players/find?q=Griefer".into(), vec![]),
        (
            "/players/suggestions",
            "/players/suggestions?q=Griefer".into(),
            vec![],
        ),
        (
            "/players/{uuid}",
            format!("/players/{griefer}"),
            vec![s.chat.clone(), s.reason.clone(), s.note.clone()],
        ),
        (
            "/players/{uuid}/export",
            format!("/players/{griefer}/export"),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        (
            "/players/{uuid}/erase",
            format!("/players/{griefer}/erase"),
            vec![],
        ),
        (
            "/punishments",
            "/punishments".into(),
            vec![s.reason.clone(), s.revoke.clone()],
        ),
        ("/anticheat", "/anticheat".into(), vec![s.flag.clone()]),
        (
            "/chat",
            "/chat".into(),
            vec![s.chat.clone(), s.command.clone()],
        ),
        ("/chat/rows", "/chat/rows".into(), vec![s.chat.clone()]),
        (
            "/chat/export.csv",
            "/chat/export.csv".into(),
            vec![s.chat.clone(), s.command.clone()],
        ),
        ("/events", "/events".into(), vec![]),
        (
            "/events",
            "/events?internal=true".into(),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        (
            "/events",
            format!("/events?{internal}"),
            vec![
                s.chat.clone(),
                s.command.clone(),
                s.reason.clone(),
                s.revoke.clone(),
            ],
        ),
        (
            "/events/feed",
            format!("/events/feed?{internal}"),
            vec![
                s.chat.clone(),
                s.command.clone(),
                s.reason.clone(),
                s.revoke.clone(),
            ],
        ),
        (
            "/events/rows",
            format!("/events/rows?{internal}"),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        ("/funnels", "/funnels?step=quest_started".into(), vec![]),
        (
            "/analytics/retention",
            "/analytics/retention".into(),
            vec![],
        ),
        (
            "/analytics/trends",
            "/analytics/trends?event=chat_message".into(),
            vec![],
        ),
        (
            "/analytics/trends",
            trend("event=chat_message&property=message"),
            vec![s.chat.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=chat_messages&property=message"),
            vec![s.chat.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=commands&property=message"),
            vec![s.command.clone()],
        ),
        (
            "/analytics/trends",
            trend("event=punish_ban&property=reason"),
            vec![s.reason.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=punishments&property=reason"),
            vec![s.reason.clone()],
        ),
        (
            "/analytics/trends",
            trend("event=punish_revoke&property=revoke_reason"),
            vec![s.revoke.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=flags&property=check_name"),
            vec![s.flag.clone()],
        ),
        ("/team", "/team".into(), vec![]),
        ("/settings", "/settings".into(), vec![]),
        ("/connect", "/connect".into(), vec![]),
        (
            "/connect/warden-plugin.jar",
            "/connect/warden-plugin.jar".into(),
            vec![],
        ),
        ("/alerts", "/alerts".into(), vec![]),
        (
            "/alerts/destinations/{id}",
            format!("/alerts/destinations/{}", Uuid::new_v4()),
            vec![],
        ),
        (
            "/alerts/destinations/{id}/deliveries/{delivery}",
            format!(
                "/alerts/destinations/{}/deliveries/{}",
                Uuid::new_v4(),
                Uuid::new_v4()
            ),
            vec![],
        ),
        (
            "/alerts/rules/{id}/edit",
            format!("/alerts/rules/{}/edit", Uuid::new_v4()),
            vec![],
        ),
        ("/audit", "/audit".into(), vec![]),
        // The JSON API under a session cookie: keys only, whatever the cookie.
        ("", "/api/v1/events?internal=true".into(), vec![]),
        ("", "/api/chat".into(), vec![]),
        ("", "/api/punishments".into(), vec![]),
        ("", format!("/api/players/{griefer}/chatlog"), vec![]),
    ]
}

/// What went wrong, every finding of the walk (reported together at the end).
#[derive(Debug, Default)]
struct Findings(Vec<String>);

impl Findings {
    /// Notes each marker in `body` (seen by `role` at `path`) that the role may not see.
    fn hidden(&mut self, secrets: &[&Secret], role: usize, path: &str, body: &str) {
        for secret in secrets {
            if secret.least > role && body.contains(&secret.text) {
                self.0.push(format!(
                    "the {} role sees a {} at {path}",
                    ROLES[role], secret.what
                ));
            }
        }
    }

    /// Notes each marker of `shown` missing from `body` when `role` may see it.
    fn shown(&mut self, shown: &[&Secret], role: usize, path: &str, body: &str) {
        for secret in shown {
            if secret.least <= role && !body.contains(&secret.text) {
                let who = ROLES[role];
                self.0.push(format!(
                    "the {who} role does not see the {} at {path}",
                    secret.what
                ));
            }
        }
    }

    fn assert_none(&self) {
        assert!(
            self.0.is_empty(),
            "{} findings:\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

#[tokio::test]
async fn every_view_shows_each_role_only_what_the_roles_table_allows() -> anyhow::Result<()> {
    let world = seed().await?;
    let mut members = Vec::new();
    for role in ROLES {
        members.push(member(&world.dash, role).await?);
    }

    // Every GET route of the pages is walked here, as a page or as a stream.
    let walks = walks(&world);
    let walked: BTreeSet<String> = walks
        .iter()
        .map(|(pattern, _, _)| pattern.to_string())
        .chain(
            STREAMS
                .iter()
                .chain(NOT_RECORDS.iter())
                .map(|p| p.to_string()),
        )
        .filter(|p| !p.is_empty())
        .collect();
    let routes = page_routes()?;
    let missing: Vec<&String> = routes.difference(&walked).collect();
    assert!(missing.is_empty(), "GET routes not walked: {missing:?}");
    let stale: Vec<&String> = walked.difference(&routes).collect();
    assert!(
        stale.is_empty(),
        "walked routes that no router has: {stale:?}"
    );

    let stored = world.stored.all();
    let funnel = [
        ("step", "quest_started"),
        ("step", "chat_message"),
        ("step", "punish_ban"),
        ("breakdown", "tag"),
        ("dropped_off", "1"),
        ("action", "run"),
    ];
    let mut findings = Findings::default();
    for (role, browser) in members.iter_mut().enumerate() {
        for (_, path, shown) in &walks {
            let response = browser.get(path).await?;
            let status = response.status();
            let body = response.text().await?;
            assert!(
                status.as_u16() < 500,
                "{} {path}: {status} {body}",
                ROLES[role]
            );
            findings.hidden(&stored, role, path, &body);
            if status == StatusCode::OK {
                let shown: Vec<&Secret> = shown.iter().collect();
                findings.shown(&shown, role, path, &body);
            }
        }
        // Counts stay: every role lists the chat events (without their text).
        let events = browser
            .page("/events?internal=true&names=chat_message", StatusCode::OK)
            .await?;
        assert!(events.contains(r#"data-name="chat_message""#), "{events}");
        // Below admin the row says its values are withheld; from admin it shows them.
        if events.contains(r#"data-testid="withheld""#) != (role < ADMIN) {
            let who = ROLES[role];
            findings.0.push(format!(
                "the {who} role's chat rows are not marked as they should"
            ));
        }
        // A breakdown whose labels the role may not see is refused with the reason, on the form.
        let path = "/analytics/trends?event=chat_message&breakdown=property&property=message";
        let response = browser.get(path).await?;
        let status = response.status();
        let said = response
            .text()
            .await?
            .contains("counts are available without");
        let expected = if role < ADMIN {
            (StatusCode::FORBIDDEN, true)
        } else {
            (StatusCode::OK, false)
        };
        if (status, said) != expected {
            let who = ROLES[role];
            findings
                .0
                .push(format!("the {who} role gets {status} at {path}"));
        }
        let result = browser.post("/funnels", &funnel).await?;
        assert!(result.status().as_u16() < 500, "{}", result.status());
        findings.hidden(&stored, role, "POST /funnels", &result.text().await?);
    }

    live(&world, &members, &mut findings).await?;
    findings.assert_none();
    Ok(())
}

/// Writes one record to the event log as ingest does, waiting for the log's acknowledgement.
async fn log(dash: &Dashboard, kind: RecordKind, record: Value) -> anyhow::Result<()> {
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
async fn live(world: &World, members: &[Browser], findings: &mut Findings) -> anyhow::Result<()> {
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
