//! The history lists: punishments, flags and chatlog: fields, `is_active`, keyset paging
//! across pages, and 422 on a bad `limit` or `cursor`.

use crate::helpers::{error_fields, problem};
use crate::read_models::{
    Dashboard, Punishment, ago, all_pages, chat, flag, iso, items, now, player, punishment, server,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

#[tokio::test]
async fn punishments_report_every_field_and_whether_they_are_active() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let target = player(pool, account, "Target", ago(now, 9000), now).await?;
    let staff = player(pool, account, "StaffPlayer", ago(now, 9000), now).await?;
    let issue = |kind, at, expires_at, staff| Punishment {
        player: target,
        kind,
        staff,
        server: Some(lobby),
        issued_at: ago(now, at),
        expires_at,
    };
    let ban = punishment(
        pool,
        account,
        issue("ban", 100, None, Some((staff, Some("Mod1")))),
    )
    .await?;
    let expired = punishment(pool, account, issue("mute", 200, Some(ago(now, 10)), None)).await?;
    let temporary = punishment(
        pool,
        account,
        issue("mute", 300, Some(ago(now, -600)), Some((staff, None))),
    )
    .await?;
    let revoked = punishment(pool, account, issue("ban", 400, None, None)).await?;
    let kick = punishment(pool, account, issue("kick", 500, None, None)).await?;
    let warning = punishment(pool, account, issue("warning", 600, None, None)).await?;
    let revoker = Uuid::new_v4();
    sqlx::query(
        "UPDATE punishments SET revoked_at = $3, revoked_by = $4, revoked_by_name = 'Admin1', \
         revoke_reason = 'appeal accepted', ip_based = true WHERE account_id = $1 AND id = $2",
    )
    .bind(account)
    .bind(revoked)
    .bind(ago(now, 50))
    .bind(revoker)
    .execute(pool)
    .await?;

    let body = dash
        .ok(&format!("/api/players/{target}/punishments"))
        .await?;
    assert_eq!(body["next_cursor"], Value::Null);
    let list = items(&body);
    let ids: Vec<Value> = list.iter().map(|p| p["id"].clone()).collect();
    assert_eq!(
        ids,
        json!([ban, expired, temporary, revoked, kick, warning])
            .as_array()
            .cloned()
            .unwrap_or_default()
    );
    assert_eq!(
        list[0],
        json!({"id": ban, "type": "ban", "reason": "rule breaking", "staff_uuid": staff,
               "staff_username": "Mod1", "server_id": lobby, "server_name": "Lobby",
               "issued_at": iso(ago(now, 100)), "expires_at": null, "is_active": true,
               "revoked_at": null, "revoked_by": null, "revoked_by_username": null,
               "revoke_reason": null, "scope": "global", "source_plugin": "litebans",
               "ip_based": false, "applied_on": []})
    );
    let active: Vec<&Value> = list.iter().map(|p| &p["is_active"]).collect();
    assert_eq!(
        active,
        [
            &json!(true),
            &json!(false),
            &json!(true),
            &json!(false),
            &json!(false),
            &json!(false)
        ]
    );
    assert_eq!(list[1]["expires_at"], iso(ago(now, 10)));
    assert_eq!(
        list[2]["staff_username"], "StaffPlayer",
        "falls back to the player name"
    );
    assert_eq!(list[3]["revoked_at"], iso(ago(now, 50)));
    assert_eq!(list[3]["revoked_by"], json!(revoker));
    assert_eq!(list[3]["revoke_reason"], "appeal accepted");
    assert_eq!(list[3]["ip_based"], true);
    assert_eq!(list[4]["staff_uuid"], Value::Null);
    Ok(())
}

