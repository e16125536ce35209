//! The delivery log: test events, "send again", filter and paging, the workers woken.

use super::*;

#[tokio::test]
async fn test_events_and_resends_queue_deliveries_and_wake_the_workers() -> anyhow::Result<()> {
    let app = app().await?;
    let account = app.create_account("Network").await?;
    let dest = text(
        &app.destination(&account, "webhook", "https://hooks.example.com/a")
            .await?["id"],
    );
    let base = format!("/api/admin/accounts/{account}/destinations/{dest}");
    let mut listener = sqlx::postgres::PgListener::connect_with(&app.db.pool).await?;
    listener.listen("alert_deliveries").await?;

    let queued = app
        .expect(
            Method::POST,
            &format!("{base}/test"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    let delivery = text(&queued["delivery_id"]);
    tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
    let log = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries"),
            None,
            StatusCode::OK,
        )
        .await?;
    let row = &log["deliveries"][0];
    assert_eq!(row["id"], delivery.as_str());
    assert_eq!(
        row["webhook_id"],
        format!("msg_{}", Uuid::parse_str(&delivery)?.simple())
    );
    assert!(
        row["event_type"] == "test" && row["status"] == "pending" && row["attempts"] == 0,
        "{row}"
    );
    assert!(log["next_cursor"].is_null());
    let detail = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries/{delivery}"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(detail["payload"]["message"], "A test event from Warden");
    assert_eq!(detail["payload"]["destination_id"], dest.as_str());
    assert_eq!(detail["attempt_log"], json!([]));

    // As if the workers had given up after an attempt: "send again" makes it pending again,
    // same id, with 26 more hours of retries.
    sqlx::query(
        "UPDATE alert_deliveries SET status = 'failed', attempts = 1, give_up_at = now() WHERE id = $1; ",
    )
    .bind(Uuid::parse_str(&delivery)?)
    .execute(&app.db.pool)
    .await?;
    sqlx::query("INSERT INTO alert_delivery_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms) VALUES ($1, 1, now(), 503, 12)")
        .bind(Uuid::parse_str(&delivery)?)
        .execute(&app.db.pool)
        .await?;
    let failed = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?status=failed"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(failed["deliveries"].as_array().map(Vec::len), Some(1));
    let detail = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries/{delivery}"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(detail["attempt_log"][0]["status_code"], 503);
    let resent = app
        .expect(
            Method::POST,
            &format!("{base}/deliveries/{delivery}/resend"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    assert_eq!(resent["delivery_id"], delivery.as_str());
    tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
    let (status, hours): (String, f64) = sqlx::query_as(
        "SELECT status, EXTRACT(EPOCH FROM give_up_at - now())::float8 / 3600 FROM alert_deliveries WHERE id = $1",
    )
    .bind(Uuid::parse_str(&delivery)?)
    .fetch_one(&app.db.pool)
    .await?;
    assert!(status == "pending" && hours > 25.9, "{status} {hours}");
    let failed = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?status=failed"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(failed["deliveries"], json!([]));

    // Newest first, page by page, nothing twice.
    for _ in 0..2 {
        app.expect(
            Method::POST,
            &format!("{base}/test"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    }
    let first = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?limit=2"),
            None,
            StatusCode::OK,
        )
        .await?;
    let cursor = text(&first["next_cursor"]);
    let second = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?limit=2&status=pending&cursor={cursor}"),
            None,
            StatusCode::OK,
        )
        .await?;
    let ids: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|page| page["deliveries"].as_array().cloned().unwrap_or_default())
        .map(|d| text(&d["id"]))
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[2], delivery);
    assert!(second["next_cursor"].is_null());
    for query in ["status=lost", "cursor=abc", "limit=0"] {
        let response = app
            .call(Method::GET, &format!("{base}/deliveries?{query}"), None)
            .await?;
        problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
    }
    let response = app
        .call(
            Method::POST,
            &format!("{base}/deliveries/{}/resend", Uuid::now_v7()),
            None,
        )
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}
