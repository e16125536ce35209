//! The rebuild's copy of the read models' tables: created empty beside the live ones, filled
//! by the replay, and swapped in by renaming schemas' tables in one short transaction.
//!
//! The copy lives in its own schema (`rebuild_<time>`) and its connections put that schema
//! first on their `search_path`, so the projections' unqualified table names (including
//! `projection_checkpoints`) resolve to the copy while every other table (`account_settings`,
//! `parked_messages`) still resolves to `public`. The copy's tables are made with
//! `CREATE UNLOGGED TABLE ... (LIKE public.x INCLUDING ALL)`: the migrations stay the only
//! definition of the schema, and the copy follows whatever they made.
//!
//! Bulk mode: the copy loads unlogged (no WAL for rows a crash would throw away anyway: a
//! rebuild that fails or is interrupted drops its copy, and PostgreSQL empties unlogged
//! tables after its own crash), with only the indexes the folds need while loading
//! ([`super::deferred`]); the others are built after the load ([`super::indexes`]), when the
//! tables are also made logged, before anything reads them.

use super::deferred::{self, Deferred};
use crate::checkpoint;
use crate::projections::ReadModel;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgConnection, PgPool};
use std::str::FromStr;

/// The schemas a rebuild creates; any found at start are leftovers of one that crashed.
const PREFIXES: [&str; 2] = ["rebuild_", "retired_"];

/// A copy of some read models' tables in its own schema.
#[derive(Debug)]
pub(super) struct TableCopy {
    /// `rebuild_<time>`: where the copy is filled.
    pub(super) schema: String,
    /// `retired_<time>`: where the swap moves the tables it replaces.
    retired: String,
    pub(super) tables: Vec<&'static str>,
    /// The live tables' indexes the copy does without while loading.
    pub(super) deferred: Vec<Deferred>,
}

/// Drops the schemas a crashed rebuild left behind (the caller holds the rebuild lock, so no
/// other rebuild is using them).
pub(super) async fn drop_leftovers(pool: &PgPool) -> Result<(), sqlx::Error> {
    let patterns: Vec<String> = PREFIXES.iter().map(|p| format!("{p}%")).collect();
    let schemas: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE nspname LIKE ANY($1)")
            .bind(&patterns)
            .fetch_all(pool)
            .await?;
    for schema in schemas {
        tracing::warn!(%schema, "dropping what an interrupted rebuild left behind");
        sqlx::raw_sql(&format!("DROP SCHEMA {} CASCADE", quoted(&schema)))
            .execute(pool)
            .await?;
    }
    Ok(())
}

