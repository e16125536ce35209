//! The Overview, Servers and Staff pages over rows written as the projector writes them, signed
//! in as a team member; and the Overview's live activity stream over records written to the
//! event log as ingest writes them.

use crate::browser::{Browser, PASSWORD, to_sign_in};
use crate::helpers::TestApp;
use crate::read_models::{
    Dashboard, Punishment, ago, now, player, punishment, rank, server, session,
};
use chrono::{DateTime, Duration as Span, DurationRound, Utc};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::COOKIE;
use serde_json::{Value, json};
use shared::envelope::{ENVELOPE_VERSION, LogMessage, RecordBatch};
use shared::records::RecordKind;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A player name that would run script if a page wrote it unescaped.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// Signs in a new member of `dash`'s account with `role`.
async fn member(dash: &Dashboard, role: &str) -> anyhow::Result<Browser> {
    let login = format!("{role}-{}@test.local", Uuid::new_v4().simple());
    let account = dash.account.to_string();
    dash.app.create_member(&account, &login, role, role).await?;
    Browser::signed_in(&dash.app, &login, PASSWORD).await
}

/// A five-minute rollup row: `samples` heartbeats averaging `players`.
async fn five_minutes(
    pool: &PgPool,
    (account, server): (Uuid, Uuid),
    at: DateTime<Utc>,
    players: i64,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO server_five_minutes (account_id, server_id, bucket, samples, tps_sum, \
           tps_min, tps_max, player_count_sum, player_count_min, player_count_max) \
         VALUES ($1, $2, $3, 10, 195, 19, 20, $4, $5, $5)",
    )
    .bind(account)
    .bind(server)
    .bind(at)
    .bind(players * 10)
    .bind(i32::try_from(players)?)
    .execute(pool)
    .await?;
    Ok(())
}

/// A per-minute rollup row with `tps` average and `players`.
async fn minute(
    pool: &PgPool,
    (account, server): (Uuid, Uuid),
    at: DateTime<Utc>,
    tps: f64,
    players: i32,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO server_minutes (account_id, server_id, minute, samples, tps_sum, tps_min, \
           tps_max, player_count_sum, player_count_min, player_count_max) \
         VALUES ($1, $2, $3, 2, $4 * 2, $4, $4, $5 * 2, $5, $5)",
    )
    .bind(account)
    .bind(server)
    .bind(at)
    .bind(tps)
    .bind(players)
    .execute(pool)
    .await?;
    Ok(())
}

/// A timeline row as the projector writes it.
async fn timeline(
    pool: &PgPool,
    account: Uuid,
    (seq, name): (i64, &str),
    (player, server): (Uuid, Option<Uuid>),
    properties: Value,
    at: DateTime<Utc>,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id, \
           properties, occurred_at, received_at) \
         VALUES ($1, $2, $3, $4, true, $5, $6, $7::json, $8, $8)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(seq)
    .bind(name)
    .bind(player)
    .bind(server)
    .bind(properties.to_string())
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// The data of every chart on a page (the `data-chart` attributes, unescaped).
fn charts(html: &str) -> Vec<Value> {
    html.split("data-chart=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|text| {
            let text = text
                .replace("&#34;", "\"")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&#60;", "<")
                .replace("&#62;", ">")
                .replace("&#38;", "&")
                .replace("&amp;", "&");
            serde_json::from_str(&text).unwrap_or(Value::Null)
        })
        .collect()
}

