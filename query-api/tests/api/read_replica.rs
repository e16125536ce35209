//! `READ_DATABASE_URL`: dashboard reads go to the replica; admin writes stay on the primary.

use crate::helpers::start;
use crate::read_models::{Dashboard, now, server};
use reqwest::StatusCode;
use test_support::TestDb;

#[tokio::test]
async fn dashboard_reads_go_to_the_read_database() -> anyhow::Result<()> {
    let dashboard = Dashboard::start().await?;
    // A stand-in for a streaming replica: a second database with the same schema, whose
    // contents differ, so the answer shows which one was read.
    let replica = TestDb::create().await?;
    sqlx::migrate!("../projector/migrations")
        .run(&replica.pool)
        .await?;
    server(
        dashboard.pool(),
        dashboard.account,
        Some("On the primary"),
        true,
        now(),
    )
    .await?;
    server(
        &replica.pool,
        dashboard.account,
        Some("On the replica"),
        true,
        now(),
    )
    .await?;

    let mut config = dashboard.app.config.clone();
    config.read_database_url = Some(replica.url.clone().into());
    let (addr, shutdown) = start(config, &dashboard.app.client).await?;
    let response = dashboard
        .app
        .client
        .get(format!("http://{addr}/api/servers"))
        .bearer_auth(&dashboard.key)
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await?;
    assert_eq!(body["items"][0]["name"], "On the replica", "{body}");

    // Admin writes still go to the primary.
    let created = dashboard
        .app
        .client
        .post(format!("http://{addr}/api/admin/accounts"))
        .bearer_auth(&dashboard.app.admin_key)
        .json(&serde_json::json!({"name": "Written to the primary"}))
        .send()
        .await?;
    assert_eq!(created.status(), StatusCode::CREATED);
    let on_primary: i64 =
        sqlx::query_scalar("SELECT count(*) FROM accounts WHERE name = 'Written to the primary'")
            .fetch_one(dashboard.pool())
            .await?;
    assert_eq!(on_primary, 1);
    shutdown.cancel();
    Ok(())
}
