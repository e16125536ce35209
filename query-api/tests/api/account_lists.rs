//! `GET /api/punishments`, `/api/flags` and `/api/chat`: the whole account's logs with their
//! filters, keyset paging, 422 on bad parameters, and tenancy (another account's rows never
//! appear).

use crate::helpers::{error_fields, problem, text};
use crate::read_models::{
    Dashboard, Punishment, ago, all_pages, chat, flag, iso, items, now, player, punishment, server,
};
use reqwest::StatusCode;
use serde_json::Value;
use uuid::Uuid;

/// The `id`s of a list response, in order.
fn ids(body: &Value) -> Vec<String> {
    items(body).iter().map(|i| text(&i["id"])).collect()
}

/// `id`s as strings, for comparing with [`ids`].
fn strs(ids: &[Uuid]) -> Vec<String> {
    ids.iter().map(Uuid::to_string).collect()
}

/// A time as a query value (`+` would read as a space).
fn q(at: chrono::DateTime<chrono::Utc>) -> String {
    iso(at).replace('+', "%2B")
}

/// Every parameter in `cases` is a 422 naming that field on `path`.
async fn refuses(dash: &Dashboard, path: &str, cases: &[(&str, &str)]) -> anyhow::Result<()> {
    for (query, field) in cases {
        let response = dash
            .app
            .get_with(&format!("{path}?{query}"), Some(&dash.key))
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(error_fields(&body), [*field], "{path}?{query}");
    }
    Ok(())
}

/// Another account on the same service, and its dashboard key.
async fn other_account(dash: &Dashboard) -> anyhow::Result<(Uuid, String)> {
    let (other, key) = dash.app.account_with_dashboard_key().await?;
    Ok((other.parse()?, text(&key["key"])))
}

/// The row ids `path` lists for `key` (asserting a 200).
async fn get_ids(dash: &Dashboard, key: &str, path: &str) -> anyhow::Result<Vec<String>> {
    let response = dash.app.get_with(path, Some(key)).await?;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    Ok(ids(&response.json::<Value>().await?))
}

#[tokio::test]
async fn the_account_punishment_log_filters_and_pages() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let survival = server(pool, account, Some("Survival"), true, now).await?;
    let alice = player(pool, account, "Alice", ago(now, 9000), now).await?;
    let bob = player(pool, account, "Bob", ago(now, 9000), now).await?;
    let moderator = player(pool, account, "Moderator", ago(now, 9000), now).await?;
    let issue = |player, kind, server, staff, at, expires_at| Punishment {
        player,
        kind,
        staff,
        server: Some(server),
        issued_at: ago(now, at),
        expires_at,
    };
    let by_mod = Some((moderator, None));
    let ban = punishment(pool, account, issue(alice, "ban", lobby, by_mod, 100, None)).await?;
    let expired = issue(bob, "mute", survival, None, 200, Some(ago(now, 50)));
    let expired = punishment(pool, account, expired).await?;
    let kick = punishment(pool, account, issue(bob, "kick", lobby, by_mod, 300, None)).await?;
    let mute = issue(alice, "mute", survival, None, 400, Some(ago(now, -600)));
    let mute = punishment(pool, account, mute).await?;

    let all = dash.ok("/api/punishments").await?;
    assert_eq!(ids(&all), strs(&[ban, expired, kick, mute]));
    let first = &items(&all)[0];
    assert_eq!(first["player_uuid"], alice.to_string());
    assert_eq!(first["player_username"], "Alice");
    assert_eq!(first["type"], "ban");
    assert_eq!(first["staff_username"], "Moderator");
    assert_eq!(first["server_name"], "Lobby");
    assert_eq!(first["is_active"], true);
    for (query, expected) in [
        ("type=mute", vec![expired, mute]),
        (&format!("player_uuid={bob}"), vec![expired, kick]),
        (&format!("staff_uuid={moderator}"), vec![ban, kick]),
        (&format!("server_id={survival}"), vec![expired, mute]),
        ("active=true", vec![ban, mute]),
        ("active=false", vec![expired, kick]),
        (
            &format!("from={}&to={}", q(ago(now, 300)), q(ago(now, 100))),
            vec![expired, kick],
        ),
        (&format!("type=mute&player_uuid={alice}"), vec![mute]),
    ] {
        let body = dash.ok(&format!("/api/punishments?{query}")).await?;
        assert_eq!(ids(&body), strs(&expected), "{query}");
    }
    let pages = all_pages(&dash, "/api/punishments?limit=3").await?;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 1]);
    let paged: Vec<String> = pages.iter().flatten().map(|p| text(&p["id"])).collect();
    assert_eq!(paged, strs(&[ban, expired, kick, mute]));

    let (other, key) = other_account(&dash).await?;
    let theirs = player(pool, other, "Theirs", ago(now, 9000), now).await?;
    let their_server = server(pool, other, None, true, now).await?;
    let own = punishment(
        pool,
        other,
        issue(theirs, "ban", their_server, None, 10, None),
    )
    .await?;
    assert_eq!(
        get_ids(&dash, &key, "/api/punishments").await?,
        strs(&[own])
    );
    let ours = format!("/api/punishments?player_uuid={alice}");
    assert!(get_ids(&dash, &key, &ours).await?.is_empty());
    assert_eq!(ids(&dash.ok("/api/punishments").await?).len(), 4);

    refuses(
        &dash,
        "/api/punishments",
        &[
            ("type=jail", "type"),
            ("active=maybe", "active"),
            ("staff_uuid=nope", "staff_uuid"),
            ("from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z", "from"),
            ("to=0001-01-01T00:00:00Z", "to"),
            ("cursor=abc", "cursor"),
        ],
    )
    .await
}