#[tokio::test]
async fn a_viewer_sees_the_network_on_overview_servers_and_staff() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 5)).await?;
    let survival = server(pool, account, Some("Survival"), false, ago(now, 3600)).await?;
    // Two hours of five-minute rollups: 40 players, then 60 in the latest hour.
    let bucket = now.duration_trunc(Span::minutes(5))?;
    for i in 1..=24 {
        let players = if i <= 12 { 60 } else { 40 };
        five_minutes(
            pool,
            (account, lobby),
            bucket - Span::minutes(5 * i),
            players,
        )
        .await?;
    }
    let ada = player(pool, account, "Ada", ago(now, 86_400), ago(now, 10)).await?;
    rank(pool, account, ada, ("admin", None, None)).await?;
    session(pool, account, ada, lobby, ago(now, 1800), None).await?;
    let bob = player(pool, account, "Bob", ago(now, 86_400), ago(now, 10)).await?;
    let ban = |seconds| Punishment {
        player: bob,
        kind: "ban",
        staff: Some((ada, Some("Ada"))),
        server: Some(lobby),
        issued_at: ago(now, seconds),
        expires_at: None,
    };
    punishment(pool, account, ban(3600)).await?;
    punishment(pool, account, ban(7200)).await?;
    let on = (bob, Some(lobby));
    timeline(
        pool,
        account,
        (10, "session_join"),
        on,
        json!({"player_name": "Bob"}),
        ago(now, 120),
    )
    .await?;
    let reason = json!({"player_name": "Bob", "reason": "xray", "staff_name": "Ada"});
    timeline(pool, account, (11, "punish_ban"), on, reason, ago(now, 60)).await?;

    let mut viewer = member(&dash, "viewer").await?;
    let overview = viewer.page("/", StatusCode::OK).await?;
    for expected in [
        "Servers online</dt><dd>1 <span class=\"muted\">of 2</span>",
        "Players online</dt><dd>3</dd>",
        ">Lobby</a>",
        ">19.5<",
        "Ada</th>",
        "<strong>Bob</strong> joined on Lobby",
        "data-stream=\"/overview/activity?after=",
        "aria-live=\"polite\"",
    ] {
        assert!(overview.contains(expected), "overview lacks {expected}");
    }
    // The chart's data and its table: the latest hour averaged 60 players, the one before 40.
    let network = &charts(&overview)[0];
    assert_eq!(network["series"][0]["label"], "Players online");
    let values = network["series"][0]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(values.len(), 288, "every five minutes over 24 h");
    assert_eq!(
        values[286],
        json!(60.0),
        "the bucket before the current one"
    );
    assert_eq!(values[287], Value::Null, "nothing yet in the current one");
    assert!(
        overview.contains(">60.0<"),
        "the hourly table has the latest hour"
    );
    assert!(
        overview.contains(">40.0<"),
        "the hourly table has the older hour"
    );
    assert!(
        !overview.contains("was banned"),
        "a viewer sees no punishments in the feed"
    );
    let mut moderator = member(&dash, "moderator").await?;
    let overview = moderator.page("/", StatusCode::OK).await?;
    assert!(overview.contains("<strong>Bob</strong> was banned by Ada: xray"));

    let servers = viewer.page("/servers", StatusCode::OK).await?;
    for expected in [
        "Lobby</a>",
        "Survival</a>",
        "Paper 1.21.4",
        "Online",
        "Offline",
    ] {
        assert!(servers.contains(expected), "servers lacks {expected}");
    }
    assert!(servers.contains(&format!("href=\"/servers/{survival}\"")));

    let page = viewer
        .page(&format!("/servers/{lobby}?range=24h"), StatusCode::OK)
        .await?;
    assert!(page.contains("<h2 class=\"subject\">Lobby</h2>"));
    assert!(page.contains("aria-current=\"page\">24 hours</a>"));
    let [tps, players] = &charts(&page)[..] else {
        anyhow::bail!("two charts on a server page");
    };
    assert_eq!(tps["band"], json!([3, 2]), "a min-max band");
    assert_eq!(tps["x"].as_array().map(Vec::len), Some(1440));
    assert_eq!(players["unit"], "players");
    for range in ["1h", "7d", "30d"] {
        let page = viewer
            .page(&format!("/servers/{lobby}?range={range}"), StatusCode::OK)
            .await?;
        assert!(
            page.contains("Downtime") && page.contains("Low TPS"),
            "{range}"
        );
    }

    let staff = viewer.page("/staff", StatusCode::OK).await?;
    assert!(staff.contains("1 of 1 staff online now"));
    assert!(staff.contains("Ada</th>") && staff.contains("admin") && staff.contains("30 min"));
    // The leaderboard: Ada issued both bans this week.
    assert!(staff.contains("<td class=\"num\">2</td>"), "{staff}");
    let month = viewer.page("/staff?days=30", StatusCode::OK).await?;
    assert!(month.contains("Leaderboard, last 30 days"));
    Ok(())
}

