//! The enabled rules of the accounts a chunk touches, read in the chunk's transaction.
//!
//! A rule's `spec` is parsed with [`RuleSpec::parse`] (the type the admin API validates
//! with); a row that does not parse (written by hand, or by a newer build) is skipped with a
//! warning rather than stopping the notifier.

use chrono::{DateTime, Utc};
use serde_json::Value;
use shared::alerts::RuleSpec;
use shared::records::DEFAULT_STAFF_GROUPS;
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

/// An enabled rule with its parsed spec and its enabled destinations.
#[derive(Debug, Clone)]
pub(crate) struct ActiveRule {
    pub(crate) id: Uuid,
    pub(crate) account_id: Uuid,
    pub(crate) name: Option<String>,
    pub(crate) spec: RuleSpec,
    /// It matches only what was received from this moment on.
    pub(crate) created_at: DateTime<Utc>,
    /// Enabled destinations (may be empty: the rule's state still moves, nothing is sent).
    pub(crate) destinations: Vec<Uuid>,
}

impl ActiveRule {
    /// Whether a record received at `received_at` is in the rule's time (never the past).
    pub(crate) fn sees(&self, received_at: DateTime<Utc>) -> bool {
        received_at >= self.created_at
    }

    /// Whether a server rule watches `server_id`.
    pub(crate) fn watches(&self, server_id: Uuid) -> bool {
        self.spec.server_id().is_none_or(|only| only == server_id)
    }
}

/// Rules by account.
#[derive(Debug, Default)]
pub(crate) struct RuleBook {
    by_account: HashMap<Uuid, Vec<ActiveRule>>,
}

impl RuleBook {
    /// The rules of `account`.
    pub(crate) fn of(&self, account: Uuid) -> &[ActiveRule] {
        self.by_account.get(&account).map_or(&[], Vec::as_slice)
    }

    /// Whether no account of the chunk has a rule (the common case: nothing to do).
    pub(crate) fn is_empty(&self) -> bool {
        self.by_account.is_empty()
    }
}

/// A row of `alert_rules` with its enabled destinations, before its spec is parsed.
#[derive(sqlx::FromRow)]
struct RuleRow {
    id: Uuid,
    account_id: Uuid,
    name: Option<String>,
    spec: Value,
    created_at: DateTime<Utc>,
    destinations: Vec<Uuid>,
}

/// Loads the enabled rules of `accounts`.
pub(crate) async fn load(
    conn: &mut PgConnection,
    accounts: &[Uuid],
) -> Result<RuleBook, sqlx::Error> {
    // Held to the end of the chunk's transaction: a rule or destination deleted meanwhile
    // (query-api) waits for it, instead of failing the outbox rows' foreign keys.
    sqlx::query("SELECT 1 FROM alert_rules WHERE account_id = ANY($1) AND enabled FOR KEY SHARE")
        .bind(accounts)
        .execute(&mut *conn)
        .await?;
    sqlx::query("SELECT 1 FROM alert_destinations WHERE account_id = ANY($1) FOR KEY SHARE")
        .bind(accounts)
        .execute(&mut *conn)
        .await?;
    let rows: Vec<RuleRow> = sqlx::query_as(
        "SELECT r.id, r.account_id, r.name, r.spec, r.created_at,
                coalesce(array_agg(d.id ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL),
                         '{}'::uuid[]) AS destinations
         FROM alert_rules r
         LEFT JOIN alert_rule_destinations rd ON rd.rule_id = r.id
         LEFT JOIN alert_destinations d
             ON d.id = rd.destination_id AND d.enabled AND d.account_id = r.account_id
         WHERE r.enabled AND r.account_id = ANY($1)
         GROUP BY r.id
         ORDER BY r.account_id, r.created_at, r.id",
    )
    .bind(accounts)
    .fetch_all(&mut *conn)
    .await?;
    let mut book = RuleBook::default();
    for RuleRow {
        id,
        account_id,
        name,
        spec,
        created_at,
        destinations,
    } in rows
    {
        match RuleSpec::parse(&spec) {
            Ok(spec) => book
                .by_account
                .entry(account_id)
                .or_default()
                .push(ActiveRule {
                    id,
                    account_id,
                    name,
                    spec,
                    created_at,
                    destinations,
                }),
            Err(errors) => tracing::warn!(
                rule_id = %id,
                %account_id,
                errors = ?errors,
                "skipping an alert rule whose spec does not parse"
            ),
        }
    }
    Ok(book)
}

/// An account's staff groups, lower-cased (its settings, or the defaults).
pub(crate) async fn staff_groups(
    conn: &mut PgConnection,
    account: Uuid,
) -> Result<Vec<String>, sqlx::Error> {
    let stored: Option<Vec<String>> =
        sqlx::query_scalar("SELECT staff_groups FROM account_settings WHERE account_id = $1")
            .bind(account)
            .fetch_optional(&mut *conn)
            .await?;
    let groups = stored.unwrap_or_else(|| {
        DEFAULT_STAFF_GROUPS
            .iter()
            .map(|g| (*g).to_owned())
            .collect()
    });
    Ok(groups.iter().map(|g| g.to_lowercase()).collect())
}
