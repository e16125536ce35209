//! The notifier's delivery workers against a real database and a real HTTP receiver: signed
//! requests, retries with the same `webhook-id`, timeouts, the SSRF policy, leases outliving a
//! killed worker, giving up, and disabling a destination that keeps failing.

mod fixture;
mod receiver;

use crate::harness::eventually;
use fixture::{Fixture, assert_signed, fast_config, policy};
use receiver::Answer;
use std::time::Duration;

#[tokio::test]
async fn a_delivery_arrives_signed_with_the_current_and_previous_secret() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    let (destination, secret) = fx.webhook(&fx.receiver.url("/hook")).await?;
    let previous = fx.previous_secret(destination, 3600).await?;
    // The workers sleep on LISTEN only (no poll within the test's time), so the delivery below
    // can arrive only because its NOTIFY woke them.
    let mut config = fast_config()?;
    config.poll_interval = Duration::from_secs(3600);
    let workers = fx.start(config, policy(true));
    eventually("the workers to LISTEN", || async {
        let listening: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
              WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
        )
        .fetch_one(fx.pool())
        .await?;
        Ok((listening > 0).then_some(()))
    })
    .await?;

    let delivery = fx.delivery(destination).await?;
    assert_eq!(fx.until_status(delivery, "delivered").await?, 1);
    workers.stop().await?;

    let received = fx.receiver.received("/hook");
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(
        request.header("webhook-id"),
        format!("msg_{}", delivery.simple())
    );
    assert_eq!(request.header("content-type"), "application/json");
    assert_eq!(request.header("user-agent"), "Warden-Webhooks/1");
    let timestamp: i64 = request.header("webhook-timestamp").parse()?;
    assert!((timestamp - chrono::Utc::now().timestamp()).abs() < 60);
    assert_signed(request, &[&secret, &previous])?;
    let body: serde_json::Value = serde_json::from_slice(&request.body)?;
    assert_eq!(body["type"], "test");
    assert_eq!(body["data"]["destination_id"], destination.to_string());

    let log = fx.attempts(delivery).await?;
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].attempt, log[0].status_code, log[0].error.as_deref()),
        (1, Some(200), None)
    );
    let (failing, succeeded): (Option<chrono::DateTime<chrono::Utc>>, bool) = sqlx::query_as(
        "SELECT failing_since, last_success_at IS NOT NULL FROM alert_destinations WHERE id = $1",
    )
    .bind(destination)
    .fetch_one(fx.pool())
    .await?;
    assert_eq!((failing, succeeded), (None, true));
    Ok(())
}

#[tokio::test]
async fn an_expired_previous_secret_no_longer_signs() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    let (destination, secret) = fx.webhook(&fx.receiver.url("/hook")).await?;
    fx.previous_secret(destination, -60).await?;
    let workers = fx.start(fast_config()?, policy(true));
    let delivery = fx.delivery(destination).await?;
    fx.until_status(delivery, "delivered").await?;
    workers.stop().await?;
    assert_signed(&fx.receiver.received("/hook")[0], &[&secret])
}

#[tokio::test]
async fn errors_are_retried_with_the_same_webhook_id_until_success() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    fx.receiver.script(
        "/flaky",
        vec![
            Answer::Status(503),
            Answer::Status(500),
            Answer::Status(503),
        ],
        Answer::Ok,
    );
    let (destination, secret) = fx.webhook(&fx.receiver.url("/flaky")).await?;
    let workers = fx.start(fast_config()?, policy(true));
    let delivery = fx.delivery(destination).await?;
    assert_eq!(fx.until_status(delivery, "delivered").await?, 4);
    workers.stop().await?;

    let received = fx.receiver.received("/flaky");
    assert_eq!(received.len(), 4);
    for request in &received {
        assert_eq!(
            request.header("webhook-id"),
            format!("msg_{}", delivery.simple())
        );
        assert_signed(request, &[&secret])?;
    }
    // Backoff: each retry waited at least 80 % of 100 ms * 2^(n-1).
    for (n, pair) in received.windows(2).enumerate() {
        let waited = (pair[1].at - pair[0].at).num_milliseconds();
        let floor = (100.0 * 2f64.powi(n as i32) * 0.8).min(320.0) as i64;
        assert!(
            waited >= floor,
            "retry {n} after {waited} ms, floor {floor} ms"
        );
    }
    let codes: Vec<Option<i32>> = fx
        .attempts(delivery)
        .await?
        .iter()
        .map(|a| a.status_code)
        .collect();
    assert_eq!(codes, [Some(503), Some(500), Some(503), Some(200)]);
    let failing: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT failing_since FROM alert_destinations WHERE id = $1")
            .bind(destination)
            .fetch_one(fx.pool())
            .await?;
    assert_eq!(failing, None, "a success ends the failing run");
    Ok(())
}

