//! `GET /api/players?search=` and `GET /api/players/{uuid}/alts`: name and UUID search,
//! online and recently-seen filters, paging, alts by shared IP hash with ban/mute status,
//! 422 on bad parameters, and tenancy (another account's players never appear or link).

use crate::helpers::{error_fields, problem, text};
use crate::read_models::{
    Dashboard, Punishment, ago, all_pages, iso, items, join_from, now, player, punishment, server,
    session,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

/// The usernames of a list response, in order.
fn names(body: &Value) -> Vec<String> {
    items(body).iter().map(|p| text(&p["username"])).collect()
}

#[tokio::test]
async fn players_are_found_by_name_part_prefix_or_uuid() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let steve = player(pool, account, "Steve", ago(now, 9000), ago(now, 10)).await?;
    player(pool, account, "steven_x", ago(now, 9000), ago(now, 20)).await?;
    player(pool, account, "XSTEVEX", ago(now, 9000), ago(now, 30)).await?;
    player(pool, account, "StevenAx", ago(now, 9000), ago(now, 40)).await?;
    let alex = player(pool, account, "Alex", ago(now, 9000), ago(now, 5000)).await?;
    // Only Steve is online: an open session on an online server.
    session(pool, account, steve, lobby, ago(now, 10), None).await?;

    // Substring, case-insensitive, newest-seen first.
    let body = dash.ok("/api/players?search=sTeVe").await?;
    assert_eq!(names(&body), ["Steve", "steven_x", "XSTEVEX", "StevenAx"]);
    assert_eq!(
        items(&body)[0],
        json!({"uuid": steve, "username": "Steve", "matched_past_name": null,
               "first_seen": iso(ago(now, 9000)), "last_seen": iso(ago(now, 10)),
               "is_online": true})
    );
    // `_` is a literal, not a LIKE wildcard.
    assert_eq!(
        names(&dash.ok("/api/players?search=n_x").await?),
        ["steven_x"]
    );
    // Under three characters: the start of the name only (XSTEVEX does not start with "st").
    assert_eq!(
        names(&dash.ok("/api/players?search=ST").await?),
        ["Steve", "steven_x", "StevenAx"]
    );
    assert_eq!(
        names(&dash.ok(&format!("/api/players?search={alex}")).await?),
        ["Alex"]
    );
    // A past name finds the player under the current name, saying which name matched.
    sqlx::query(
        "WITH n AS (INSERT INTO player_names (account_id, player_uuid, name, first_seen, \
                last_seen) VALUES ($1, $2, 'Stevie_Old', $3, $3) RETURNING 1) \
         UPDATE players SET names = ARRAY['Alex', 'Stevie_Old'] \
         WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(alex)
    .bind(ago(now, 8000))
    .execute(pool)
    .await?;
    let body = dash.ok("/api/players?search=stevie_").await?;
    assert_eq!(names(&body), ["Alex"]);
    assert_eq!(items(&body)[0]["matched_past_name"], "Stevie_Old");
    assert_eq!(
        names(&dash.ok("/api/players?search=sT").await?),
        ["Steve", "steven_x", "StevenAx", "Alex"]
    );
    assert_eq!(
        names(&dash.ok("/api/players?search=steve&online=true").await?),
        ["Steve"]
    );
    assert_eq!(
        names(&dash.ok("/api/players?search=steve&online=false").await?),
        ["steven_x", "XSTEVEX", "StevenAx"]
    );
    // Recently seen: last seen within the hour.
    let recent = format!(
        "/api/players?from={}",
        iso(ago(now, 3600)).replace('+', "%2B")
    );
    assert_eq!(names(&dash.ok(&recent).await?).len(), 4);
    // Keyset paging walks the same order, one per page.
    let pages = all_pages(&dash, "/api/players?search=steve&limit=1").await?;
    let paged: Vec<String> = pages
        .iter()
        .flatten()
        .map(|p| text(&p["username"]))
        .collect();
    assert_eq!(paged, ["Steve", "steven_x", "XSTEVEX", "StevenAx"]);
    assert_eq!(pages.len(), 4);

    // Another account's Steve never appears here, and ours never appears there.
    let (other, key) = dash.app.account_with_dashboard_key().await?;
    let other: Uuid = other.parse()?;
    player(pool, other, "SteveOther", ago(now, 9000), now).await?;
    assert_eq!(
        names(&dash.ok("/api/players?search=steve").await?),
        ["Steve", "steven_x", "XSTEVEX", "StevenAx"]
    );
    let theirs = dash
        .app
        .get_with("/api/players?search=steve", Some(&text(&key["key"])))
        .await?;
    assert_eq!(theirs.status(), StatusCode::OK);
    let theirs: Value = theirs.json().await?;
    assert_eq!(names(&theirs), ["SteveOther"]);
    let by_uuid = dash
        .app
        .get_with(
            &format!("/api/players?search={steve}"),
            Some(&text(&key["key"])),
        )
        .await?;
    assert_eq!(by_uuid.json::<Value>().await?["items"], json!([]));
    Ok(())
}

#[tokio::test]
async fn bad_search_parameters_are_422() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    for (query, field) in [
        ("search=", "search"),
        ("search=a", "search"),
        ("online=maybe", "online"),
        ("from=yesterday", "from"),
        ("limit=0", "limit"),
        ("search=a%00b", "search"),
    ] {
        let body = problem(
            dash.app
                .get_with(&format!("/api/players?{query}"), Some(&dash.key))
                .await?,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(error_fields(&body), [field], "{query}");
    }
    Ok(())
}

#[tokio::test]
async fn alts_share_an_ip_hash_within_the_account_only() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let main = player(pool, account, "Main", ago(now, 9000), now).await?;
    let banned = player(pool, account, "BannedAlt", ago(now, 9000), now).await?;
    let muted = player(pool, account, "MutedAlt", ago(now, 9000), now).await?;
    let stranger = player(pool, account, "Stranger", ago(now, 9000), now).await?;
    join_from(pool, account, (main, lobby), "hash-home", ago(now, 5000)).await?;
    join_from(pool, account, (main, lobby), "hash-school", ago(now, 4000)).await?;
    join_from(pool, account, (banned, lobby), "hash-home", ago(now, 3000)).await?;
    join_from(pool, account, (banned, lobby), "hash-home", ago(now, 2000)).await?;
    join_from(
        pool,
        account,
        (banned, lobby),
        "hash-elsewhere",
        ago(now, 1500),
    )
    .await?;
    join_from(pool, account, (muted, lobby), "hash-school", ago(now, 1000)).await?;
    join_from(
        pool,
        account,
        (stranger, lobby),
        "hash-other",
        ago(now, 900),
    )
    .await?;
    let sanction = |player, kind| Punishment {
        player,
        kind,
        staff: None,
        server: None,
        issued_at: ago(now, 100),
        expires_at: None,
    };
    punishment(pool, account, sanction(banned, "ban")).await?;
    punishment(pool, account, sanction(muted, "mute")).await?;
    // The stranger is banned too, but shares no IP hash, so is never listed.
    punishment(pool, account, sanction(stranger, "ban")).await?;

    // Another account on the same service has a player behind the same hash.
    let (other, key) = dash.app.account_with_dashboard_key().await?;
    let other: Uuid = other.parse()?;
    let other_lobby = server(pool, other, Some("Lobby"), true, now).await?;
    let outsider = player(pool, other, "Outsider", ago(now, 9000), now).await?;
    join_from(
        pool,
        other,
        (outsider, other_lobby),
        "hash-home",
        ago(now, 500),
    )
    .await?;

    let body = dash.ok(&format!("/api/players/{main}/alts")).await?;
    assert_eq!(
        body,
        json!({"items": [
            {"uuid": muted, "username": "MutedAlt", "shared_joins": 1,
             "first_shared_join": iso(ago(now, 1000)), "last_shared_join": iso(ago(now, 1000)),
             "is_banned": false, "is_muted": true},
            {"uuid": banned, "username": "BannedAlt", "shared_joins": 2,
             "first_shared_join": iso(ago(now, 3000)), "last_shared_join": iso(ago(now, 2000)),
             "is_banned": true, "is_muted": false},
        ]})
    );
    assert!(
        !body.to_string().contains("hash-"),
        "the IP hash is never returned"
    );
    // The stranger shares nothing with the main player.
    let body = dash.ok(&format!("/api/players/{stranger}/alts")).await?;
    assert_eq!(body, json!({"items": []}));

    // The other account sees no link from its player to ours, and not our player at all.
    let theirs = |path: String| {
        let (dash, key) = (&dash, text(&key["key"]));
        async move { anyhow::Ok(dash.app.get_with(&path, Some(&key)).await?) }
    };
    let response = theirs(format!("/api/players/{outsider}/alts")).await?;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.json::<Value>().await?, json!({"items": []}));
    let response = theirs(format!("/api/players/{main}/alts")).await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}