#[tokio::test]
async fn a_server_chart_marks_downtime_and_low_tps() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 5)).await?;
    sqlx::query("UPDATE servers SET first_seen = $2 WHERE id = $1")
        .bind(lobby)
        .bind(now - Span::days(2))
        .execute(pool)
        .await?;
    let start = now.duration_trunc(Span::minutes(1))? - Span::minutes(59);
    // Minutes 10-19 are silent (down); 30-34 run at 12 TPS (a low spell).
    for m in (0..60).filter(|m| !(10..20).contains(m)) {
        let tps = if (30..35).contains(&m) { 12.0 } else { 19.8 };
        minute(pool, (account, lobby), start + Span::minutes(m), tps, 7).await?;
    }
    let mut viewer = member(&dash, "viewer").await?;
    let page = viewer
        .page(&format!("/servers/{lobby}?range=1h"), StatusCode::OK)
        .await?;
    let tps = &charts(&page)[0];
    let kinds: Vec<&str> = tps["marks"]
        .as_array()
        .map(|marks| marks.iter().filter_map(|m| m["kind"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(kinds, ["down", "slow"], "{tps}");
    let average = tps["series"][0]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (average[15].clone(), average[30].clone()),
        (Value::Null, json!(12.0))
    );
    let after = |id: &str| page.split(id).nth(1).unwrap_or_default().to_owned();
    let low = after("id=\"low-tps-heading\"");
    assert!(low.contains("5 min") && low.contains("12.0"), "{low}");
    let down = after("id=\"downtime-heading\"");
    let down = down.split("low-tps-heading").next().unwrap_or_default();
    assert!(
        down.contains("10 min") && !down.contains("Still down"),
        "{down}"
    );
    Ok(())
}

#[tokio::test]
async fn hostile_names_are_escaped_and_other_servers_are_not_found() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let evil = server(
        pool,
        account,
        Some("<script>alert(1)</script>"),
        true,
        ago(now, 5),
    )
    .await?;
    let staffer = player(pool, account, HOSTILE, ago(now, 600), ago(now, 10)).await?;
    rank(pool, account, staffer, ("admin", None, None)).await?;
    session(pool, account, staffer, evil, ago(now, 300), None).await?;
    let on = (staffer, Some(evil));
    timeline(
        pool,
        account,
        (5, "session_join"),
        on,
        json!({"player_name": HOSTILE}),
        ago(now, 60),
    )
    .await?;
    // A server of another account on the same service.
    let other: Uuid = dash.app.create_account("Other").await?.parse()?;
    let foreign = server(pool, other, Some("Theirs"), true, ago(now, 5)).await?;

    let mut owner = member(&dash, "owner").await?;
    for path in ["/", "/servers", &format!("/servers/{evil}"), "/staff"] {
        let page = owner.page(path, StatusCode::OK).await?;
        assert!(
            !page.contains("<script>alert") && !page.contains("<img src=x"),
            "{path} wrote a hostile name raw"
        );
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                || page.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{path} lacks the escaped server name"
        );
    }
    let overview = owner.page("/", StatusCode::OK).await?;
    assert!(
        overview.contains("&lt;img src=x onerror=alert(1)&gt;") || overview.contains("&#60;img")
    );

    for path in [
        format!("/servers/{}", Uuid::new_v4()),
        format!("/servers/{foreign}"),
        "/servers/not-a-uuid".to_owned(),
    ] {
        let page = owner.page(&path, StatusCode::NOT_FOUND).await?;
        assert!(
            page.contains("Page not found") && !page.contains("Theirs"),
            "{path}"
        );
    }
    Ok(())
}

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
