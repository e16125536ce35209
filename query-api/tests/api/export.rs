//! A player export: every section holds the player's rows, as the read models store
//! them, and nothing of another player or of the same player in another account. The access
//! rules, the page and the streaming of a large export are in `export_access`.

use crate::read_models::{
    Dashboard, Punishment, ago, chat, flag, join_from, now, player, punishment, rank, server,
};
use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeSet;
use uuid::Uuid;

/// `GET` the admin export of `player` in `account`: status, headers' content type and
/// disposition, and the parsed body.
pub(crate) async fn export(
    dash: &Dashboard,
    account: Uuid,
    player: Uuid,
) -> anyhow::Result<(StatusCode, String, String, Value)> {
    let path = format!("/api/admin/accounts/{account}/players/{player}/export");
    let response = dash.app.admin(reqwest::Method::GET, &path).send().await?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (status, content_type) = (response.status(), header("content-type"));
    let disposition = header("content-disposition");
    let body = serde_json::from_slice(&response.bytes().await?)?;
    Ok((status, content_type, disposition, body))
}

/// The `key` of every row of `section`, as text.
pub(crate) fn column(doc: &Value, section: &str, key: &str) -> Vec<String> {
    doc[section]
        .as_array()
        .unwrap_or_else(|| panic!("{section} is not an array: {doc}"))
        .iter()
        .map(|row| match &row[key] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Everything a player can have, for `player` in `account`, with `tag` in every text so a
/// row of another player or account would show.
pub(crate) async fn everything(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    other: Uuid,
    tag: &str,
) -> anyhow::Result<Vec<Uuid>> {
    let t = now();
    let lobby = server(pool, account, Some("Lobby"), true, t).await?;
    join_from(
        pool,
        account,
        (player, lobby),
        &format!("ip-{tag}"),
        ago(t, 900),
    )
    .await?;
    let line = chat(
        pool,
        account,
        player,
        lobby,
        &format!("hello {tag}"),
        ago(t, 800),
    )
    .await?;
    let command = chat(
        pool,
        account,
        player,
        lobby,
        &format!("/msg {tag}"),
        ago(t, 700),
    )
    .await?;
    let received = punishment(pool, account, sanction(player, Some(other), ago(t, 600))).await?;
    let issued = punishment(pool, account, sanction(other, Some(player), ago(t, 500))).await?;
    let flagged = flag(pool, account, player, lobby, ago(t, 400)).await?;
    let (note, revoke, event, ranked) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    sqlx::query(
        "WITH n AS (INSERT INTO notes (account_id, id, player_uuid, text, evidence, \
             author_member_id, author_name, written_at, seq) \
           VALUES ($1, $3, $2, 'note ' || $7, '[\"https://e.test/1\"]', $1, 'Mod', $8, 1)), \
         r AS (INSERT INTO punishment_revokes (account_id, id, seq, punishment_id, type, \
             revoked_at, revoked_by, revoked_by_name, revoke_reason) \
           VALUES ($1, $4, 1, $9, 'ban', $8, $2, 'staff ' || $7, 'appeal')), \
         e AS (INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, \
             properties, occurred_at, received_at) \
           VALUES ($1, $5, 10, 'quest_done', false, $2, json_build_object('tag', $7), $8, $8), \
                  ($1, $6, 11, 'rank_change', true, $2, json_build_object('group', 'vip'), $8, $8)), \
         d AS (INSERT INTO player_active_days (account_id, player_uuid, day) \
           VALUES ($1, $2, ($8 AT TIME ZONE 'UTC')::date)) \
         INSERT INTO event_player_days (account_id, name, day, player_uuid) \
           VALUES ($1, 'quest_done', ($8 AT TIME ZONE 'UTC')::date, $2)",
    )
    .bind(account)
    .bind(player)
    .bind(note)
    .bind(revoke)
    .bind(event)
    .bind(ranked)
    .bind(tag)
    .bind(ago(t, 300))
    .bind(issued)
    .execute(pool)
    .await?;
    sqlx::query(
        "UPDATE players SET linked_platform = 'discord', linked_external_id = 'id-' || $3, \
           linked_external_name = 'name-' || $3, linked_at = now() \
         WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(player)
    .bind(tag)
    .execute(pool)
    .await?;
    Ok(vec![
        line, command, received, issued, flagged, note, revoke, event, ranked,
    ])
}

fn sanction(player: Uuid, staff: Option<Uuid>, issued_at: DateTime<Utc>) -> Punishment {
    Punishment {
        player,
        kind: "ban",
        staff: staff.map(|s| (s, Some("Staffer"))),
        server: None,
        issued_at,
        expires_at: None,
    }
}

#[tokio::test]
async fn an_export_holds_every_section_of_the_player_and_nothing_else() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let pool = dash.pool();
    let (account, t) = (dash.account, now());
    let ada = player(pool, account, "Ada", ago(t, 3600), t).await?;
    let bob = player(pool, account, "Bob", ago(t, 3600), t).await?;
    rank(pool, account, ada, ("vip", Some("default"), None)).await?;
    sqlx::query(
        "INSERT INTO player_names (account_id, player_uuid, name, first_seen, last_seen) \
         VALUES ($1, $2, 'AdaOld', $3, $3)",
    )
    .bind(account)
    .bind(ada)
    .bind(ago(t, 7200))
    .execute(pool)
    .await?;
    let ids = everything(pool, account, ada, bob, "alpha").await?;
    let bobs_ids = everything(pool, account, bob, Uuid::new_v4(), "bravo").await?;
    // The same player in another account: none of it is this account's.
    let elsewhere: Uuid = dash.app.create_account("Elsewhere").await?.parse()?;
    sqlx::query(
        "INSERT INTO players (account_id, uuid, username, first_seen, last_seen, names) \
         VALUES ($1, $2, 'AdaElsewhere', now(), now(), ARRAY['AdaElsewhere'])",
    )
    .bind(elsewhere)
    .bind(ada)
    .execute(pool)
    .await?;
    everything(pool, elsewhere, ada, bob, "elsewhere").await?;

    let (status, content_type, disposition, doc) = export(&dash, account, ada).await?;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(content_type, "application/json");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"player-{ada}.json\"")
    );
    assert_eq!(doc["account_id"], account.to_string());
    assert_eq!(doc["player_uuid"], ada.to_string());
    assert!(
        doc["exported_at"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z')),
        "{doc}"
    );
    let [
        line,
        command,
        received,
        issued,
        flagged,
        note,
        revoke,
        event,
        ranked,
    ] = ids[..]
    else {
        panic!("{ids:?}");
    };
    let s = |ids: &[Uuid]| ids.iter().map(Uuid::to_string).collect::<Vec<_>>();
    assert_eq!(column(&doc, "player", "uuid"), s(&[ada]));
    assert_eq!(doc["player"][0]["username"], "Ada");
    assert_eq!(doc["player"][0]["effective_rank"], "vip");
    assert_eq!(doc["player"][0]["previous_rank"], "default");
    assert_eq!(
        doc["player"][0]["total_playtime_seconds"], 0,
        "a session of no length"
    );
    assert_eq!(column(&doc, "names", "name"), ["AdaOld", "Ada"]);
    assert_eq!(column(&doc, "sessions", "ip_hash"), ["ip-alpha"]);
    assert_eq!(column(&doc, "chat", "id"), s(&[line, command]));
    assert_eq!(
        column(&doc, "chat", "message"),
        ["hello alpha", "/msg alpha"]
    );
    assert_eq!(column(&doc, "chat", "entry_type"), ["chat", "command"]);
    assert_eq!(column(&doc, "punishments_received", "id"), s(&[received]));
    assert_eq!(column(&doc, "punishments_received", "type"), ["ban"]);
    assert_eq!(column(&doc, "punishments_issued", "id"), s(&[issued]));
    assert_eq!(column(&doc, "revokes_issued", "id"), s(&[revoke]));
    assert_eq!(column(&doc, "anticheat_flags", "id"), s(&[flagged]));
    assert_eq!(column(&doc, "notes", "id"), s(&[note]));
    assert_eq!(column(&doc, "notes", "text"), ["note alpha"]);
    assert_eq!(
        doc["notes"][0]["evidence"],
        serde_json::json!(["https://e.test/1"])
    );
    assert_eq!(column(&doc, "account_links", "external_id"), ["id-alpha"]);
    assert_eq!(column(&doc, "rank_changes", "id"), s(&[ranked]));
    assert_eq!(column(&doc, "events", "id"), s(&[event, ranked]));
    assert_eq!(
        doc["events"][0]["properties"],
        serde_json::json!({"tag": "alpha"})
    );
    assert_eq!(column(&doc, "active_days", "day").len(), 1);
    assert_eq!(column(&doc, "event_days", "name"), ["quest_done"]);
    assert_eq!(doc["erasure"], serde_json::json!([]));
    // Nothing of Bob's or of the other account's copy of Ada, anywhere.
    let whole = doc.to_string();
    for foreign in ["bravo", "Bob", "elsewhere", "Elsewhere"] {
        assert!(!whole.contains(foreign), "{foreign} in {whole}");
    }

    // Bob's export names Ada only as the staff who banned him.
    let (_, _, _, bobs) = export(&dash, account, bob).await?;
    let got: BTreeSet<String> = column(&bobs, "punishments_received", "id")
        .into_iter()
        .collect();
    assert_eq!(got, s(&[issued, bobs_ids[2]]).into_iter().collect());
    let got: BTreeSet<String> = column(&bobs, "punishments_issued", "id")
        .into_iter()
        .collect();
    assert_eq!(got, s(&[received, bobs_ids[3]]).into_iter().collect());
    assert!(!bobs.to_string().contains("alpha"), "{bobs}");
    assert_eq!(
        column(&bobs, "chat", "message"),
        ["hello bravo", "/msg bravo"]
    );
    Ok(())
}

#[tokio::test]
async fn the_documented_schema_names_exactly_the_streamed_sections() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", t, t).await?;
    let (status, _, _, doc) = export(&dash, dash.account, ada).await?;
    assert_eq!(status, StatusCode::OK);
    let openapi: Value = dash
        .app
        .client
        .get(dash.app.url("/api/openapi.json"))
        .send()
        .await?
        .json()
        .await?;
    let path = "/api/admin/accounts/{account_id}/players/{uuid}/export";
    let operation = &openapi["paths"][path]["get"];
    assert!(operation.is_object(), "{path} is not documented");
    let schema = &openapi["components"]["schemas"]["PlayerExport"]["properties"];
    let documented: BTreeSet<&String> = schema
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    let streamed: BTreeSet<&String> = doc
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(documented, streamed);
    assert_eq!(streamed.len(), 18, "{streamed:?}");
    Ok(())
}