#[tokio::test]
async fn a_common_fragment_is_answered_from_the_newest_seen_players_names() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    // 3,000 older players whose names hold "common": the planner then expects many matches,
    // so the search walks the newest-seen players and matches the names in their rows.
    sqlx::query(
        "WITH p AS (INSERT INTO players (account_id, uuid, username, username_at, first_seen, \
                last_seen, names) \
              SELECT $1, gen_random_uuid(), 'Common' || i, $2, $2, $2 - i * interval '1 s', \
                     ARRAY['Common' || i] \
              FROM generate_series(1, 3000) AS i RETURNING uuid, username, last_seen) \
         INSERT INTO player_names (account_id, player_uuid, name, first_seen, last_seen) \
         SELECT $1, uuid, username, last_seen, last_seen FROM p",
    )
    .bind(account)
    .bind(ago(now, 10_000))
    .execute(pool)
    .await?;
    let renamed = player(pool, account, "Zed", ago(now, 9000), ago(now, 1)).await?;
    sqlx::query(
        "WITH n AS (INSERT INTO player_names (account_id, player_uuid, name, first_seen, \
                last_seen) VALUES ($1, $2, 'CommonPast', $3, $3) RETURNING 1) \
         UPDATE players SET names = ARRAY['CommonPast', 'Zed'] \
         WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(renamed)
    .bind(ago(now, 8000))
    .execute(pool)
    .await?;
    player(pool, account, "commonNow", ago(now, 9000), ago(now, 2)).await?;
    // Newest of all: "co" inside the name, not at its start.
    player(pool, account, "xCOx", ago(now, 9000), now).await?;
    sqlx::query("ANALYZE player_names").execute(pool).await?;
    let plan: Value = sqlx::query_scalar(
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM player_names n \
         WHERE n.account_id = $1 AND lower(n.name) LIKE '%common%'",
    )
    .bind(account)
    .fetch_one(pool)
    .await?;
    let estimate = plan[0]["Plan"]["Plan Rows"].as_f64().unwrap_or_default();
    assert!(
        estimate >= query_api::queries::player_search::COMMON_ESTIMATE,
        "the test must take the walk: the planner expects {estimate} names"
    );

    for search in ["COMMON", "co"] {
        let body = dash
            .ok(&format!("/api/players?search={search}&limit=2"))
            .await?;
        assert_eq!(names(&body), ["Zed", "commonNow"], "{search}");
        assert_eq!(items(&body)[0]["matched_past_name"], "CommonPast");
        assert_eq!(items(&body)[1]["matched_past_name"], Value::Null);
        assert!(body["next_cursor"].is_string(), "{body}");
    }
    // The substring is found anywhere in the name; a 2-character prefix only at its start.
    assert_eq!(
        names(&dash.ok("/api/players?search=cox&limit=1").await?),
        ["xCOx"]
    );
    // Paging on from the walk: the older players follow, newest first.
    let body = dash.ok("/api/players?search=common&limit=2").await?;
    let cursor = text(&body["next_cursor"]);
    let next = dash
        .ok(&format!(
            "/api/players?search=common&limit=2&cursor={cursor}"
        ))
        .await?;
    assert_eq!(names(&next), ["Common1", "Common2"]);
    Ok(())
}
