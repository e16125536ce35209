//! Databases, the account and its keys, through the admin API like an operator would.

use anyhow::Context;
use serde::Deserialize;
use sqlx::Connection;
use uuid::Uuid;

/// Drops and creates database `name` on the server at `pg_url` (no database in the URL).
pub(crate) async fn fresh_database(pg_url: &str, name: &str) -> anyhow::Result<String> {
    let mut conn = sqlx::PgConnection::connect(&format!("{pg_url}/postgres"))
        .await
        .context("connecting to PostgreSQL")?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await?;
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await?;
    let url = format!("{pg_url}/{name}");
    let pool = sqlx::PgPool::connect(&url).await?;
    projector::MIGRATOR.run(&pool).await.context("migrating")?;
    pool.close().await;
    Ok(url)
}

/// Drops database `name` (the scratch databases of a phase, once measured).
pub(crate) async fn drop_database(pg_url: &str, name: &str) -> anyhow::Result<()> {
    let mut conn = sqlx::PgConnection::connect(&format!("{pg_url}/postgres")).await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await?;
    Ok(())
}

/// The admin API of query-api.
#[derive(Clone)]
pub(crate) struct Admin {
    /// query-api's base URL.
    pub(crate) base_url: String,
    /// The admin key.
    pub(crate) admin_key: String,
    /// The HTTP client.
    pub(crate) http: reqwest::Client,
}

#[derive(Deserialize)]
struct Created {
    id: Uuid,
}

#[derive(Deserialize)]
struct IssuedKey {
    key: String,
}

impl Admin {
    /// Creates an account; returns its id.
    pub(crate) async fn account(&self, name: &str) -> anyhow::Result<Uuid> {
        let created: Created = self
            .http
            .post(format!("{}/api/admin/accounts", self.base_url))
            .bearer_auth(&self.admin_key)
            .json(&serde_json::json!({ "name": name }))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(created.id)
    }

    /// Sets `account`'s staff groups and sync interval.
    pub(crate) async fn settings(
        &self,
        account: Uuid,
        staff_groups: &[&str],
        sync_interval_seconds: i64,
    ) -> anyhow::Result<()> {
        self.http
            .put(format!(
                "{}/api/admin/accounts/{account}/settings",
                self.base_url
            ))
            .bearer_auth(&self.admin_key)
            .json(&serde_json::json!({
                "staff_groups": staff_groups,
                "sync_interval_seconds": sync_interval_seconds,
            }))
            .send()
            .await?
            .error_for_status()
            .context("setting the account's settings")?;
        Ok(())
    }

    /// Adds a webhook destination at `url` and a rule sending it every punishment issued in
    /// `account`; returns the destination's signing secret.
    pub(crate) async fn alert_webhook(&self, account: Uuid, url: &str) -> anyhow::Result<String> {
        let base = format!("{}/api/admin/accounts/{account}", self.base_url);
        let created: serde_json::Value = self
            .http
            .post(format!("{base}/destinations"))
            .bearer_auth(&self.admin_key)
            .json(&serde_json::json!({"kind": "webhook", "url": url, "name": "bench receiver"}))
            .send()
            .await?
            .error_for_status()
            .context("adding the webhook destination")?
            .json()
            .await?;
        let (Some(id), Some(secret)) = (created["id"].as_str(), created["secret"].as_str()) else {
            anyhow::bail!("the new destination has no id or secret: {created}");
        };
        self.http
            .post(format!("{base}/alert-rules"))
            .bearer_auth(&self.admin_key)
            .json(&serde_json::json!({"kind": "punishment_issued", "destinations": [id]}))
            .send()
            .await?
            .error_for_status()
            .context("adding the punishment_issued rule")?;
        Ok(secret.to_owned())
    }

    /// Adds a dashboard team member with a password (hashed with Argon2id by query-api).
    pub(crate) async fn member(
        &self,
        account: Uuid,
        login: &str,
        role: &str,
        password: &str,
    ) -> anyhow::Result<()> {
        self.http
            .post(format!(
                "{}/api/admin/accounts/{account}/members",
                self.base_url
            ))
            .bearer_auth(&self.admin_key)
            .json(&serde_json::json!({ "login": login, "role": role, "password": password }))
            .send()
            .await?
            .error_for_status()
            .with_context(|| format!("creating team member {login}"))?;
        Ok(())
    }

    /// Issues `count` keys of `kind` (`plugin` or `dashboard`) for `account`.
    pub(crate) async fn keys(
        &self,
        account: Uuid,
        kind: &str,
        count: usize,
    ) -> anyhow::Result<Vec<String>> {
        let mut keys = Vec::with_capacity(count);
        for i in 0..count {
            let issued: IssuedKey = self
                .http
                .post(format!(
                    "{}/api/admin/accounts/{account}/keys",
                    self.base_url
                ))
                .bearer_auth(&self.admin_key)
                .json(&serde_json::json!({ "kind": kind, "label": format!("bench {kind} {i}") }))
                .send()
                .await?
                .error_for_status()
                .with_context(|| format!("issuing {kind} key {i}"))?
                .json()
                .await?;
            keys.push(issued.key);
        }
        // The services learn keys by watching the key bucket; that takes milliseconds.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        Ok(keys)
    }
}