#[tokio::test]
async fn an_erased_player_exports_what_erasure_left() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let pool = dash.pool();
    let (account, t) = (dash.account, now());
    // As the erasure projection leaves a player: the row without names, the erasure on record.
    let ada = player(pool, account, "Ada", ago(t, 3600), t).await?;
    let gone = Uuid::new_v4();
    sqlx::query(
        "WITH n AS (DELETE FROM player_names WHERE account_id = $1 AND player_uuid = $2), \
         p AS (UPDATE players SET username = NULL, names = '{}' \
               WHERE account_id = $1 AND uuid = $2) \
         INSERT INTO erased_players (account_id, player_uuid, erased_at, erased_by, seq) \
         VALUES ($1, $2, $4, 'admin', 1), ($1, $3, $4, 'admin', 2)",
    )
    .bind(account)
    .bind(ada)
    .bind(gone)
    .bind(t)
    .execute(pool)
    .await?;

    let (status, _, _, doc) = export(&dash, account, ada).await?;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(doc["player"][0]["username"], Value::Null);
    assert_eq!(doc["player"][0]["names"], serde_json::json!([]));
    assert_eq!(column(&doc, "names", "name"), Vec::<String>::new());
    assert_eq!(column(&doc, "erasure", "erased_by"), ["admin"]);
    assert!(!doc.to_string().contains("Ada"), "{doc}");
    // Erased with no row left: still known, and the export says so.
    let (status, _, _, doc) = export(&dash, account, gone).await?;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(doc["player"], serde_json::json!([]));
    assert_eq!(column(&doc, "erasure", "erased_by"), ["admin"]);
    Ok(())
}
