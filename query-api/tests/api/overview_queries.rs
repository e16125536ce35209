//! The Overview, activity and staff query functions (`query_api::queries`) and their JSON
//! endpoints, over rows written as the projector writes them, against hand-computed expectations.

use crate::dashboard_queries::rollup;
use crate::read_models::{
    Dashboard, Punishment, ago, flag, keep_recent_activity, now, player, punishment, rank, server,
    session,
};
use chrono::{DateTime, Duration, DurationRound, Utc};
use query_api::queries::{
    ActivityKind, overview, recent_activity, staff_leaderboard, staff_on_duty,
};
use reqwest::StatusCode;
use sqlx::PgPool;
use uuid::Uuid;

#[allow(clippy::too_many_arguments)]
async fn event(
    pool: &PgPool,
    account: Uuid,
    seq: i64,
    name: &str,
    player: Uuid,
    server: Option<Uuid>,
    properties: &str,
    at: DateTime<Utc>,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id, \
           properties, occurred_at, received_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $9)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(seq)
    .bind(name)
    .bind(name != "level_up")
    .bind(player)
    .bind(server)
    .bind(properties)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

#[tokio::test]
async fn the_overview_sums_the_network_and_lists_activity_newest_first() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let other = Dashboard::start().await?;
    let a = server(pool, account, Some("A"), true, ago(now, 5)).await?;
    let b = server(pool, account, Some("B"), false, ago(now, 5)).await?;
    let elsewhere = server(pool, other.account, Some("X"), true, ago(now, 5)).await?;
    let bucket = now.duration_trunc(Duration::minutes(5))?;
    let roll = |samples, players| (samples, 20.0 * samples as f64, 20.0, 20.0, players, 0, 9);
    rollup(
        pool,
        "server_five_minutes",
        (account, a),
        bucket,
        roll(2, 10),
    )
    .await?;
    rollup(
        pool,
        "server_five_minutes",
        (account, b),
        bucket,
        roll(4, 12),
    )
    .await?;
    rollup(
        pool,
        "server_five_minutes",
        (other.account, elsewhere),
        bucket,
        roll(1, 99),
    )
    .await?;

    let steve = player(pool, account, "Steve", ago(now, 900), ago(now, 10)).await?;
    let modu = player(pool, account, "Mod", ago(now, 900), ago(now, 10)).await?;
    rank(pool, account, modu, ("mod", None, None)).await?;
    session(pool, account, modu, a, ago(now, 300), None).await?;
    let join = r#"{"player_name":"Steve","client_version":"1.21"}"#;
    event(
        pool,
        account,
        1,
        "session_join",
        steve,
        Some(a),
        join,
        ago(now, 60),
    )
    .await?;
    event(
        pool,
        account,
        2,
        "chat_message",
        steve,
        Some(a),
        r#"{"message":"hi"}"#,
        ago(now, 50),
    )
    .await?;
    let ban = r#"{"player_name":"Steve","type":"ban","reason":"xray","staff_name":"Mod"}"#;
    event(
        pool,
        account,
        3,
        "punish_ban",
        steve,
        Some(a),
        ban,
        ago(now, 40),
    )
    .await?;
    event(
        pool,
        account,
        4,
        "level_up",
        steve,
        None,
        "{}",
        ago(now, 30),
    )
    .await?;
    let promote = r#"{"action":"set","group":"vip","staff_name":"Mod"}"#;
    event(
        pool,
        account,
        5,
        "rank_change",
        steve,
        None,
        promote,
        ago(now, 20),
    )
    .await?;
    flag(pool, account, steve, a, ago(now, 10)).await?;
    event(
        pool,
        other.account,
        6,
        "session_join",
        steve,
        Some(elsewhere),
        join,
        ago(now, 5),
    )
    .await?;

    keep_recent_activity(pool, account).await?;
    keep_recent_activity(pool, other.account).await?;
    let view = overview(pool, account, now).await?;
    assert_eq!(
        (view.servers_online, view.servers_total, view.players_online),
        (1, 2, 3)
    );
    assert_eq!(
        view.servers.len(),
        2,
        "another account's server never appears"
    );
    assert_eq!(view.network.len(), 288);
    let last = view.network.last().expect("points");
    assert_eq!(
        (last.at, last.players),
        (bucket, Some(10.0 / 2.0 + 12.0 / 4.0))
    );
    assert!(view.network[..287].iter().all(|p| p.players.is_none()));
    assert_eq!(view.staff_online.len(), 1);
    assert_eq!(view.staff_online[0].uuid, modu);
    let kinds: Vec<(ActivityKind, Option<&str>, Option<&str>)> = view
        .activity
        .iter()
        .map(|a| (a.kind, a.actor.as_deref(), a.detail.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            (ActivityKind::Flag, None, Some("Reach A")),
            (ActivityKind::RankChange, Some("Mod"), Some("vip")),
            (ActivityKind::Punishment, Some("Mod"), Some("xray")),
            (ActivityKind::Join, None, None),
        ]
    );
    assert!(
        view.activity
            .iter()
            .all(|a| a.player_name.as_deref() == Some("Steve"))
    );
    assert_eq!(recent_activity(pool, account, 2).await?.len(), 2);

    let body = dash.ok("/api/overview").await?;
    assert_eq!(body["servers_total"], 2);
    assert_eq!(body["activity"][0]["kind"], "flag");
    Ok(())
}

