//! The read-model registry against the schema the migrations make: a migration's table that
//! no registered model claims is a model someone forgot to add to `projections::READ_MODELS`
//! (so it would get no checkpoint, no fold, no rebuild), or a table this list must name.

use projector::projections::{self, READ_MODELS};
use std::collections::{BTreeMap, BTreeSet};
use test_support::TestDb;

/// Tables of `public` that belong to no read model: written by query-api or the CLIs, or the
/// projector's own bookkeeping. A new table that is not a read model's goes here.
const NOT_READ_MODEL_TABLES: [&str; 21] = [
    // The projector's bookkeeping.
    "_sqlx_migrations",
    "projection_checkpoints",
    "parked_messages",
    // Written by query-api (accounts, keys, settings, the dashboard's people) and its CLIs.
    "accounts",
    "account_settings",
    "api_keys",
    "exchange_rates",
    "reviews",
    "team_members",
    "team_invites",
    "team_sessions",
    "audit_log",
    // Alerts: destinations and rules written by query-api; the outbox, its attempts and the
    // notifier's checkpoint and state written by the notifier (`projector notify`), which a
    // rebuild of the read models never touches (so it never sends anything again).
    "alert_destinations",
    "alert_rules",
    "alert_rule_destinations",
    "alert_deliveries",
    "alert_delivery_attempts",
    "notifier_checkpoints",
    "alert_recent_flags",
    "alert_servers",
    "alert_rule_state",
];

#[tokio::test]
async fn every_table_of_the_schema_is_a_registered_models_or_known_not_to_be() -> anyhow::Result<()>
{
    let db = TestDb::create().await?;
    projector::migrate(&db.url).await?;
    let schema: BTreeSet<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    )
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .collect();

    let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for model in READ_MODELS {
        for table in model.tables() {
            owners.entry(table).or_default().push(model.name());
        }
    }
    for table in &schema {
        let owned_by = owners.get(table.as_str()).map_or(&[][..], Vec::as_slice);
        let known = NOT_READ_MODEL_TABLES.contains(&table.as_str());
        match (owned_by, known) {
            ([], false) => anyhow::bail!(
                "table {table} (made by a migration) belongs to no registered read model: add \
                 its model to READ_MODELS in projector/src/projections/mod.rs, or, if no read \
                 model writes it, to NOT_READ_MODEL_TABLES here"
            ),
            ([_], false) | ([], true) => {}
            (models, _) => anyhow::bail!(
                "table {table} is claimed by {models:?}{}",
                if known {
                    " and listed as no model's"
                } else {
                    ""
                }
            ),
        }
    }
    for table in projections::tables() {
        anyhow::ensure!(
            schema.contains(table),
            "a registered read model writes {table}, which no migration creates"
        );
    }
    for table in NOT_READ_MODEL_TABLES {
        anyhow::ensure!(
            schema.contains(table),
            "NOT_READ_MODEL_TABLES names {table}, which no migration creates (stale entry)"
        );
    }
    Ok(())
}