impl TableCopy {
    /// Creates the schema, an empty unlogged copy of every table of `models` with only its
    /// load indexes (see the module docs), and the copy's own checkpoints at 0 in each of the
    /// log's `partitions`, in one transaction.
    pub(super) async fn create(
        pool: &PgPool,
        models: &[&'static dyn ReadModel],
        partitions: checkpoint::Partition,
    ) -> anyhow::Result<Self> {
        let stamp = chrono::Utc::now().format("%Y%m%d_%H%M%S_%3f");
        let mut copy = TableCopy {
            schema: format!("rebuild_{stamp}"),
            retired: format!("retired_{stamp}"),
            tables: models.iter().flat_map(|m| m.tables()).copied().collect(),
            deferred: Vec::new(),
        };
        let mut tx = pool.begin().await?;
        let mut ddl = format!("CREATE SCHEMA {};", copy.schema);
        // The copy's checkpoints too: they are never swapped in.
        for table in copy.tables.iter().chain(&["projection_checkpoints"]) {
            ddl.push_str(&format!(
                "CREATE UNLOGGED TABLE {schema}.{table} (LIKE public.{table} INCLUDING ALL);",
                schema = copy.schema
            ));
        }
        (&mut *tx).execute(ddl.as_str()).await?;
        copy.keep_storage_parameters(&mut tx).await?;
        let load: Vec<&str> = models
            .iter()
            .flat_map(|m| m.load_indexes())
            .copied()
            .collect();
        copy.deferred = deferred::defer(&mut tx, &copy.schema, &copy.tables, &load).await?;
        sqlx::query(&format!(
            "INSERT INTO {}.projection_checkpoints
                 (projection, log_partition, last_sequence, updated_at)
             SELECT name, k, 0, now() FROM UNNEST($1::text[]) AS t(name)
             CROSS JOIN generate_series(0, $2 - 1) AS k",
            copy.schema
        ))
        .bind(crate::projections::names_of(models))
        .bind(i32::from(partitions.max(1)))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(copy)
    }

    /// `LIKE` does not copy storage parameters (such as the events table's autovacuum
    /// settings); sets the live tables' ones on the copy.
    async fn keep_storage_parameters(&self, tx: &mut PgConnection) -> Result<(), sqlx::Error> {
        let parameters: Vec<(String, String)> = sqlx::query_as(
            "SELECT c.relname::text, array_to_string(c.reloptions, ', ')
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND c.relname = ANY($1) AND c.reloptions IS NOT NULL",
        )
        .bind(&self.tables)
        .fetch_all(&mut *tx)
        .await?;
        for (table, options) in parameters {
            let alter = format!("ALTER TABLE {}.{table} SET ({options})", self.schema);
            (&mut *tx).execute(alter.as_str()).await?;
        }
        Ok(())
    }

    /// A pool of `connections` on the copy ([`Self::options`]).
    pub(super) async fn connect(
        &self,
        database_url: &str,
        connections: u32,
    ) -> Result<PgPool, sqlx::Error> {
        PgPoolOptions::new()
            .max_connections(connections)
            .connect_with(self.options(database_url)?)
            .await
    }

    /// Connections whose unqualified table names resolve to the copy first, then to
    /// `public`: the settings are startup options, so every connection gets them.
    ///
    /// `synchronous_commit=off`: a commit on the copy does not wait for its WAL to reach the
    /// disk. A crash can lose the last of these commits, which is harmless: the copy is
    /// thrown away on any failure, and what the copy's connections write to `public` (parked
    /// messages) is idempotent and parked by the live projector too. What is swapped in is
    /// durable: the swap commits synchronously on the rebuild's own pool, and flushing its
    /// commit record flushes the WAL before it, past every earlier commit of the copy.
    ///
    /// `client_connection_check_interval`: a statement of an interrupted rebuild (an index
    /// build runs for minutes) ends within a second of its connection being dropped, rather
    /// than holding the locks dropping the copy needs.
    pub(super) fn options(&self, database_url: &str) -> Result<PgConnectOptions, sqlx::Error> {
        Ok(PgConnectOptions::from_str(database_url)?.options([
            ("search_path", format!("{},public", self.schema)),
            ("synchronous_commit", "off".to_owned()),
            ("client_connection_check_interval", "1s".to_owned()),
        ]))
    }

    /// Inside the swap transaction (which already holds the models' checkpoint rows): locks
    /// the live tables, moves them to the retired schema, moves the copy into `public` under
    /// the live tables' index names, and sets the models' checkpoints of each partition `k`
    /// to `positions[k]`, where the copy of that partition stands.
    pub(super) async fn swap_in(
        &self,
        tx: &mut PgConnection,
        names: &[&'static str],
        positions: &[u64],
    ) -> Result<(), sqlx::Error> {
        let live: Vec<String> = self.tables.iter().map(|t| format!("public.{t}")).collect();
        let mut ddl = format!(
            "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE; CREATE SCHEMA {};",
            live.join(", "),
            self.retired
        );
        for table in &self.tables {
            ddl.push_str(&format!(
                "ALTER TABLE public.{table} SET SCHEMA {retired};
                 ALTER TABLE {copy}.{table} SET SCHEMA public;",
                retired = self.retired,
                copy = self.schema
            ));
        }
        (&mut *tx).execute(ddl.as_str()).await?;
        for table in &self.tables {
            self.keep_index_names(tx, table).await?;
        }
        let partitions: Vec<i32> = (0..positions.len())
            .map(|k| i32::try_from(k).unwrap_or(i32::MAX))
            .collect();
        let positions: Vec<i64> = positions
            .iter()
            .copied()
            .map(checkpoint::to_column)
            .collect();
        sqlx::query(
            "UPDATE public.projection_checkpoints c
             SET last_sequence = p.at, updated_at = now()
             FROM UNNEST($2::int[], $3::bigint[]) AS p(k, at)
             WHERE c.projection = ANY($1) AND c.log_partition = p.k",
        )
        .bind(names)
        .bind(partitions)
        .bind(positions)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    /// `LIKE ... INCLUDING ALL` names the copied indexes after their columns; renames each to
    /// the name of the retired index with the same definition, so later migrations that name
    /// an index still find it.
    async fn keep_index_names(
        &self,
        tx: &mut PgConnection,
        table: &str,
    ) -> Result<(), sqlx::Error> {
        let renames: Vec<(String, String)> = sqlx::query_as(
            "SELECT n.relname::text, o.relname::text
             FROM pg_index ni
             JOIN pg_class n ON n.oid = ni.indexrelid
             JOIN pg_index oi ON oi.indrelid = $2::regclass AND oi.indisunique = ni.indisunique
             JOIN pg_class o ON o.oid = oi.indexrelid
             WHERE ni.indrelid = $1::regclass
               AND n.relname <> o.relname
               AND substring(pg_get_indexdef(ni.indexrelid) FROM ' USING .*$')
                 = substring(pg_get_indexdef(oi.indexrelid) FROM ' USING .*$')",
        )
        .bind(format!("public.{table}"))
        .bind(format!("{}.{table}", self.retired))
        .fetch_all(&mut *tx)
        .await?;
        for (new, old) in renames {
            let rename = format!(
                "ALTER INDEX public.{} RENAME TO {}",
                quoted(&new),
                quoted(&old)
            );
            (&mut *tx).execute(rename.as_str()).await?;
        }
        Ok(())
    }

    /// Drops the copy's schema and, after a swap, the retired tables.
    pub(super) async fn drop(&self, pool: &PgPool) -> Result<(), sqlx::Error> {
        sqlx::raw_sql(&format!(
            "DROP SCHEMA IF EXISTS {} CASCADE; DROP SCHEMA IF EXISTS {} CASCADE;",
            self.retired, self.schema
        ))
        .execute(pool)
        .await?;
        Ok(())
    }
}

/// `name` as a quoted SQL identifier.
pub(super) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
