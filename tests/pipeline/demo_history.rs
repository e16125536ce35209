//! The demo fleet's history backfill (`--history-days`) through the whole pipeline: after it,
//! retention has cohorts on several days and trends count events on several days, because
//! both read models use each record's own time; and its marker stops a second backfill.

use chrono::{Duration, Utc};
use demo_fleet::history::{Spec, run_once};
use demo_fleet::world::DEFAULT_WORLD_SEED;
use pipeline_tests::TestStack;
use reqwest::Method;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use warden_sdk::PluginClient;

async fn read(stack: &TestStack, key: &str, path: &str, body: Value) -> Value {
    let (status, answer) = stack.call(Method::POST, path, key, Some(body)).await;
    assert_eq!(status, 200, "POST {path}: {answer}");
    answer
}

#[tokio::test]
async fn the_backfill_gives_retention_cohorts_and_trends_on_past_days() -> anyhow::Result<()> {
    let stack = TestStack::start().await?;
    let account = stack.create_account("Demo Network").await?;
    let plugin = PluginClient::new(&stack.base, &account.plugin_key)?;
    let marker = std::env::temp_dir().join(format!("demo-history-{}.done", account.id));
    let spec = Spec {
        world_seed: DEFAULT_WORLD_SEED,
        servers: 2,
        players: 12,
        days: 7,
    };
    let stop = CancellationToken::new();
    let totals = run_once(&plugin, spec, Some(&marker), &stop)
        .await?
        .expect("no marker yet: the history is sent");
    assert!(totals.clean(), "{}", totals.summary());
    assert!(totals.total() > 500, "{}", totals.summary());
    assert!(
        marker.exists(),
        "the marker is written once the history is stored"
    );
    // A restart with the marker sends nothing.
    assert!(
        run_once(&plugin, spec, Some(&marker), &stop)
            .await?
            .is_none()
    );
    std::fs::remove_file(&marker)?;
    stack.projected().await?;
    let parked: i64 = sqlx::query_scalar("SELECT count(*) FROM parked_messages")
        .fetch_one(&stack.db.pool)
        .await?;
    assert_eq!(parked, 0, "every read model took the history");
    // Each quit was logged after its join, so every past session is closed by its own quit.
    let (sessions, by_quit): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE closed_by = 'quit')
         FROM sessions WHERE account_id = $1::uuid",
    )
    .bind(&account.id)
    .fetch_one(&stack.db.pool)
    .await?;
    assert!(sessions > 50, "{sessions} sessions");
    assert_eq!(by_quit, sessions, "every past session ends with its quit");

    let today = Utc::now().date_naive();
    let (first, last) = (today - Duration::days(7), today - Duration::days(1));
    let retention = read(
        &stack,
        &account.dashboard_key,
        "/api/v1/retention",
        json!({"period": "day", "from": first.to_string(), "to": last.to_string(),
               "days": [1]}),
    )
    .await;
    let cohorts = retention["cohorts"].as_array().expect("cohorts");
    let sized = cohorts
        .iter()
        .filter(|c| c["size"].as_i64() > Some(0))
        .count();
    assert!(sized > 1, "cohorts on {sized} days: {retention}");
    let returned: i64 = cohorts
        .iter()
        .filter_map(|c| c["returned"][0]["players"].as_i64())
        .sum();
    assert!(returned > 0, "nobody came back on day 1: {retention}");

    let midnight = |d: chrono::NaiveDate| format!("{d}T00:00:00Z");
    let trends = read(
        &stack,
        &account.dashboard_key,
        "/api/v1/trends",
        json!({"what": {"event": "quest_started"}, "bucket": "day",
               "from": midnight(first), "to": midnight(today)}),
    )
    .await;
    let values = trends["series"][0]["values"].as_array().expect("values");
    let days = values.iter().filter(|v| v.as_i64() > Some(0)).count();
    assert!(days > 1, "quest_started on {days} days: {trends}");

    // The servers' heartbeats of the last day: the Overview's players chart opens filled.
    let get = |path: &'static str| stack.call(Method::GET, path, &account.dashboard_key, None);
    let (status, overview) = get("/api/overview").await;
    assert_eq!(status, 200, "{overview}");
    let network = overview["network"].as_array().expect("network");
    let filled = network.iter().filter(|p| p["players"].is_number()).count();
    assert!(
        filled >= 285,
        "players in {filled} of {} buckets",
        network.len()
    );
    let busiest = network
        .iter()
        .filter_map(|p| p["players"].as_f64())
        .fold(0.0, f64::max);
    assert!(busiest >= 2.0, "at most {busiest} players: {network:?}");
    // The past's punishments were issued by the staff, who have their groups.
    let (status, staff) = get("/api/staff").await;
    assert_eq!(status, 200, "{staff}");
    let roster = staff["items"].as_array().expect("items");
    assert!(!roster.is_empty(), "no staff: {staff}");
    assert!(
        roster.iter().all(|m| m["rank"].is_string()),
        "staff without a group: {staff}"
    );
    Ok(())
}