#[tokio::test]
async fn retry_after_of_a_429_is_respected() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    fx.receiver
        .script("/limited", vec![Answer::RateLimited(2)], Answer::Ok);
    let (destination, _) = fx.webhook(&fx.receiver.url("/limited")).await?;
    let workers = fx.start(fast_config()?, policy(true));
    let delivery = fx.delivery(destination).await?;
    fx.until_status(delivery, "delivered").await?;
    workers.stop().await?;
    let received = fx.receiver.received("/limited");
    assert_eq!(received.len(), 2);
    let waited = (received[1].at - received[0].at).num_milliseconds();
    // The backoff alone would have been ~100 ms.
    assert!(
        waited >= 1900,
        "retried after {waited} ms despite Retry-After: 2"
    );
    Ok(())
}

#[tokio::test]
async fn a_hanging_receiver_is_cut_by_the_timeout_and_retried() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    fx.receiver.script("/slow", vec![Answer::Hang], Answer::Ok);
    let (destination, _) = fx.webhook(&fx.receiver.url("/slow")).await?;
    let workers = fx.start(fast_config()?, policy(true));
    let delivery = fx.delivery(destination).await?;
    assert_eq!(fx.until_status(delivery, "delivered").await?, 2);
    workers.stop().await?;

    let log = fx.attempts(delivery).await?;
    let (code, duration_ms, error) = (log[0].status_code, log[0].duration_ms, &log[0].error);
    assert_eq!(code, None);
    let error = error.as_deref().unwrap_or_default();
    assert!(error.contains("timed out"), "{error}");
    // NOTIFIER_TIMEOUT_MS is 1000: cut near it, not after the receiver's hour.
    assert!((900..5000).contains(&duration_ms), "{duration_ms} ms");
    assert_eq!(log[1].status_code, Some(200));
    Ok(())
}

#[tokio::test]
async fn addresses_the_policy_refuses_are_never_contacted() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    let port = fx.receiver.port();
    let mut deliveries = Vec::new();
    for url in [
        format!("http://127.0.0.1:{port}/a"),
        format!("http://localhost:{port}/b"),
        format!("http://[::ffff:127.0.0.1]:{port}/c"),
        format!("http://2130706433:{port}/d"),
    ] {
        let (destination, _) = fx.webhook(&url).await?;
        deliveries.push(fx.delivery(destination).await?);
    }
    // The default policy: loopback is not allowed.
    let workers = fx.start(fast_config()?, policy(false));
    for delivery in &deliveries {
        fx.until_recorded(*delivery, 2).await?;
    }
    workers.stop().await?;
    assert_eq!(fx.receiver.total(), 0, "a refused address was contacted");
    for delivery in &deliveries {
        let (status, _) = fx.standing(*delivery).await?;
        assert_eq!(status, "pending", "refused deliveries keep retrying");
        let log = fx.attempts(*delivery).await?;
        let error = log[0].error.as_deref().unwrap_or_default();
        assert!(
            error.contains("refused") && error.contains("loopback"),
            "{error}"
        );
        assert_eq!(log[0].status_code, None);
    }
    Ok(())
}

#[tokio::test]
async fn a_worker_killed_mid_attempt_leaves_the_delivery_to_its_lease() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    fx.receiver.script("/kill", vec![Answer::Hang], Answer::Ok);
    let (destination, secret) = fx.webhook(&fx.receiver.url("/kill")).await?;
    let mut config = fast_config()?;
    // Long enough that the attempt is still in flight when the worker dies.
    config.timeout = Duration::from_secs(30);
    config.lease = Duration::from_secs(2);
    let workers = fx.start(config.clone(), policy(true));
    let delivery = fx.delivery(destination).await?;
    eventually("the first attempt to reach the receiver", || async {
        Ok((!fx.receiver.received("/kill").is_empty()).then_some(()))
    })
    .await?;
    workers.kill().await;

    let leased_until: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT locked_until FROM alert_deliveries WHERE id = $1")
            .bind(delivery)
            .fetch_one(fx.pool())
            .await?;
    assert_eq!(fx.standing(delivery).await?, ("pending".to_owned(), 1));
    assert!(
        fx.attempts(delivery).await?.is_empty(),
        "a killed attempt recorded"
    );

    let workers = fx.start(config, policy(true));
    assert_eq!(fx.until_status(delivery, "delivered").await?, 2);
    workers.stop().await?;
    let received = fx.receiver.received("/kill");
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].header("webhook-id"),
        received[1].header("webhook-id")
    );
    assert_signed(&received[1], &[&secret])?;
    // Not claimed again before the lease ran out (same machine, same clock).
    let early = (leased_until - received[1].at).num_milliseconds();
    assert!(early <= 50, "retried {early} ms before the lease ended");
    let log = fx.attempts(delivery).await?;
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].attempt, log[0].status_code), (2, Some(200)));
    Ok(())
}

