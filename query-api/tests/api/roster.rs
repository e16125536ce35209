//! `GET /api/servers` and `GET /api/staff`, and tenant isolation of every dashboard read.

use crate::helpers::text;
use crate::read_models::{
    Dashboard, Punishment, ago, chat, flag, iso, items, now, player, punishment, rank, server,
    session,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

#[tokio::test]
async fn servers_are_listed_by_name_with_their_status() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let survival = server(pool, account, Some("survival"), true, ago(now, 44)).await?;
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 46)).await?;
    let creative = server(pool, account, Some("Creative"), false, ago(now, 1)).await?;
    let unnamed = server(pool, account, None, true, now).await?;

    let body = dash.ok("/api/servers").await?;
    let list = items(&body);
    let ids: Vec<&Value> = list.iter().map(|s| &s["id"]).collect();
    assert_eq!(
        ids,
        [
            &json!(creative),
            &json!(lobby),
            &json!(survival),
            &json!(unnamed)
        ]
    );
    assert_eq!(
        list[2],
        json!({"id": survival, "name": "survival", "role": "server", "is_online": true, "tps": 19.5,
               "player_count": 3, "max_players": 100, "version": "Paper 1.21.4",
               "last_heartbeat_at": iso(ago(now, 44))})
    );
    let online: Vec<&Value> = list.iter().map(|s| &s["is_online"]).collect();
    // Lobby: no heartbeat for 46 s > 3 x 15 s. Creative: a graceful-shutdown heartbeat.
    assert_eq!(
        online,
        [&json!(false), &json!(false), &json!(true), &json!(true)]
    );
    assert_eq!(list[3]["name"], Value::Null);

    let response = dash
        .app
        .admin(
            Method::PUT,
            &format!("/api/admin/accounts/{account}/settings"),
        )
        .json(&json!({"staff_groups": [], "sync_interval_seconds": 16}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let list = items(&dash.ok("/api/servers").await?);
    assert_eq!(list[1]["is_online"], true, "46 s < 3 x 16 s");
    assert_eq!(list[0]["is_online"], false, "still shut down");
    Ok(())
}

#[tokio::test]
async fn staff_are_group_members_and_recent_punishers() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 3)).await?;
    let dead = server(pool, account, Some("Dead"), true, ago(now, 600)).await?;
    let seen = |name: &'static str| player(pool, account, name, ago(now, 9000), ago(now, 30));
    let (admin, moderator, punisher, old_punisher, lapsed, member) = (
        seen("Zed").await?,
        seen("amy").await?,
        seen("Bob").await?,
        seen("Old").await?,
        seen("Lapsed").await?,
        seen("Member").await?,
    );
    rank(pool, account, admin, ("Admin", None, None)).await?;
    rank(pool, account, moderator, ("MODERATOR", None, None)).await?;
    rank(
        pool,
        account,
        lapsed,
        ("helper", Some("member"), Some(ago(now, 5))),
    )
    .await?;
    rank(pool, account, member, ("member", None, None)).await?;
    session(pool, account, admin, lobby, ago(now, 100), None).await?;
    session(pool, account, moderator, dead, ago(now, 900), None).await?;
    let console_only = Uuid::new_v4();
    let punish = |staff: (Uuid, Option<&'static str>), days: i64| Punishment {
        player: member,
        kind: "mute",
        staff: Some(staff),
        server: Some(lobby),
        issued_at: ago(now, days * 86_400 + 60),
        expires_at: None,
    };
    punishment(pool, account, punish((punisher, Some("Bobby")), 3)).await?;
    punishment(pool, account, punish((old_punisher, None), 30)).await?;
    punishment(pool, account, punish((console_only, Some("Ghost")), 10)).await?;
    punishment(pool, account, punish((admin, None), 1)).await?;

    let list = items(&dash.ok("/api/staff").await?);
    assert_eq!(
        list,
        [
            json!({"uuid": moderator, "username": "amy", "rank": "MODERATOR", "is_online": false,
                   "current_server_id": null, "last_seen": iso(ago(now, 30)),
                   "session_started_at": null}),
            json!({"uuid": punisher, "username": "Bob", "rank": null, "is_online": false,
                   "current_server_id": null, "last_seen": iso(ago(now, 30)),
                   "session_started_at": null}),
            json!({"uuid": console_only, "username": "Ghost", "rank": null, "is_online": false,
                   "current_server_id": null, "last_seen": null, "session_started_at": null}),
            json!({"uuid": admin, "username": "Zed", "rank": "Admin", "is_online": true,
                   "current_server_id": lobby, "last_seen": iso(ago(now, 30)),
                   "session_started_at": iso(ago(now, 100))}),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn another_account_sees_none_of_it() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let staff = player(pool, account, "Staff", now, now).await?;
    rank(pool, account, staff, ("admin", None, None)).await?;
    session(pool, account, staff, lobby, ago(now, 10), None).await?;
    chat(pool, account, staff, lobby, "hi", now).await?;
    flag(pool, account, staff, lobby, now).await?;
    let p = Punishment {
        player: staff,
        kind: "ban",
        staff: Some((staff, None)),
        server: None,
        issued_at: now,
        expires_at: None,
    };
    punishment(pool, account, p).await?;
    assert_eq!(items(&dash.ok("/api/staff").await?).len(), 1);
    assert_eq!(items(&dash.ok("/api/servers").await?).len(), 1);

    let (other, key) = dash.app.account_with_dashboard_key().await?;
    let other_key = text(&key["key"]);
    let get = |path: String| {
        let (dash, key) = (&dash, other_key.clone());
        async move {
            let response = dash.app.get_with(&path, Some(&key)).await?;
            anyhow::Ok((response.status(), response.json::<Value>().await?))
        }
    };
    assert_eq!(
        get("/api/servers".into()).await?,
        (StatusCode::OK, json!({"items": []}))
    );
    assert_eq!(
        get("/api/staff".into()).await?,
        (StatusCode::OK, json!({"items": []}))
    );
    for suffix in ["", "/punishments", "/flags", "/chatlog"] {
        let (status, _) = get(format!("/api/players/{staff}{suffix}")).await?;
        assert_eq!(status, StatusCode::NOT_FOUND, "{suffix}");
    }
    // The same player seen by both accounts: each sees only its own rows.
    let other: Uuid = other.parse()?;
    sqlx::query(
        "INSERT INTO players (account_id, uuid, username, first_seen, last_seen) \
         VALUES ($1, $2, 'Elsewhere', $3, $3)",
    )
    .bind(other)
    .bind(staff)
    .bind(now)
    .execute(pool)
    .await?;
    let (status, body) = get(format!("/api/players/{staff}")).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            &body["username"],
            &body["is_online"],
            &body["rank"],
            &body["is_staff"]
        ),
        (
            &json!("Elsewhere"),
            &json!(false),
            &Value::Null,
            &json!(false)
        )
    );
    assert_eq!(
        (
            &body["joins"],
            &body["recent_punishments"],
            &body["recent_anticheat_flags"]
        ),
        (&json!([]), &json!([]), &json!([]))
    );
    for list in ["punishments", "flags", "chatlog"] {
        let (_, body) = get(format!("/api/players/{staff}/{list}")).await?;
        assert_eq!(body, json!({"items": [], "next_cursor": null}), "{list}");
    }
    Ok(())
}
