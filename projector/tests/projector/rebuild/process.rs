//! A `projector rebuild` child process to kill, its JSON log lines, and transactions that hold
//! the locks a phase of it must wait on (so the kill lands in that phase, not by timing).

use crate::harness::{DEADLINE, Harness, eventually};
use sqlx::{Connection, Executor, PgConnection};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The `application_name` of the child's connections: finds them in `pg_stat_activity`.
pub(super) const APPLICATION: &str = "warden_killed_rebuild";

/// Log messages in one chunk of the child's replay.
const BATCH_MAX: usize = 16;

/// The phases' names in the order a rebuild logs them (`Phase::as_str`).
const PHASES: [&str; 6] = ["prepare", "load", "index_build", "catch_up", "swap", "done"];

/// A running `projector rebuild --no-progress` with `LOG_FORMAT=json`.
pub(super) struct RebuildProcess {
    child: Child,
    /// Its stdout, line by line (closed when it exits).
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line read so far, for the failure messages.
    seen: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl RebuildProcess {
    /// Starts the projector binary's rebuild with the harness's settings (its database, log,
    /// privacy buckets and key, chunking), and nothing from the test's environment.
    pub(super) fn spawn(h: &Harness) -> anyhow::Result<RebuildProcess> {
        RebuildProcess::spawn_with(h, &[])
    }

    /// [`RebuildProcess::spawn`], with `settings` set (or replaced) in its environment.
    pub(super) fn spawn_with(
        h: &Harness,
        settings: &[(&str, &str)],
    ) -> anyhow::Result<RebuildProcess> {
        let (config, log) = (&h.config, &h.config.common.event_log);
        let url = &h.db.url;
        let separator = if url.contains('?') { '&' } else { '?' };
        let mut child = Command::new(env!("CARGO_BIN_EXE_projector"))
            .args(["rebuild", "--no-progress"])
            .env_clear()
            .env(
                "DATABASE_URL",
                format!("{url}{separator}application_name={APPLICATION}"),
            )
            .env("NATS_URL", config.common.nats_url.expose())
            .env("EVENT_STREAM", &log.stream)
            .env("SUBJECT_PREFIX", &log.subject_prefix)
            .env("STREAM_REPLICAS", log.replicas.to_string())
            .env("EVENT_PARTITIONS", log.partitions.to_string())
            .env(
                "DUPLICATE_WINDOW_SECS",
                log.duplicate_window.as_secs().to_string(),
            )
            .env("KEY_BUCKET", &log.key_bucket)
            .env("RATE_BUCKET", &log.rate_bucket)
            .env("PRIVACY_BUCKET", &log.privacy_bucket)
            .env(
                "PRIVACY_MASTER_KEY",
                h.vars.get("PRIVACY_MASTER_KEY").unwrap_or_default(),
            )
            // Small chunks: a lock the test takes once the load has begun still finds most
            // of the backlog unapplied.
            .env("PROJECTOR_BATCH_MAX", BATCH_MAX.to_string())
            .env(
                "PROJECTOR_BATCH_WAIT_MS",
                config.batch_wait.as_millis().to_string(),
            )
            .env(
                "PROJECTOR_APPLY_CONCURRENCY",
                config.apply_concurrency.to_string(),
            )
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .envs(settings.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (send, lines) = mpsc::unbounded_channel();
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("piped stderr");
        let kept = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            if let Ok(mut kept) = kept.lock() {
                kept.push_str(&text);
            }
        });
        Ok(RebuildProcess {
            child,
            lines,
            seen: Vec::new(),
            stderr,
        })
    }

    /// Waits for the `rebuild phase` line of `phase`; fails if the rebuild logs a later phase
    /// first, exits, or takes longer than [`DEADLINE`].
    pub(super) async fn phase(&mut self, phase: &str) -> anyhow::Result<()> {
        let wanted = PHASES.iter().position(|p| *p == phase);
        let wanted = wanted.unwrap_or_else(|| panic!("no phase {phase}"));
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let line = match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => line,
                Ok(None) => anyhow::bail!("the rebuild exited before {phase}: {}", self.told()),
                Err(_) => anyhow::bail!("no {phase} phase within {DEADLINE:?}: {}", self.told()),
            };
            self.seen.push(line.clone());
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if json["message"] != "rebuild phase" {
                continue;
            }
            let logged = json["phase"].as_str().unwrap_or_default();
            match PHASES.iter().position(|p| *p == logged) {
                Some(at) if at == wanted => return Ok(()),
                Some(at) if at > wanted => {
                    anyhow::bail!("the rebuild went past {phase}: {}", self.told())
                }
                Some(_) => {}
                None => anyhow::bail!("an unknown phase {logged}: {}", self.told()),
            }
        }
    }

    /// Reads its log lines until one `found` returns something for, and returns that; fails
    /// if it exits first or takes longer than [`DEADLINE`].
    pub(super) async fn until<T>(
        &mut self,
        what: &str,
        mut found: impl FnMut(&serde_json::Value) -> Option<T>,
    ) -> anyhow::Result<T> {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let line = match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => line,
                Ok(None) => anyhow::bail!("the rebuild exited before {what}: {}", self.told()),
                Err(_) => anyhow::bail!("no {what} within {DEADLINE:?}: {}", self.told()),
            };
            self.seen.push(line.clone());
            if let Ok(json) = serde_json::from_str::<serde_json::Value>(&line)
                && let Some(value) = found(&json)
            {
                return Ok(value);
            }
        }
    }

    /// Waits for it to exit, successfully.
    pub(super) fn finished(mut self) -> anyhow::Result<()> {
        let status = self.child.wait()?;
        anyhow::ensure!(status.success(), "the rebuild failed: {}", self.told());
        Ok(())
    }

    /// What it wrote, for a failure message.
    fn told(&self) -> String {
        let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        format!("stdout:\n{}\nstderr:\n{stderr}", self.seen.join("\n"))
    }

    /// SIGKILLs it (`Child::kill` on Unix) and reaps it.
    pub(super) fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill()?;
        let status = self.child.wait()?;
        anyhow::ensure!(!status.success(), "the rebuild had already finished");
        Ok(())
    }
}

