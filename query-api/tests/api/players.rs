//! `GET /api/players/{uuid}`: every field, the online/offline and effective-end rules, rank
//! and staff rules, 404s and key checks.

use crate::helpers::{problem, text};
use crate::read_models::{
    Dashboard, Punishment, ago, flag, iso, now, player, punishment, rank, server, session, time,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

#[tokio::test]
async fn a_profile_reports_status_playtime_joins_and_recent_history() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    // Default sync interval 15 s: a server is offline after 45 s without a heartbeat.
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 5)).await?;
    let silent = server(pool, account, Some("Survival"), true, ago(now, 120)).await?;
    let stopped = server(pool, account, Some("Creative"), false, ago(now, 2)).await?;
    let alice = player(pool, account, "Alice", ago(now, 864_000), ago(now, 60)).await?;
    rank(pool, account, alice, ("Mod", None, None)).await?;
    sqlx::query(
        "UPDATE players SET linked_platform = 'discord', linked_external_id = '4242', \
         linked_external_name = 'alice#1', linked_at = $3 WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(alice)
    .bind(ago(now, 3600))
    .execute(pool)
    .await?;
    // Closed: 3600 s.
    session(
        pool,
        account,
        alice,
        lobby,
        ago(now, 10_800),
        Some(ago(now, 7200)),
    )
    .await?;
    // Open on a silent server: ends at its last heartbeat, 600 - 120 = 480 s.
    session(pool, account, alice, silent, ago(now, 600), None).await?;
    // Open on a server that shut down before the join: ends at joined_at (never before), 0 s.
    session(pool, account, alice, stopped, ago(now, 1), None).await?;
    // Open on an online server: still open, about 60 s so far.
    session(pool, account, alice, lobby, ago(now, 60), None).await?;
    let staff = Uuid::new_v4();
    for i in 0..12 {
        let p = Punishment {
            player: alice,
            kind: "warning",
            staff: Some((staff, Some("Judge"))),
            server: Some(lobby),
            issued_at: ago(now, 1000 + i),
            expires_at: None,
        };
        punishment(pool, account, p).await?;
    }
    for i in 0..11 {
        flag(pool, account, alice, silent, ago(now, 2000 + i)).await?;
    }

    let body = dash.ok(&format!("/api/players/{alice}")).await?;
    assert_eq!(body["uuid"], json!(alice));
    assert_eq!(body["username"], "Alice");
    assert_eq!(time(&body["first_seen"]), ago(now, 864_000));
    assert_eq!(body["last_seen"], iso(ago(now, 60)));
    assert_eq!(body["is_online"], true);
    assert_eq!(body["current_server_id"], json!(lobby));
    assert_eq!(body["rank"], "Mod");
    assert_eq!(
        body["is_staff"], true,
        "Mod matches the default 'mod' group"
    );
    let playtime = body["total_playtime"].as_i64().unwrap_or_default();
    assert!(
        (3600 + 480 + 60..3600 + 480 + 60 + 30).contains(&playtime),
        "{playtime}"
    );
    assert_eq!(
        body["linked_account"],
        json!({"platform": "discord", "external_id": "4242", "external_name": "alice#1",
               "linked_at": iso(ago(now, 3600))})
    );
    let joins = body["joins"].as_array().cloned().unwrap_or_default();
    let expected = [
        (stopped, "Creative", ago(now, 1), Some(ago(now, 1))),
        (lobby, "Lobby", ago(now, 60), None),
        (silent, "Survival", ago(now, 600), Some(ago(now, 120))),
        (lobby, "Lobby", ago(now, 10_800), Some(ago(now, 7200))),
    ];
    assert_eq!(joins.len(), expected.len(), "{joins:?}");
    for (join, (server_id, name, joined, left)) in joins.iter().zip(expected) {
        assert_eq!(join["server_id"], json!(server_id));
        assert_eq!(join["server_name"], name);
        assert_eq!(join["joined_at"], iso(joined));
        assert_eq!(join["left_at"], json!(left.map(iso)), "{join}");
    }
    let punishments = body["recent_punishments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(punishments.len(), 10);
    assert_eq!(punishments[0]["issued_at"], iso(ago(now, 1000)));
    assert_eq!(punishments[9]["issued_at"], iso(ago(now, 1009)));
    assert_eq!(punishments[0]["staff_username"], "Judge");
    assert_eq!(
        punishments[0]["is_active"], false,
        "warnings are never active"
    );
    let flags = body["recent_anticheat_flags"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(flags.len(), 10);
    assert_eq!(flags[0]["flagged_at"], iso(ago(now, 2000)));
    assert_eq!(flags[0]["check_name"], "Reach");

    // A longer sync interval brings the silent server back: its session is open again.
    let response = dash
        .app
        .admin(
            Method::PUT,
            &format!("/api/admin/accounts/{account}/settings"),
        )
        .json(&json!({"staff_groups": ["vip"], "sync_interval_seconds": 60}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body = dash.ok(&format!("/api/players/{alice}")).await?;
    assert_eq!(body["joins"][2]["left_at"], Value::Null);
    assert_eq!(
        body["current_server_id"],
        json!(lobby),
        "the newest open one"
    );
    assert_eq!(body["is_staff"], false, "'Mod' is no longer a staff group");
    let playtime = body["total_playtime"].as_i64().unwrap_or_default();
    assert!(
        (3600 + 600 + 60..3600 + 600 + 60 + 30).contains(&playtime),
        "{playtime}"
    );
    Ok(())
}

#[tokio::test]
async fn rank_expiry_and_staff_by_punishing() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let seen = |name: &'static str| player(pool, account, name, ago(now, 100), ago(now, 50));
    let (quiet, judge, retired, expired, temporary) = (
        seen("Quiet").await?,
        seen("Judge").await?,
        seen("Retired").await?,
        seen("Expired").await?,
        seen("Temporary").await?,
    );
    let punish = |staff: Uuid, days: i64| Punishment {
        player: quiet,
        kind: "kick",
        staff: Some((staff, None)),
        server: None,
        issued_at: ago(now, days * 86_400),
        expires_at: None,
    };
    punishment(pool, account, punish(judge, 29)).await?;
    punishment(pool, account, punish(retired, 31)).await?;
    rank(pool, account, judge, ("default", None, None)).await?;
    rank(
        pool,
        account,
        expired,
        ("HELPER", Some("default"), Some(ago(now, 1))),
    )
    .await?;
    rank(
        pool,
        account,
        temporary,
        ("Admin", Some("default"), Some(ago(now, -3600))),
    )
    .await?;

    let profile = |uuid: Uuid| {
        let dash = &dash;
        async move { dash.ok(&format!("/api/players/{uuid}")).await }
    };
    let body = profile(quiet).await?;
    assert_eq!(
        (
            &body["rank"],
            &body["is_staff"],
            &body["is_online"],
            &body["total_playtime"]
        ),
        (&Value::Null, &json!(false), &json!(false), &json!(0))
    );
    assert_eq!(body["current_server_id"], Value::Null);
    assert_eq!(body["linked_account"], Value::Null);
    assert_eq!(body["joins"], json!([]));
    assert_eq!(body["recent_punishments"].as_array().map(Vec::len), Some(2));
    assert_eq!(body["recent_punishments"][0]["type"], "kick");
    let body = profile(judge).await?;
    assert_eq!(
        (&body["rank"], &body["is_staff"]),
        (&json!("default"), &json!(true))
    );
    let body = profile(retired).await?;
    assert_eq!(body["is_staff"], false, "punished 31 days ago");
    let body = profile(expired).await?;
    assert_eq!(
        (&body["rank"], &body["is_staff"]),
        (&json!("default"), &json!(false))
    );
    let body = profile(temporary).await?;
    assert_eq!(
        (&body["rank"], &body["is_staff"]),
        (&json!("Admin"), &json!(true))
    );
    Ok(())
}

#[tokio::test]
async fn unknown_players_invalid_uuids_and_wrong_keys() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let now = now();
    let other = dash.app.create_account("Other").await?;
    let theirs = player(dash.pool(), other.parse()?, "Theirs", now, now).await?;
    let mine = player(dash.pool(), dash.account, "Mine", now, now).await?;
    for suffix in ["", "/punishments", "/flags", "/chatlog"] {
        for who in [
            theirs.to_string(),
            Uuid::new_v4().to_string(),
            "not-a-uuid".into(),
        ] {
            let path = format!("/api/players/{who}{suffix}");
            problem(
                dash.app.get_with(&path, Some(&dash.key)).await?,
                StatusCode::NOT_FOUND,
                "not_found",
            )
            .await?;
        }
        let path = format!("/api/players/{mine}{suffix}");
        dash.ok(&path).await?;
        problem(
            dash.app.get_with(&path, None).await?,
            StatusCode::UNAUTHORIZED,
            "missing_credentials",
        )
        .await?;
    }

    let plugin = dash
        .app
        .create_key(&dash.account.to_string(), "plugin")
        .await?;
    let plugin = text(&plugin["key"]);
    let paths = [
        format!("/api/players/{mine}"),
        format!("/api/players/{mine}/chatlog"),
        "/api/servers".into(),
        "/api/staff".into(),
    ];
    assert!(
        dash.app
            .status_becomes(
                &paths[0],
                &plugin,
                StatusCode::FORBIDDEN,
                crate::helpers::WAIT
            )
            .await?
    );
    for path in &paths {
        problem(
            dash.app.get_with(path, Some(&plugin)).await?,
            StatusCode::FORBIDDEN,
            "wrong_key_type",
        )
        .await?;
        problem(
            dash.app.get_with(path, Some(&dash.app.admin_key)).await?,
            StatusCode::FORBIDDEN,
            "wrong_key_type",
        )
        .await?;
        problem(
            dash.app.get_with(path, Some("wdn_dash_nope")).await?,
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
        )
        .await?;
    }
    Ok(())
}