#[tokio::test]
async fn the_staff_leaderboard_counts_punishments_and_time_online() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 3)).await?;
    let day = 86_400;
    let admin = player(pool, account, "Ada", ago(now, 40 * day), ago(now, 10)).await?;
    rank(pool, account, admin, ("admin", None, None)).await?;
    let target = player(pool, account, "Target", ago(now, 40 * day), ago(now, 10)).await?;
    // Half inside the 7-day window, all inside 30; one hour 10 days ago; open for 30 min.
    session(
        pool,
        account,
        admin,
        lobby,
        ago(now, 8 * day),
        Some(ago(now, 6 * day)),
    )
    .await?;
    session(
        pool,
        account,
        admin,
        lobby,
        ago(now, 10 * day),
        Some(ago(now, 10 * day - 3600)),
    )
    .await?;
    session(pool, account, admin, lobby, ago(now, 1800), None).await?;
    let punish = |staff: Uuid, name, seconds| Punishment {
        player: target,
        kind: "warning",
        staff: Some((staff, Some(name))),
        server: Some(lobby),
        issued_at: ago(now, seconds),
        expires_at: None,
    };
    for seconds in [day, 2 * day, 20 * day] {
        punishment(pool, account, punish(admin, "Ada", seconds)).await?;
    }
    let console = Uuid::new_v4();
    for seconds in [3 * day, 4 * day, 5 * day] {
        punishment(pool, account, punish(console, "Helper", seconds)).await?;
    }

    let week = staff_leaderboard(pool, account, 7).await?;
    let lines: Vec<(Uuid, i64)> = week.iter().map(|e| (e.uuid, e.punishments)).collect();
    assert_eq!(lines, [(console, 3), (admin, 2)]);
    assert!(
        (week[1].online_seconds - (day + 1800)).abs() <= 2,
        "{week:?}"
    );
    assert_eq!(week[0].online_seconds, 0);
    let month = staff_leaderboard(pool, account, 30).await?;
    assert_eq!(month[0].uuid, admin, "3 punishments, then more time online");
    assert_eq!(month[0].punishments, 3);
    assert!(
        (month[0].online_seconds - (2 * day + 3600 + 1800)).abs() <= 2,
        "{month:?}"
    );

    let duty = staff_on_duty(pool, account, now).await?;
    let ada = duty
        .iter()
        .find(|d| d.member.uuid == admin)
        .expect("on the roster");
    assert_eq!(ada.server_name.as_deref(), Some("Lobby"));
    assert_eq!(ada.session_seconds, Some(1800));
    let helper = duty
        .iter()
        .find(|d| d.member.uuid == console)
        .expect("a punisher");
    assert_eq!(
        (helper.server_name.as_deref(), helper.session_seconds),
        (None, None)
    );

    let body = dash.ok("/api/staff/leaderboard?days=30").await?;
    assert_eq!(body["items"][0]["uuid"], admin.to_string());
    let (status, _) = dash.get("/api/staff/leaderboard?days=9").await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let other = Dashboard::start().await?;
    assert!(staff_leaderboard(pool, other.account, 30).await?.is_empty());
    Ok(())
}
