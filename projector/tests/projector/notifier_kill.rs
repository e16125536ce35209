//! kill -9 of the notifier (`projector notify`, a child process) while deliveries are in
//! flight: after a restart every notification is delivered, none is lost or made twice, and
//! every repeat carries the `webhook-id` of the first try (the receiver checks each signature
//! with the `standardwebhooks` reference implementation).

use crate::harness::{Harness, eventually, logged};
use chrono::Utc;
use shared::alerts::SealingKey;
use shared::alerts::signing::{generate_secret, message_id};
use shared::envelope::Logged;
use shared::records::Punishment;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use test_support::{ReceiverMode, WebhookReceiver, by_webhook_id};
use uuid::Uuid;

const SECRETS_KEY: &str = "notifier-kill-test-sealing-key-0123456789";
/// Notifications made: 8 log messages of 5 punishments.
const MESSAGES: usize = 8;
const PER_MESSAGE: usize = 5;
const WORKERS: usize = 6;
/// Short, so a lease left by the killed notifier (timeout + 5 s) runs out soon.
const TIMEOUT_MS: u64 = 3_000;

/// `projector notify` as a child process, killed on drop.
struct NotifierProcess {
    child: Child,
    log: PathBuf,
}

impl NotifierProcess {
    fn start(env: &[(&str, String)], log: PathBuf) -> anyhow::Result<NotifierProcess> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        let child = Command::new(env!("CARGO_BIN_EXE_projector"))
            .arg("notify")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()?;
        Ok(NotifierProcess { child, log })
    }

    /// SIGKILL: no shutdown code runs.
    fn kill_9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Fails (with its log) if it exited.
    fn check_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            anyhow::bail!("projector notify exited ({status}); log:\n{}", self.log());
        }
        Ok(())
    }
}

impl Drop for NotifierProcess {
    fn drop(&mut self) {
        self.kill_9();
    }
}

