//! The rebuild's baseline: the same rows the rebuild wrote, bulk-loaded by PostgreSQL with no
//! service logic. Each rebuilt table is read out with binary `COPY` into memory (untimed);
//! then, timed, empty unlogged tables shaped like them (no indexes) are made in a scratch
//! schema, every table is loaded with binary `COPY ... FROM STDIN`, and (the second clock)
//! each is set logged and gets the live table's indexes: tables ready to serve, the rebuild's
//! end state.

use futures::{StreamExt, TryStreamExt};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::time::{Duration, Instant};

/// The scratch schema (dropped before and after).
const SCHEMA: &str = "bench_raw_copy";
/// Bytes per `CopyData` message sent (the server takes any split).
const SEND: usize = 1 << 20;

/// What the baseline took.
#[derive(Debug)]
pub(super) struct RawCopy {
    /// Creating the tables and loading every row.
    pub(super) load: Duration,
    /// That, then `SET LOGGED` (every table).
    pub(super) logged: Duration,
    /// That, then every index.
    pub(super) ready: Duration,
    /// Rows loaded (every table).
    pub(super) rows: u64,
    /// Bytes of binary `COPY` data loaded.
    pub(super) bytes: u64,
    /// Indexes built.
    pub(super) indexes: usize,
    /// Connections used at once.
    pub(super) connections: usize,
}

/// One table's rows and index definitions, read before the clock starts.
struct Table {
    name: String,
    data: Vec<u8>,
    indexes: Vec<String>,
}

/// Loads `tables` (in `public` of the database at `url`) again into a scratch schema, on as
/// many connections at once as the machine has cores (PostgreSQL's own parallel index build
/// workers come on top, as for the rebuild).
pub(super) async fn measure(url: &str, tables: &[&str]) -> anyhow::Result<RawCopy> {
    let connections = std::thread::available_parallelism().map_or(2, |n| n.get());
    let pool = PgPoolOptions::new()
        .max_connections(u32::try_from(connections).unwrap_or(2))
        .connect(url)
        .await?;
    let mut read = Vec::with_capacity(tables.len());
    for table in tables {
        read.push(read_out(&pool, table).await?);
    }
    // The largest first, so no connection is left with a big table at the end.
    read.sort_by_key(|t| std::cmp::Reverse(t.data.len()));
    let bytes = read.iter().map(|t| t.data.len() as u64).sum();
    let indexes = read.iter().map(|t| t.indexes.len()).sum();
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
        .execute(&pool)
        .await?;
    sqlx::query(&format!("CREATE SCHEMA {SCHEMA}"))
        .execute(&pool)
        .await?;

    let started = Instant::now();
    let rows: Vec<u64> = futures::stream::iter(read.iter().map(|t| load(&pool, t)))
        .buffer_unordered(connections)
        .try_collect()
        .await?;
    let load = started.elapsed();
    // Logged first: `SET LOGGED` rewrites a table with its indexes, so indexes built before it
    // would be built twice; built after it, each is written once.
    let set_logged = read.iter().map(|t| {
        let statement = format!("ALTER TABLE {SCHEMA}.{} SET LOGGED", t.name);
        let pool = pool.clone();
        async move { sqlx::query(&statement).execute(&pool).await.map(|_| ()) }
    });
    futures::stream::iter(set_logged)
        .buffer_unordered(connections)
        .try_collect::<Vec<()>>()
        .await?;
    let logged = started.elapsed();
    let builds = read.iter().flat_map(|t| t.indexes.iter()).map(|statement| {
        let pool = pool.clone();
        async move { sqlx::query(statement).execute(&pool).await.map(|_| ()) }
    });
    futures::stream::iter(builds)
        .buffer_unordered(connections)
        .try_collect::<Vec<()>>()
        .await?;
    let ready = started.elapsed();

    sqlx::query(&format!("DROP SCHEMA {SCHEMA} CASCADE"))
        .execute(&pool)
        .await?;
    pool.close().await;
    Ok(RawCopy {
        load,
        logged,
        ready,
        rows: rows.iter().sum(),
        bytes,
        indexes,
        connections,
    })
}

/// `public.table`'s rows as binary `COPY` data, and its indexes' definitions pointed at the
/// scratch schema's table.
async fn read_out(pool: &PgPool, table: &str) -> anyhow::Result<Table> {
    let mut conn = pool.acquire().await?;
    let mut data = Vec::new();
    {
        let statement = format!("COPY (SELECT * FROM public.{table}) TO STDOUT (FORMAT binary)");
        let mut out = conn.copy_out_raw(&statement).await?;
        while let Some(chunk) = out.next().await {
            data.extend_from_slice(&chunk?);
        }
    }
    let definitions: Vec<String> = sqlx::query_scalar(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1",
    )
    .bind(table)
    .fetch_all(&mut *conn)
    .await?;
    let live = format!(" ON public.{table} ");
    let indexes = definitions
        .iter()
        .map(|definition| {
            anyhow::ensure!(
                definition.contains(&live),
                "unexpected index definition on {table}: {definition}"
            );
            Ok(definition.replacen(&live, &format!(" ON {SCHEMA}.{table} "), 1))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Table {
        name: table.to_owned(),
        data,
        indexes,
    })
}

/// Creates `table` empty and unlogged in the scratch schema (defaults and checks, no index)
/// and loads its rows; returns how many.
async fn load(pool: &PgPool, table: &Table) -> anyhow::Result<u64> {
    let mut conn = pool.acquire().await?;
    let name = &table.name;
    sqlx::query(&format!(
        "CREATE UNLOGGED TABLE {SCHEMA}.{name}
         (LIKE public.{name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
    ))
    .execute(&mut *conn)
    .await?;
    let mut copy = conn
        .copy_in_raw(&format!("COPY {SCHEMA}.{name} FROM STDIN (FORMAT binary)"))
        .await?;
    for chunk in table.data.chunks(SEND) {
        copy.send(chunk).await?;
    }
    Ok(copy.finish().await?)
}
