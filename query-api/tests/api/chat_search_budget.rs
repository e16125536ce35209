//! A chat keyword search reads its range in windows within `CHAT_SEARCH_BUDGET_MS`: a search
//! the budget stops answers with what it found, says how far back it searched, and its cursor
//! continues from there until the account's oldest line or the range's start.
//!
//! A budget of 0 stops every search after its first window (the day before its position), so
//! where each page stops is known exactly.

use crate::helpers::text;
use crate::read_models::{Dashboard, ago, all_pages, chat, iso, items, now, player, server};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use uuid::Uuid;

const HOUR: i64 = 3600;

fn ids(page: &[Value]) -> Vec<String> {
    page.iter().map(|line| text(&line["id"])).collect()
}

fn searched_back_to(body: &Value) -> Option<DateTime<Utc>> {
    body["searched_back_to"].as_str().map(|at| {
        DateTime::parse_from_rfc3339(at)
            .expect("an RFC 3339 time")
            .with_timezone(&Utc)
    })
}

#[tokio::test]
async fn a_keyword_search_the_budget_stops_says_how_far_it_searched_and_continues()
-> anyhow::Result<()> {
    let dash = Dashboard::start_with(|vars| vars.set("CHAT_SEARCH_BUDGET_MS", "0")).await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let alice = player(pool, account, "Alice", ago(now, 900 * HOUR), now).await?;
    let newest = chat(
        pool,
        account,
        alice,
        lobby,
        "a zebra crossing",
        ago(now, HOUR),
    )
    .await?;
    chat(pool, account, alice, lobby, "a horse", ago(now, 20 * HOUR)).await?;
    let day_old = chat(pool, account, alice, lobby, "ZEBRA!", ago(now, 30 * HOUR)).await?;
    let oldest = chat(pool, account, alice, lobby, "zebras", ago(now, 50 * HOUR)).await?;
    let elsewhere = Uuid::new_v4();
    chat(
        pool,
        elsewhere,
        alice,
        lobby,
        "zebra",
        ago(now, 5000 * HOUR),
    )
    .await?;

    // The first page searched the day before the request, and says so.
    let before = chrono::Utc::now();
    let first = dash.ok("/api/chat?q=zebra").await?;
    assert_eq!(ids(&items(&first)), [newest.to_string()]);
    let back_to = searched_back_to(&first).expect("the budget stopped the search");
    assert!(
        back_to >= before - Duration::days(1) && back_to <= chrono::Utc::now() - Duration::days(1),
        "{back_to} is one day before the request"
    );
    assert!(first["next_cursor"].is_string(), "{first}");

    // Its cursors go on a day at a time, each line once, and end at the account's oldest
    // line (another account's older line does not keep the search going).
    let pages = all_pages(&dash, "/api/chat?q=zebra").await?;
    let found: Vec<Vec<String>> = pages.iter().map(|page| ids(page)).collect();
    assert_eq!(
        found,
        [
            vec![newest.to_string()],
            vec![day_old.to_string()],
            vec![oldest.to_string()]
        ]
    );

    // A range's start ends the search where it is reached, without a cursor.
    let from = iso(ago(now, 40 * HOUR)).replace('+', "%2B");
    let pages = all_pages(&dash, &format!("/api/chat?q=zebra&from={from}")).await?;
    let found: Vec<Vec<String>> = pages.iter().map(|page| ids(page)).collect();
    assert_eq!(found, [vec![newest.to_string()], vec![day_old.to_string()]]);
    let last = dash
        .ok(&format!(
            "/api/chat?q=zebra&from={from}&cursor={}",
            text(&first["next_cursor"])
        ))
        .await?;
    assert!(searched_back_to(&last).is_none(), "{last}");
    assert!(last["next_cursor"].is_null(), "{last}");
    Ok(())
}