/// A transaction of the test's own, holding locks until [`Holder::release`].
pub(super) struct Holder {
    conn: PgConnection,
    /// Its backend's pid (what `pg_blocking_pids` names).
    pid: i32,
}

impl Holder {
    /// Connects and begins the transaction (before the moment to lock comes, so the lock
    /// then takes one statement).
    pub(super) async fn begin(h: &Harness) -> anyhow::Result<Holder> {
        let mut conn = PgConnection::connect(&h.db.url).await?;
        conn.execute("BEGIN").await?;
        let pid = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut conn)
            .await?;
        Ok(Holder { conn, pid })
    }

    /// Begins a transaction holding the locks `sql` takes.
    pub(super) async fn hold(h: &Harness, sql: &str) -> anyhow::Result<Holder> {
        let mut holder = Holder::begin(h).await?;
        holder.lock(sql).await?;
        Ok(holder)
    }

    /// Takes the locks `sql` takes, until [`Holder::release`].
    pub(super) async fn lock(&mut self, sql: &str) -> anyhow::Result<()> {
        self.conn.execute(sql).await?;
        Ok(())
    }

    /// Asks for the locks `sql` takes while a conflicting request of another transaction
    /// waits for them: returns once this request waits in PostgreSQL's queue (behind that
    /// one, so it is granted the moment that one's transaction ends), with the task that
    /// holds the locks once granted.
    pub(super) async fn lock_queued(
        mut self,
        h: &Harness,
        sql: &str,
    ) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<Holder>>> {
        let pid = self.pid;
        let sql = sql.to_owned();
        let granted = tokio::spawn(async move { self.lock(&sql).await.map(|()| self) });
        eventually("the test's lock request to wait in the queue", || async {
            let waits: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)",
            )
            .bind(pid)
            .fetch_one(h.pool())
            .await?;
            Ok(waits.then_some(()))
        })
        .await?;
        Ok(granted)
    }

    /// The schema the rebuild fills (`rebuild_<time>`); it must exist.
    pub(super) async fn copy_schema(&mut self) -> anyhow::Result<String> {
        let schema = sqlx::query_scalar(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'",
        )
        .fetch_optional(&mut self.conn)
        .await?;
        schema.ok_or_else(|| anyhow::anyhow!("no rebuild schema"))
    }

    /// Ends the transaction, and with it the locks.
    pub(super) async fn release(mut self) -> anyhow::Result<()> {
        self.conn.execute("ROLLBACK").await?;
        self.conn.close().await?;
        Ok(())
    }

    /// Waits until a statement of the killed-to-be rebuild whose text contains `like` (an SQL
    /// `LIKE` pattern) waits on this transaction's locks; returns the statement.
    pub(super) async fn blocks(&self, h: &Harness, like: &str) -> anyhow::Result<String> {
        eventually(
            &format!("the rebuild to wait on a lock at {like}"),
            || async {
                let query: Option<String> = sqlx::query_scalar(
                    "SELECT query FROM pg_stat_activity
                 WHERE application_name = $1 AND $2 = ANY(pg_blocking_pids(pid))
                   AND query ILIKE $3
                 LIMIT 1",
                )
                .bind(APPLICATION)
                .bind(self.pid)
                .bind(like)
                .fetch_optional(h.pool())
                .await?;
                Ok(query)
            },
        )
        .await
        .inspect(|query| eprintln!("the rebuild waits on the test at: {query}"))
    }
}

/// Waits until every table of the copy in `schema` but `chat_messages` (and the checkpoints,
/// logged last) has been made logged by the index build.
pub(super) async fn only_chat_unlogged(h: &Harness, schema: &str) -> anyhow::Result<()> {
    eventually("the copy's other tables to be logged", || async {
        let unlogged: Vec<String> = sqlx::query_scalar(
            "SELECT c.relname::text FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relpersistence = 'u'
               AND c.relname <> 'projection_checkpoints'",
        )
        .bind(schema)
        .fetch_all(h.pool())
        .await?;
        Ok((unlogged == ["chat_messages"]).then_some(()))
    })
    .await
}

/// Waits until the killed rebuild's connections have ended: a backend notices its client is
/// gone only once the statement it runs (or waits to run) ends.
pub(super) async fn connections_gone(h: &Harness) -> anyhow::Result<()> {
    eventually("the killed rebuild's connections to end", || async {
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
                .bind(APPLICATION)
                .fetch_one(h.pool())
                .await?;
        Ok((left == 0).then_some(()))
    })
    .await
}