#[tokio::test]
async fn kill_9_mid_delivery_loses_nothing_and_repeats_keep_their_webhook_id() -> anyhow::Result<()>
{
    // The in-process projector applies the migrations (and projects, which does no harm).
    let h = Harness::start().await?;
    let mut receiver = WebhookReceiver::start().await?;
    let account = Uuid::now_v7();
    let destination = Uuid::now_v7();
    let secret = generate_secret();
    receiver.set_secrets(&[&secret]).await?;
    receiver.set_mode(ReceiverMode::Hang).await?;
    setup_rows(&h, account, destination, &secret, &receiver.url()).await?;

    let dir = std::env::temp_dir().join(format!("notifier-kill-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir)?;
    let env = notifier_env(&h);
    let mut notifier = NotifierProcess::start(&env, dir.join("notifier.log"))?;

    for m in 0..MESSAGES {
        let records: Vec<Logged<Punishment>> = (0..PER_MESSAGE)
            .map(|i| punishment(m * PER_MESSAGE + i))
            .collect();
        h.publish(account, Utc::now(), records).await?;
    }
    let total = MESSAGES * PER_MESSAGE;

    // Wait until every worker holds an attempt the receiver keeps hanging, then kill -9.
    let hung = receiver
        .wait_until(
            crate::harness::DEADLINE,
            "every worker's attempt hanging",
            |all| all.iter().filter(|r| r.status.is_none()).count() >= WORKERS,
        )
        .await;
    if hung.is_err() {
        notifier.check_running()?;
    }
    let hung = hung?;
    notifier.kill_9();
    let in_flight: BTreeSet<String> = hung.iter().filter_map(|r| r.webhook_id.clone()).collect();
    assert!(in_flight.len() >= WORKERS, "{in_flight:?}");

    // Killed mid-attempt: deliveries were claimed (lease held, attempt counted) with no
    // outcome recorded for that attempt.
    let cut_short: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM alert_deliveries d
         WHERE d.status = 'pending' AND d.attempts > 0 AND d.locked_until > now()
           AND NOT EXISTS (SELECT 1 FROM alert_delivery_attempts a
                           WHERE a.delivery_id = d.id AND a.attempt = d.attempts)",
    )
    .fetch_one(h.pool())
    .await?;
    assert!(cut_short >= 1, "no attempt was in flight at the kill");

    receiver.set_mode(ReceiverMode::Ok).await?;
    let mut notifier = NotifierProcess::start(&env, dir.join("notifier.log"))?;
    let received = receiver
        .wait_for_verified(total, Duration::from_secs(60))
        .await;
    if received.is_err() {
        notifier.check_running()?;
    }
    let received = received?;

    // Every notification once in the outbox, all delivered.
    let rows: Vec<(Uuid, String, serde_json::Value)> = sqlx::query_as(
        "SELECT id, status, payload FROM alert_deliveries WHERE destination_id = $1",
    )
    .bind(destination)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(
        rows.len(),
        total,
        "the outbox lost or doubled a notification"
    );
    let reasons: BTreeSet<String> = rows
        .iter()
        .map(|(_, _, payload)| payload["reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(reasons.len(), total, "{reasons:?}");
    let outbox_ids: BTreeSet<String> = rows.iter().map(|(id, _, _)| message_id(*id)).collect();
    let delivered = eventually("every delivery marked delivered", || async {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM alert_deliveries WHERE status <> 'delivered'")
                .fetch_one(h.pool())
                .await?;
        Ok((pending == 0).then_some(()))
    })
    .await;
    if delivered.is_err() {
        notifier.check_running()?;
    }
    delivered?;

    // The receiver saw exactly the outbox's webhook-ids: a repeat never got a new one.
    let groups = by_webhook_id(&received);
    let seen: BTreeSet<String> = groups.keys().cloned().collect();
    assert_eq!(seen, outbox_ids, "webhook-ids differ from the outbox's");
    for id in &in_flight {
        let requests = &groups[id];
        assert!(requests.len() >= 2, "{id} hung, yet was not tried again");
        assert!(
            requests.iter().any(|r| r.accepted()),
            "{id} was never delivered"
        );
        assert!(
            requests
                .iter()
                .all(|r| r.body == requests[0].body && r.verified)
        );
    }
    let by_reason: BTreeMap<String, usize> = groups
        .values()
        .map(|requests| {
            let reason = requests[0].body["data"]["reason"]
                .as_str()
                .unwrap_or_default();
            (reason.to_owned(), requests.len())
        })
        .collect();
    assert_eq!(by_reason.len(), total, "{by_reason:?}");
    drop(notifier);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The account, a webhook destination to the receiver (its secret sealed as query-api seals
/// it), a rule for every punishment, and the notifier's checkpoint at the log's current end (a
/// notifier that ran before).
async fn setup_rows(
    h: &Harness,
    account: Uuid,
    destination: Uuid,
    secret: &str,
    url: &str,
) -> anyhow::Result<()> {
    let sealed = SealingKey::new(SECRETS_KEY)?.seal(destination.as_bytes(), secret);
    let rule = Uuid::now_v7();
    let spec = shared::alerts::RuleSpec::PunishmentIssued {
        punishment_types: Vec::new(),
    };
    let mut tx = h.pool().begin().await?;
    sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'kill -9')")
        .bind(account)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO alert_destinations (id, account_id, kind, name, url, secret_sealed)
         VALUES ($1, $2, 'webhook', 'receiver', $3, $4)",
    )
    .bind(destination)
    .bind(account)
    .bind(url)
    .bind(sealed)
    .execute(&mut *tx)
    .await?;
    sqlx::query("INSERT INTO alert_rules (id, account_id, kind, spec) VALUES ($1, $2, $3, $4)")
        .bind(rule)
        .bind(account)
        .bind(spec.kind())
        .bind(spec.to_value())
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO alert_rule_destinations (rule_id, destination_id) VALUES ($1, $2)")
        .bind(rule)
        .bind(destination)
        .execute(&mut *tx)
        .await?;
    // Without a checkpoint a first start begins at the log's end as it finds it, which could
    // be after the punishments this test publishes next.
    let stream = &h.config.common.event_log.stream;
    let last =
        h.js.get_stream(stream)
            .await?
            .info()
            .await?
            .state
            .last_sequence;
    sqlx::query("INSERT INTO notifier_checkpoints (stream, last_sequence) VALUES ($1, $2)")
        .bind(stream)
        .bind(i64::try_from(last)?)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// What `projector notify` reads: the harness's log, privacy keys and database, loopback
/// allowed, and timings short enough for a test.
fn notifier_env(h: &Harness) -> Vec<(&'static str, String)> {
    let log = &h.config.common.event_log;
    vec![
        ("NATS_URL", h.nats.url()),
        ("DATABASE_URL", h.db.url.clone()),
        ("EVENT_STREAM", log.stream.clone()),
        ("SUBJECT_PREFIX", log.subject_prefix.clone()),
        ("STREAM_REPLICAS", log.replicas.to_string()),
        (
            "DUPLICATE_WINDOW_SECS",
            log.duplicate_window.as_secs().to_string(),
        ),
        ("KEY_BUCKET", log.key_bucket.clone()),
        ("RATE_BUCKET", log.rate_bucket.clone()),
        ("PRIVACY_BUCKET", log.privacy_bucket.clone()),
        // The deployment's master key: the notifier opens what the projector's log holds.
        (
            "PRIVACY_MASTER_KEY",
            h.vars.get("PRIVACY_MASTER_KEY").unwrap_or_default(),
        ),
        ("BIND_ADDR", "127.0.0.1:0".to_owned()),
        ("WEBHOOK_SECRETS_KEY", SECRETS_KEY.to_owned()),
        ("WEBHOOK_ALLOW_NETWORKS", "loopback".to_owned()),
        ("NOTIFIER_WORKERS", WORKERS.to_string()),
        ("NOTIFIER_TIMEOUT_MS", TIMEOUT_MS.to_string()),
        ("NOTIFIER_RETRY_BASE_MS", "200".to_owned()),
        ("NOTIFIER_RETRY_MAX_MS", "1000".to_owned()),
        ("NOTIFIER_BATCH_WAIT_MS", "5".to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ]
}

/// Punishment number `n` (its reason names it, so each notification is told apart).
fn punishment(n: usize) -> Logged<Punishment> {
    logged(&format!(
        r#"{{"server_id":"{}","player_uuid":"{}","type":"warning","reason":"warning {n}",
            "staff_name":"Alex","issued_at":"{}"}}"#,
        Uuid::now_v7(),
        Uuid::now_v7(),
        Utc::now().to_rfc3339()
    ))
}
