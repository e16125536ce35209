//! Fault tests: kill -9 the broker during a steady ingest, and kill -9 PostgreSQL
//! during a catch-up; a ledger of every 2xx is compared with the read models afterwards.

mod rig;

use rig::{
    Posted, Rig, assert_ledger_stored_once, assert_same_read_models, every_checkpoint_at, load,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use test_support::{NatsServer, PgCluster, TestDb};
use tokio_util::sync::CancellationToken;

/// How long writes may take to come back after the broker does.
const RECOVERY: Duration = Duration::from_secs(10);

fn snapshot(log: &Mutex<Vec<Posted>>) -> Vec<Posted> {
    log.lock().map(|l| l.clone()).unwrap_or_default()
}

/// Waits until the load log holds `n` answers more than it did.
async fn more_answers(log: &Mutex<Vec<Posted>>, n: usize) -> anyhow::Result<()> {
    let start = snapshot(log).len();
    let deadline = Instant::now() + Duration::from_secs(30);
    while snapshot(log).len() < start + n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the load generator got no answers"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[tokio::test]
async fn killing_nats_during_steady_ingest_loses_no_acknowledged_write() -> anyhow::Result<()> {
    let mut nats = NatsServer::start().await?;
    let db = TestDb::create().await?;
    let rig = Arc::new(Rig::start(&nats, &db).await?);
    let stop = CancellationToken::new();
    // About 50 requests a second: under the plugin key's 1,000 a minute for the whole test.
    let (log, tasks) = load(&rig, 3, Duration::from_millis(50), &stop);
    more_answers(&log, 30).await?;

    nats.kill();
    let killed = Instant::now();
    more_answers(&log, 30).await?;
    let restarting = Instant::now();
    nats.restart().await?;
    let restarted = Instant::now();
    let deadline = restarted + RECOVERY;
    while !snapshot(&log)
        .iter()
        .any(|p| p.sent >= restarted && p.status == 202)
    {
        anyhow::ensure!(
            Instant::now() < deadline,
            "no write accepted within {RECOVERY:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let recovered = restarted.elapsed();
    more_answers(&log, 30).await?;
    stop.cancel();
    for task in tasks {
        task.await?;
    }

    let log = snapshot(&log);
    let while_down: Vec<&Posted> = log
        .iter()
        .filter(|p| p.sent >= killed && p.answered <= restarting)
        .collect();
    assert!(!while_down.is_empty());
    assert!(
        while_down.iter().all(|p| p.status == 503),
        "a write was accepted while the broker was down: {:?}",
        while_down.iter().map(|p| p.status).collect::<Vec<_>>()
    );
    let (_, heads) = rig.stream_heads().await?;
    every_checkpoint_at(&db.pool, &heads).await?;
    assert_ledger_stored_once(&db.pool, &log).await?;
    eprintln!(
        "{} requests, {} accepted, {} refused while down; writes back {recovered:?} after the restart",
        log.len(),
        log.iter().filter(|p| p.status == 202).count(),
        while_down.len()
    );
    Ok(())
}

#[tokio::test]
async fn killing_postgres_during_catch_up_changes_nothing_and_ingest_carries_on()
-> anyhow::Result<()> {
    let mut cluster = PgCluster::start().await?;
    let nats = NatsServer::start().await?;
    let db = cluster.create_db().await?;
    let rig = Arc::new(Rig::start(&nats, &db).await?);

    // A backlog: the projector is still applying it when PostgreSQL dies.
    let stop = CancellationToken::new();
    let (log, tasks) = load(&rig, 3, Duration::from_millis(30), &stop);
    more_answers(&log, 60).await?;
    cluster.kill().await?;
    let killed = Instant::now();
    more_answers(&log, 40).await?;
    let down = snapshot(&log);
    cluster.restart().await?;
    more_answers(&log, 20).await?;
    stop.cancel();
    for task in tasks {
        task.await?;
    }

    let accepted_while_down = down
        .iter()
        .filter(|p| p.sent >= killed)
        .map(|p| p.status)
        .collect::<Vec<_>>();
    assert!(
        !accepted_while_down.is_empty() && accepted_while_down.iter().all(|s| *s == 202),
        "ingest must keep accepting while PostgreSQL is down: {accepted_while_down:?}"
    );
    let log = snapshot(&log);
    let (last, heads) = rig.stream_heads().await?;
    every_checkpoint_at(&db.pool, &heads).await?;
    // Each partition's checkpoints at its head or past it, never past the log's end.
    let checkpoints: Vec<(i32, i64)> =
        sqlx::query_as("SELECT log_partition, last_sequence FROM projection_checkpoints")
            .fetch_all(&db.pool)
            .await?;
    assert!(
        checkpoints.iter().all(|(partition, c)| {
            let head = usize::try_from(*partition).ok().and_then(|k| heads.get(k));
            head.is_some_and(|head| *c >= *head as i64 && *c <= last as i64)
        }),
        "{checkpoints:?} vs heads {heads:?} and last {last}"
    );
    assert_ledger_stored_once(&db.pool, &log).await?;
    let clean = TestDb::create().await?;
    rig.fresh_fold(&clean, &heads).await?;
    assert_same_read_models(&db.pool, &clean.pool).await?;
    eprintln!(
        "{} requests, {} accepted while PostgreSQL was down",
        log.len(),
        accepted_while_down.len()
    );
    Ok(())
}