#[tokio::test]
async fn a_delivery_fails_once_its_give_up_time_has_passed() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    fx.receiver.script("/down", vec![], Answer::Status(503));
    let (destination, _) = fx.webhook(&fx.receiver.url("/down")).await?;
    let delivery = fx.delivery(destination).await?;
    let workers = fx.start(fast_config()?, policy(true));
    // The 1.5 s start at the first attempt, not before the workers are up: on a loaded
    // machine their start alone can take most of it.
    fx.until_recorded(delivery, 1).await?;
    sqlx::query(
        "UPDATE alert_deliveries SET give_up_at = now() + interval '1500 milliseconds'
          WHERE id = $1",
    )
    .bind(delivery)
    .execute(fx.pool())
    .await?;
    let attempts = fx.until_status(delivery, "failed").await?;
    workers.stop().await?;

    assert!(attempts >= 3, "only {attempts} attempts in 1.5 s");
    assert_eq!(fx.receiver.received("/down").len(), attempts as usize);
    // The last try happened at (not before) give_up_at, and nothing is scheduled past it.
    let (last_try_after_give_up, next_within): (bool, bool) = sqlx::query_as(
        "SELECT last_attempt_at >= give_up_at - interval '50 milliseconds',
                next_attempt_at <= give_up_at
           FROM alert_deliveries WHERE id = $1",
    )
    .bind(delivery)
    .fetch_one(fx.pool())
    .await?;
    assert!(last_try_after_give_up && next_within);
    Ok(())
}

#[tokio::test]
async fn a_destination_failing_for_the_window_is_disabled_and_its_rows_wait() -> anyhow::Result<()>
{
    let fx = Fixture::new().await?;
    fx.receiver.script("/broken", vec![], Answer::Status(503));
    fx.receiver.script("/gone", vec![], Answer::Status(410));
    let (broken, _) = fx.webhook(&fx.receiver.url("/broken")).await?;
    let (gone, _) = fx.webhook(&fx.receiver.url("/gone")).await?;
    let (healthy, _) = fx.webhook(&fx.receiver.url("/ok")).await?;
    // Failing since 73 hours: the next failure crosses NOTIFIER_DISABLE_AFTER_HOURS (72).
    sqlx::query(
        "UPDATE alert_destinations SET failing_since = now() - interval '73 hours' WHERE id = $1",
    )
    .bind(broken)
    .execute(fx.pool())
    .await?;
    let broken_delivery = fx.delivery(broken).await?;
    let gone_delivery = fx.delivery(gone).await?;
    let workers = fx.start(fast_config()?, policy(true));

    let (reason, stamped) = fx.until_disabled(broken).await?;
    assert!(reason.contains("72 hours") && stamped, "{reason}");
    let (reason, stamped) = fx.until_disabled(gone).await?;
    assert!(reason.contains("410") && stamped, "{reason}");

    // Their rows stay pending, paused: a new one is not even tried while another destination's
    // delivery, inserted after it, goes through (so a claim has passed it by).
    let paused = fx.delivery(broken).await?;
    let probe = fx.delivery(healthy).await?;
    fx.until_status(probe, "delivered").await?;
    let (_, tried_after_disable) = fx.standing(broken_delivery).await?;
    workers.stop().await?;
    assert_eq!(fx.standing(paused).await?, ("pending".to_owned(), 0));
    assert_eq!(fx.standing(broken_delivery).await?.0, "pending");
    assert_eq!(
        tried_after_disable, 1,
        "a disabled destination was tried again"
    );
    assert_eq!(fx.standing(gone_delivery).await?, ("pending".to_owned(), 1));
    Ok(())
}

#[tokio::test]
async fn two_notifiers_share_the_outbox_without_sending_anything_twice() -> anyhow::Result<()> {
    let fx = Fixture::new().await?;
    let (destination, _) = fx.webhook(&fx.receiver.url("/shared")).await?;
    let mut deliveries = Vec::new();
    for _ in 0..40 {
        deliveries.push(fx.delivery(destination).await?);
    }
    let first = fx.start(fast_config()?, policy(true));
    let second = fx.start(fast_config()?, policy(true));
    for delivery in &deliveries {
        assert_eq!(fx.until_status(*delivery, "delivered").await?, 1);
    }
    first.stop().await?;
    second.stop().await?;
    let mut ids: Vec<String> = fx
        .receiver
        .received("/shared")
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    assert_eq!(ids.len(), deliveries.len(), "some delivery was sent twice");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), deliveries.len());
    Ok(())
}
