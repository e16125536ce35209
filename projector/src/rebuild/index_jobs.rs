//! The index build's statements and what each weighs ([`super::indexes`]): per table,
//! `SET LOGGED`, its deferred indexes and `VACUUM (ANALYZE)`, each weighed by its cost per
//! byte times the table's size as read from PostgreSQL.

use super::copy::TableCopy;
use super::index_plan::{Job, Step};
use sqlx::PgPool;

/// What each step costs per byte of its table, relative to the others, as measured on a
/// million-record log (2 cores): making a table logged 1, a B-tree index 0.8, a GIN
/// (trigram) index 1.6, `VACUUM (ANALYZE)` 0.2. Only the index build's ETA and its order
/// depend on them.
const SET_LOGGED_COST: f64 = 1.0;
const BTREE_COST: f64 = 0.8;
const GIN_COST: f64 = 1.6;
const VACUUM_COST: f64 = 0.2;

/// Every statement of the index build, weighed as if each table were empty.
pub(super) fn jobs(copy: &TableCopy) -> Vec<Job> {
    let qualified = |table: &str| format!("{}.{table}", copy.schema);
    let job = |sql: String, table: &'static str, step: Step, cost: f64| Job {
        sql,
        table,
        step,
        cost,
        weight: cost * EMPTY,
    };
    let mut jobs = Vec::new();
    for &table in &copy.tables {
        let logged = format!("ALTER TABLE {} SET LOGGED", qualified(table));
        jobs.push(job(logged, table, Step::Logged, SET_LOGGED_COST));
        let vacuum = format!("VACUUM (ANALYZE) {}", qualified(table));
        jobs.push(job(vacuum, table, Step::Vacuum, VACUUM_COST));
    }
    for deferred in &copy.deferred {
        let sql = deferred.statement(&copy.schema);
        let cost = if sql.contains(" USING gin ") {
            GIN_COST
        } else {
            BTREE_COST
        };
        jobs.push(job(sql, deferred.table, Step::Index, cost));
    }
    jobs
}

/// The bytes of each of the copy's `tables`.
pub(super) async fn sizes(
    pool: &PgPool,
    copy: &TableCopy,
    tables: &[&str],
) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Reading a table's size takes a share of its lock: a statement of the index build that
    // started on it in the meantime would hold the read back. The weights then stay.
    sqlx::query("SET LOCAL lock_timeout = '100ms'")
        .execute(&mut *tx)
        .await?;
    let sized = sqlx::query_as(
        "SELECT c.relname::text, pg_table_size(c.oid)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = ANY($2)",
    )
    .bind(&copy.schema)
    .bind(tables)
    .fetch_all(&mut *tx)
    .await;
    match sized {
        Err(sqlx::Error::Database(error)) if error.code().as_deref() == Some("55P03") => {
            tracing::debug!(%error, "rebuild: table sizes not read, the weights stay");
            Ok(Vec::new())
        }
        sized => sized,
    }
}

/// What a table weighs besides its bytes, so an empty one weighs something: a page.
const EMPTY: f64 = 8192.0;

/// `table`'s weight from `sizes`, if they have it.
pub(super) fn size_of(sizes: &[(String, i64)], table: &str) -> Option<f64> {
    let (_, bytes) = sizes.iter().find(|(t, _)| t == table)?;
    Some((*bytes).max(0) as f64 + EMPTY)
}