#[tokio::test]
async fn history_lists_page_with_cursors() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let srv = server(pool, account, None, true, now).await?;
    let target = player(pool, account, "Target", ago(now, 9000), now).await?;
    let bystander = player(pool, account, "Bystander", ago(now, 9000), now).await?;
    // Seven of each, with ties on the time (broken by id), plus another player's rows.
    for i in 0..7 {
        let at = ago(now, i / 2);
        chat(pool, account, target, srv, &format!("message {i}"), at).await?;
        flag(pool, account, target, srv, at).await?;
        let p = Punishment {
            player: target,
            kind: "ban",
            staff: None,
            server: Some(srv),
            issued_at: at,
            expires_at: None,
        };
        punishment(pool, account, p).await?;
    }
    chat(pool, account, bystander, srv, "/help", now).await?;
    flag(pool, account, bystander, srv, now).await?;

    for (list, time) in [
        ("chatlog", "sent_at"),
        ("flags", "flagged_at"),
        ("punishments", "issued_at"),
    ] {
        let everything = items(&dash.ok(&format!("/api/players/{target}/{list}")).await?);
        assert_eq!(everything.len(), 7, "{list}");
        let pages = all_pages(&dash, &format!("/api/players/{target}/{list}?limit=3")).await?;
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 3, 1],
            "{list}"
        );
        assert_eq!(
            pages.concat(),
            everything,
            "{list}: pages add up to the whole list"
        );
        let keys: Vec<(String, String)> = everything
            .iter()
            .map(|e| {
                (
                    e[time].as_str().unwrap_or_default().to_owned(),
                    e["id"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(keys, sorted, "{list}: newest first, then id descending");
        // A page that ends exactly at the end has no next page.
        let pages = all_pages(&dash, &format!("/api/players/{target}/{list}?limit=7")).await?;
        assert_eq!(pages.len(), 1, "{list}");
    }
    let entry = &items(
        &dash
            .ok(&format!("/api/players/{target}/chatlog?limit=1"))
            .await?,
    )[0];
    let keys: Vec<&str> = entry
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys.len(), 6, "{entry}");
    assert_eq!(
        (&entry["entry_type"], &entry["channel"], &entry["server_id"]),
        (&json!("chat"), &json!("global"), &json!(srv))
    );
    let flag = &items(
        &dash
            .ok(&format!("/api/players/{target}/flags?limit=1"))
            .await?,
    )[0];
    for (field, value) in [
        ("check_name", json!("Reach")),
        ("check_type", json!("A")),
        ("violation_level", json!(4.5)),
        ("detail", json!("reach 3.4")),
        ("source_plugin", json!("grim")),
        ("is_experimental", json!(true)),
        ("server_id", json!(srv)),
        ("flagged_at", json!(iso(now))),
    ] {
        assert_eq!(flag[field], value, "{field}");
    }
    let command = &items(
        &dash
            .ok(&format!("/api/players/{bystander}/chatlog"))
            .await?,
    )[0];
    assert_eq!(
        (&command["entry_type"], &command["message"]),
        (&json!("command"), &json!("/help"))
    );
    Ok(())
}

#[tokio::test]
async fn bad_limits_and_cursors_are_422_and_the_chatlog_defaults_to_50() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let srv = server(pool, account, Some("Lobby"), true, now).await?;
    let target = player(pool, account, "Chatty", ago(now, 9000), now).await?;
    for i in 0..55 {
        chat(
            pool,
            account,
            target,
            srv,
            &format!("line {i}"),
            ago(now, i),
        )
        .await?;
    }
    for list in ["chatlog", "flags", "punishments"] {
        for (query, field) in [
            ("limit=0", "limit"),
            ("limit=501", "limit"),
            ("limit=ten", "limit"),
            ("limit=1.5", "limit"),
            ("limit=", "limit"),
            ("cursor=garbage", "cursor"),
            ("cursor=1_2", "cursor"),
        ] {
            let path = format!("/api/players/{target}/{list}?{query}");
            let body = problem(
                dash.app.get_with(&path, Some(&dash.key)).await?,
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_failed",
            )
            .await?;
            assert_eq!(error_fields(&body), [field], "{path}");
        }
    }
    let body = dash.ok(&format!("/api/players/{target}/chatlog")).await?;
    assert_eq!(items(&body).len(), 50);
    assert!(body["next_cursor"].is_string());
    assert_eq!(items(&body)[0]["message"], "line 0");
    let body = dash
        .ok(&format!("/api/players/{target}/chatlog?limit=500"))
        .await?;
    assert_eq!(items(&body).len(), 55);
    assert_eq!(body["next_cursor"], Value::Null);
    Ok(())
}
