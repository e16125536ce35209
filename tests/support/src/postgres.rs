//! A fresh PostgreSQL database per test.

use std::time::Duration;

use anyhow::{Context, bail};
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};
use uuid::Uuid;

const POOL_SIZE: u32 = 5;

/// A fresh PostgreSQL database for one test, created on the server named by env
/// TEST_DATABASE_URL (a superuser URL to the `postgres` database), named `t_<uuid simple>`.
///
/// The database is not dropped afterwards: `./deploy/test.sh` throws the whole cluster away.
#[derive(Debug)]
pub struct TestDb {
    /// URL of the new database (TEST_DATABASE_URL with the database name replaced).
    pub url: String,
    /// A small pool (at most 5 connections) on the new database.
    pub pool: PgPool,
}

impl TestDb {
    /// Creates the database and connects a pool; does NOT run migrations (the caller does).
    pub async fn create() -> anyhow::Result<TestDb> {
        let admin_url = std::env::var("TEST_DATABASE_URL").map_err(|_| {
            anyhow::anyhow!(
                "TEST_DATABASE_URL is not set: run the tests with ./deploy/test.sh, which starts \
                 a throw-away PostgreSQL and sets it (or point it at a superuser URL to a \
                 `postgres` database yourself)"
            )
        })?;
        TestDb::create_on(&admin_url).await
    }

    /// Like [`TestDb::create`], on the server of `admin_url` (a superuser URL).
    pub async fn create_on(admin_url: &str) -> anyhow::Result<TestDb> {
        let admin_url = admin_url.to_owned();
        let name = format!("t_{}", Uuid::new_v4().simple());

        let mut admin = PgConnection::connect(&admin_url)
            .await
            .with_context(|| format!("connecting to TEST_DATABASE_URL ({})", redact(&admin_url)))?;
        // The name is ours (hex digits only), so formatting it into the statement is safe.
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .await
            .with_context(|| format!("creating database {name}"))?;
        admin.close().await?;

        let url = with_database(&admin_url, &name)?;
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(Duration::from_secs(10))
            .connect(&url)
            .await
            .with_context(|| format!("connecting to the new database {name}"))?;
        Ok(TestDb { url, pool })
    }
}

/// `url` with its path (the database name) replaced by `database`, keeping any query string.
fn with_database(url: &str, database: &str) -> anyhow::Result<String> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let Some(authority_start) = base.find("://").map(|i| i + 3) else {
        bail!("TEST_DATABASE_URL is not a URL: {}", redact(url));
    };
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{database}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    Ok(out)
}

/// The URL without its password, for error messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{TestDb, redact, with_database};

    #[test]
    fn replaces_the_database_name() -> anyhow::Result<()> {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t_1")?,
            "postgres://postgres@127.0.0.1:5432/t_1"
        );
        assert_eq!(
            with_database("postgres://u:p@h:1/postgres?sslmode=disable", "t_2")?,
            "postgres://u:p@h:1/t_2?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h", "t_3")?, "postgres://h/t_3");
        assert!(with_database("not a url", "t_4").is_err());
        Ok(())
    }

    #[test]
    fn redacts_the_password() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }

    #[tokio::test]
    async fn each_test_gets_its_own_empty_database() -> anyhow::Result<()> {
        let first = TestDb::create().await?;
        let second = TestDb::create().await?;
        assert_ne!(first.url, second.url);

        let name: String = sqlx::query_scalar("SELECT current_database()")
            .fetch_one(&first.pool)
            .await?;
        assert!(name.starts_with("t_") && name.len() == 34, "{name}");
        assert!(first.url.ends_with(&format!("/{name}")));

        sqlx::query("CREATE TABLE only_in_first (id int)")
            .execute(&first.pool)
            .await?;
        let tables: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_first'")
                .fetch_one(&second.pool)
                .await?;
        assert_eq!(tables, 0);
        Ok(())
    }
}
