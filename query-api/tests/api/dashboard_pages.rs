//! The Overview, Servers and Staff pages over rows written as the projector writes them, signed
//! in as a team member (the Overview's live activity stream is tested in `activity_stream`).

use crate::browser::{Browser, PASSWORD};
use crate::read_models::{
    Dashboard, Punishment, ago, keep_recent_activity, now, player, punishment, rank, server,
    session,
};
use chrono::{DateTime, Duration as Span, DurationRound, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// A player name that would run script if a page wrote it unescaped.
pub(crate) const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// Signs in a new member of `dash`'s account with `role`.
pub(crate) async fn member(dash: &Dashboard, role: &str) -> anyhow::Result<Browser> {
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
    crate::dashboard_queries::network_bucket(pool, account, at).await?;
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

/// A timeline row as the projector writes it (and keeps it among the recent activity).
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
    keep_recent_activity(pool, account).await
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
    // Cid is staff only by a kick ten days ago: no group was ever reported for him.
    let cid = player(pool, account, "Cid", ago(now, 86_400 * 20), ago(now, 10)).await?;
    session(pool, account, cid, lobby, ago(now, 600), None).await?;
    punishment(
        pool,
        account,
        Punishment {
            kind: "kick",
            staff: Some((cid, Some("Cid"))),
            issued_at: ago(now, 86_400 * 10),
            ..ban(0)
        },
    )
    .await?;
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
        "Cid</th>",
        "<td><span class=\"muted\">no group reported</span></td>",
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
    // The table is the chart's own points, in UTC.
    let utc = |at: DateTime<Utc>| at.format("%Y-%m-%d %H:%M").to_string();
    for (at, players) in [
        (bucket - Span::minutes(5), 60),
        (bucket - Span::minutes(120), 40),
    ] {
        let row = format!(
            "<th scope=\"row\">{}</th><td class=\"num\">{players}</td>",
            utc(at)
        );
        assert!(overview.contains(&row), "the table lacks {row}");
    }
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
    assert!(staff.contains("2 of 2 staff online now"), "{staff}");
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