#[tokio::test]
async fn the_account_flag_feed_filters_and_pages() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let survival = server(pool, account, Some("Survival"), true, now).await?;
    let alice = player(pool, account, "Alice", ago(now, 9000), now).await?;
    let bob = player(pool, account, "Bob", ago(now, 9000), now).await?;
    let reach = flag(pool, account, alice, lobby, ago(now, 10)).await?;
    let fly = flag(pool, account, bob, survival, ago(now, 20)).await?;
    let speed = flag(pool, account, alice, survival, ago(now, 30)).await?;
    for (id, check, vl) in [(fly, "Fly", 12.0), (speed, "Speed", 1.0)] {
        sqlx::query(
            "UPDATE anticheat_flags SET check_name = $3, violation_level = $4 \
             WHERE account_id = $1 AND id = $2",
        )
        .bind(account)
        .bind(id)
        .bind(check)
        .bind(vl)
        .execute(pool)
        .await?;
    }

    let all = dash.ok("/api/flags").await?;
    assert_eq!(ids(&all), strs(&[reach, fly, speed]));
    let first = &items(&all)[0];
    assert_eq!(first["player_uuid"], alice.to_string());
    assert_eq!(first["player_username"], "Alice");
    assert_eq!(first["check_name"], "Reach");
    assert_eq!(first["violation_level"], 4.5);
    for (query, expected) in [
        ("check_name=reach", vec![reach]),
        (&format!("player_uuid={alice}"), vec![reach, speed]),
        (&format!("server_id={survival}"), vec![fly, speed]),
        ("min_vl=4.5", vec![reach, fly]),
        ("min_vl=10", vec![fly]),
        (
            &format!("from={}&to={}", q(ago(now, 30)), q(ago(now, 10))),
            vec![fly, speed],
        ),
    ] {
        let body = dash.ok(&format!("/api/flags?{query}")).await?;
        assert_eq!(ids(&body), strs(&expected), "{query}");
    }
    let pages = all_pages(&dash, "/api/flags?limit=2").await?;
    let paged: Vec<String> = pages.iter().flatten().map(|p| text(&p["id"])).collect();
    assert_eq!((pages.len(), paged), (2, strs(&[reach, fly, speed])));

    let (other, key) = other_account(&dash).await?;
    let theirs = player(pool, other, "Theirs", ago(now, 9000), now).await?;
    let own = flag(pool, other, theirs, Uuid::new_v4(), now).await?;
    assert_eq!(get_ids(&dash, &key, "/api/flags").await?, strs(&[own]));
    let ours = format!("/api/flags?player_uuid={alice}");
    assert!(get_ids(&dash, &key, &ours).await?.is_empty());

    refuses(
        &dash,
        "/api/flags",
        &[
            ("min_vl=lots", "min_vl"),
            ("min_vl=NaN", "min_vl"),
            ("player_uuid=1", "player_uuid"),
            ("check_name=", "check_name"),
            ("from=soon", "from"),
        ],
    )
    .await
}

