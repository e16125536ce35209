//! `query-api member ...`: the team from the command line, through the same functions as the
//! admin API and the dashboard (audited as "command line"). Prints JSON.

use super::invites::{self, DEFAULT_EXPIRES_IN_SECONDS};
use super::{Actor, members, parse_role};
use clap::Subcommand;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// `member ...`.
#[derive(Debug, Subcommand)]
pub enum MemberCommand {
    /// Create an account's owner with a password (MEMBER_PASSWORD, or a random one, printed).
    CreateOwner {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// What they sign in with, e.g. an e-mail address.
        #[arg(long)]
        login: String,
        /// The name pages show (default: the login).
        #[arg(long)]
        name: Option<String>,
    },
    /// Invite a member; prints the single-use link's path and token (shown only this once).
    Invite {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// The login the new member will have.
        #[arg(long)]
        login: String,
        /// owner, admin, moderator or viewer.
        #[arg(long)]
        role: String,
        /// How long the link works (60..=2592000 seconds).
        #[arg(long, default_value_t = DEFAULT_EXPIRES_IN_SECONDS)]
        expires_in_seconds: i64,
    },
    /// List an account's members.
    List {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
    },
    /// Change a member's role (their sessions end).
    SetRole {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// The member's id.
        member_id: Uuid,
        /// owner, admin, moderator or viewer.
        #[arg(long)]
        role: String,
    },
    /// Set a member's password from MEMBER_PASSWORD (their sessions end).
    SetPassword {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// The member's id.
        member_id: Uuid,
    },
    /// Remove a member (their sessions end).
    Remove {
        /// The account's id.
        #[arg(long)]
        account: Uuid,
        /// The member's id.
        member_id: Uuid,
    },
}

/// Runs one `member` command and returns what to print.
pub async fn run(pool: &PgPool, command: MemberCommand) -> anyhow::Result<Value> {
    let actor = Actor::command_line();
    let role = |text: &str| parse_role("role", text).map_err(|e| anyhow::anyhow!(e.message));
    Ok(match command {
        MemberCommand::CreateOwner {
            account,
            login,
            name,
        } => {
            let given = std::env::var("MEMBER_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty());
            let password = given
                .clone()
                .unwrap_or_else(|| super::new_token("")[..24].to_owned());
            let name = name.unwrap_or_else(|| login.clone());
            let owner = super::Role::Owner;
            let member =
                members::create(pool, account, &login, &name, owner, &password, &actor).await?;
            let mut out = serde_json::to_value(member)?;
            if given.is_none() {
                out["password"] = json!(password);
            }
            out
        }
        MemberCommand::Invite {
            account,
            login,
            role: text,
            expires_in_seconds,
        } => serde_json::to_value(
            invites::create(
                pool,
                account,
                &login,
                role(&text)?,
                expires_in_seconds,
                &actor,
            )
            .await?,
        )?,
        MemberCommand::List { account } => {
            json!({ "items": members::list(pool, account).await? })
        }
        MemberCommand::SetRole {
            account,
            member_id,
            role: text,
        } => serde_json::to_value(
            members::set_role(pool, account, member_id, role(&text)?, &actor).await?,
        )?,
        MemberCommand::SetPassword { account, member_id } => {
            let password = std::env::var("MEMBER_PASSWORD")
                .map_err(|_| anyhow::anyhow!("set MEMBER_PASSWORD to the new password"))?;
            let member = members::get(pool, account, member_id).await?;
            members::set_password(pool, &member, &password, &actor).await?;
            json!({ "password_set": member_id })
        }
        MemberCommand::Remove { account, member_id } => {
            members::remove(pool, account, member_id, &actor).await?;
            json!({ "removed": member_id })
        }
    })
}
