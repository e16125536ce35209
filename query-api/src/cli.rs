//! The command line: `serve` (the default), and account and key management that goes through
//! the same [`KeyStore`] as the admin API. Management commands print JSON.

use crate::key_store::{KeyStore, check_new_key};
use crate::startup::{connect_postgres, key_bucket};
use clap::{Parser, Subcommand};
use serde::Serialize;
use serde_json::json;
use shared::config::{CommonConfig, Vars};
use uuid::Uuid;

/// Warden query-api: dashboard, public and admin reads, and the admin API.
#[derive(Debug, Parser)]
#[command(name = "query-api", version)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// A top-level command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve HTTP (BIND_ADDR, DATABASE_URL, NATS_URL, ADMIN_KEY, ...).
    Serve,
    /// Manage accounts (DATABASE_URL, NATS_URL).
    #[command(subcommand)]
    Accounts(AccountsCommand),
    /// Manage API keys (DATABASE_URL, NATS_URL, KEY_BUCKET).
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage an account's dashboard team (DATABASE_URL).
    #[command(subcommand)]
    Member(crate::team::cli::MemberCommand),
}

/// `accounts ...`.
#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Create an account.
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
    },
    /// List every account.
    List,
}

/// `keys ...`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Issue a key; prints its secret (shown only this once).
    Create {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// `plugin` or `dashboard`.
        #[arg(long)]
        kind: String,
        /// Free-text label.
        #[arg(long)]
        label: Option<String>,
    },
    /// List an account's keys (no secrets).
    List {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
    },
    /// Replace a key; the old one works for the grace period.
    Rotate {
        /// The key's id.
        key_id: Uuid,
        /// Seconds the old key keeps working (0..=604800).
        #[arg(long, default_value_t = 0)]
        grace_seconds: i64,
    },
    /// Revoke a key now.
    Revoke {
        /// The key's id.
        key_id: Uuid,
    },
}

/// Connects to PostgreSQL and the key bucket from the environment.
async fn key_store_from_env() -> anyhow::Result<KeyStore> {
    let vars = Vars::process();
    let common = CommonConfig::from_vars(&vars)?;
    let pool = connect_postgres(&vars.required("DATABASE_URL")?).await?;
    let nats = shared::nats::connect("query-api-cli", &common.nats_url).await?;
    let bucket = key_bucket(&async_nats::jetstream::new(nats.client), &common.event_log).await?;
    Ok(KeyStore::new(pool, bucket))
}

fn print(value: &impl Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Runs a management command (anything but `serve`).
pub async fn run(command: Command) -> anyhow::Result<()> {
    if let Command::Member(command) = command {
        let pool = connect_postgres(&Vars::process().required("DATABASE_URL")?).await?;
        return print(&crate::team::cli::run(&pool, command).await?);
    }
    let store = key_store_from_env().await?;
    match command {
        Command::Serve | Command::Member(_) => {
            anyhow::bail!("`serve` is not a management command")
        }
        Command::Accounts(AccountsCommand::Create { name }) => {
            print(&store.create_account(&name).await?)
        }
        Command::Accounts(AccountsCommand::List) => {
            print(&json!({ "items": store.list_accounts().await? }))
        }
        Command::Keys(KeysCommand::Create {
            account,
            kind,
            label,
        }) => {
            let kind = check_new_key(&kind, label.as_deref())?;
            print(&store.create_key(account, kind, label).await?)
        }
        Command::Keys(KeysCommand::List { account }) => {
            print(&json!({ "items": store.list_keys(account).await? }))
        }
        Command::Keys(KeysCommand::Rotate {
            key_id,
            grace_seconds,
        }) => print(&store.rotate_key(key_id, grace_seconds).await?),
        Command::Keys(KeysCommand::Revoke { key_id }) => {
            store.revoke_key(key_id).await?;
            print(&json!({ "revoked": key_id }))
        }
    }
}