#[tokio::test]
async fn the_account_chat_log_filters_searches_and_pages() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let survival = server(pool, account, Some("Survival"), true, now).await?;
    let alice = player(pool, account, "Alice", ago(now, 9000), now).await?;
    let bob = player(pool, account, "Bob", ago(now, 9000), now).await?;
    let hello = chat(pool, account, alice, lobby, "Hello there", ago(now, 10)).await?;
    let command = chat(
        pool,
        account,
        bob,
        survival,
        "/msg alice HELLO",
        ago(now, 20),
    )
    .await?;
    let percent = chat(pool, account, alice, survival, "100% sure", ago(now, 30)).await?;
    let plain = chat(pool, account, bob, lobby, "gg everyone", ago(now, 40)).await?;
    sqlx::query("UPDATE chat_messages SET channel = 'staff' WHERE account_id = $1 AND id = $2")
        .bind(account)
        .bind(plain)
        .execute(pool)
        .await?;

    let all = dash.ok("/api/chat").await?;
    assert_eq!(ids(&all), strs(&[hello, command, percent, plain]));
    let first = &items(&all)[0];
    assert_eq!(first["player_uuid"], alice.to_string());
    assert_eq!(first["player_username"], "Alice");
    assert_eq!(first["message"], "Hello there");
    assert_eq!(first["entry_type"], "chat");
    for (query, expected) in [
        ("q=hello", vec![hello, command]),
        ("q=HeLLo%20there", vec![hello]),
        // `%` is matched literally, not as a wildcard.
        ("q=0%25", vec![percent]),
        ("q=nobody%20said%20this", vec![]),
        ("entry_type=command", vec![command]),
        ("channel=staff", vec![plain]),
        (&format!("player_uuid={bob}"), vec![command, plain]),
        (&format!("server_id={lobby}"), vec![hello, plain]),
        (&format!("server_id={lobby}&q=hello"), vec![hello]),
        (
            &format!("from={}&to={}", q(ago(now, 40)), q(ago(now, 20))),
            vec![percent, plain],
        ),
    ] {
        let body = dash.ok(&format!("/api/chat?{query}")).await?;
        assert_eq!(ids(&body), strs(&expected), "{query}");
    }
    let pages = all_pages(&dash, "/api/chat?limit=1&q=e").await?;
    let paged: Vec<String> = pages.iter().flatten().map(|p| text(&p["id"])).collect();
    assert_eq!(paged, strs(&[hello, command, percent, plain]));

    let (other, key) = other_account(&dash).await?;
    let theirs = player(pool, other, "Theirs", ago(now, 9000), now).await?;
    let own = chat(
        pool,
        other,
        theirs,
        Uuid::new_v4(),
        "hello from elsewhere",
        now,
    )
    .await?;
    assert_eq!(
        get_ids(&dash, &key, "/api/chat?q=hello").await?,
        strs(&[own])
    );
    assert_eq!(
        ids(&dash.ok("/api/chat?q=hello").await?),
        strs(&[hello, command])
    );

    refuses(
        &dash,
        "/api/chat",
        &[
            ("entry_type=shout", "entry_type"),
            ("q=", "q"),
            ("q=a%00", "q"),
            ("server_id=x", "server_id"),
            ("limit=501", "limit"),
        ],
    )
    .await
}
