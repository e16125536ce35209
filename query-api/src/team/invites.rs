//! Invites: a single-use link (`/invite/{token}`) that makes its holder a member with the
//! invite's login and role once they choose a password. The token is shown once; only its
//! SHA-256 is stored. Accepting marks the invite used in the same statement that checks it, so
//! two tabs racing on one link make one member.

use super::audit::{self, AuditEntry};
use super::members::{self, Member, NewMember};
use super::{Actor, Role, TeamError, normalize_display_name, normalize_login, passwords};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use shared::keys::hash_secret;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

/// What every invite token starts with.
const TOKEN_PREFIX: &str = "wdn_invite_";
/// An invite's lifetime when none is asked for: 7 days.
pub const DEFAULT_EXPIRES_IN_SECONDS: i64 = 7 * 24 * 3600;
/// The longest an invite may live: 30 days.
pub const MAX_EXPIRES_IN_SECONDS: i64 = 30 * 24 * 3600;

/// An invite just made: the only time its token is shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IssuedInvite {
    /// The invite's id.
    pub id: Uuid,
    /// The login the new member will sign in with.
    pub login: String,
    /// The role they will have.
    pub role: Role,
    /// The secret token. Not retrievable later.
    pub token: String,
    /// The link to send, relative to the dashboard's base URL: `/invite/{token}`.
    pub path: String,
    /// When the link stops working.
    pub expires_at: DateTime<Utc>,
}

/// An open invite as listed (never its token).
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct InviteSummary {
    /// The invite's id.
    pub id: Uuid,
    /// The login it is for.
    pub login: String,
    /// The role it gives.
    #[sqlx(try_from = "String")]
    #[schema(value_type = Role)]
    pub role: RoleText,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
}

/// A role read from a row (an unknown one reads as viewer: the CHECK makes that impossible).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(transparent)]
pub struct RoleText(pub Role);

impl From<String> for RoleText {
    fn from(text: String) -> Self {
        RoleText(Role::parse(&text).unwrap_or(Role::Viewer))
    }
}

/// Makes an invite for `login` with `role`, valid for `expires_in_seconds` (60..=30 days).
pub async fn create(
    pool: &PgPool,
    account_id: Uuid,
    login: &str,
    role: Role,
    expires_in_seconds: i64,
    actor: &Actor,
) -> Result<IssuedInvite, TeamError> {
    let login = normalize_login("login", login)?;
    if !(60..=MAX_EXPIRES_IN_SECONDS).contains(&expires_in_seconds) {
        return Err(shared::validation::FieldError {
            field: "expires_in_seconds".into(),
            code: "out_of_range".into(),
            message: format!("must be 60 to {MAX_EXPIRES_IN_SECONDS}"),
        }
        .into());
    }
    actor.require_manage(role)?;
    let taken: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM team_members WHERE login = $1)")
            .bind(&login)
            .fetch_one(pool)
            .await?;
    if taken {
        return Err(TeamError::LoginTaken(login));
    }
    let token = super::new_token(TOKEN_PREFIX);
    let id = Uuid::now_v7();
    let mut tx = pool.begin().await?;
    let expires_at: Option<DateTime<Utc>> = sqlx::query_scalar(
        "INSERT INTO team_invites (id, account_id, login, role, token_hash, invited_by, expires_at) \
         SELECT $1, a.id, $3, $4, $5, $6, now() + make_interval(secs => $7) \
         FROM accounts a WHERE a.id = $2 RETURNING expires_at",
    )
    .bind(id)
    .bind(account_id)
    .bind(&login)
    .bind(role.as_str())
    .bind(hash_secret(&token))
    .bind(actor.member_id())
    .bind(expires_in_seconds as f64)
    .fetch_optional(&mut *tx)
    .await?;
    let expires_at = expires_at.ok_or(TeamError::AccountNotFound(account_id))?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(account_id),
            actor,
            action: "member_invited",
            target: Some(login.clone()),
            detail: json!({ "role": role, "expires_at": expires_at }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(IssuedInvite {
        id,
        login,
        role,
        path: format!("/invite/{token}"),
        token,
        expires_at,
    })
}

/// The account's open invites (not used, withdrawn or expired), newest first.
pub async fn list_open(pool: &PgPool, account_id: Uuid) -> Result<Vec<InviteSummary>, TeamError> {
    Ok(sqlx::query_as::<_, InviteSummary>(
        "SELECT id, login, role, created_at, expires_at FROM team_invites \
         WHERE account_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL \
           AND expires_at > now() ORDER BY created_at DESC, id DESC",
    )
    .bind(account_id)
    .fetch_all(pool)
    .await?)
}

/// What the invite page shows before the password is chosen.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InviteView {
    /// The login the member will have.
    pub login: String,
    /// The role.
    #[sqlx(try_from = "String")]
    pub role: RoleText,
    /// The account's name.
    pub account_name: String,
}

/// The open invite behind `token`, or [`TeamError::InviteUnusable`].
pub async fn peek(pool: &PgPool, token: &str) -> Result<InviteView, TeamError> {
    sqlx::query_as::<_, InviteView>(
        "SELECT i.login, i.role, a.name AS account_name FROM team_invites i \
         JOIN accounts a ON a.id = i.account_id WHERE i.token_hash = $1 \
           AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()",
    )
    .bind(hash_secret(token))
    .fetch_optional(pool)
    .await?
    .ok_or(TeamError::InviteUnusable)
}

/// Uses the invite behind `token`: makes the member with `display_name` and `password`.
pub async fn accept(
    pool: &PgPool,
    token: &str,
    display_name: &str,
    password: &str,
    ip_hash: Option<String>,
) -> Result<Member, TeamError> {
    let mut errors = Vec::new();
    let display_name = normalize_display_name("display_name", display_name)
        .map_err(|e| errors.push(e))
        .unwrap_or_default();
    let _ = passwords::check_password("password", password).map_err(|e| errors.push(e));
    if !errors.is_empty() {
        return Err(TeamError::Rejected(errors));
    }
    peek(pool, token).await?;
    let password_hash = passwords::hash(password.to_owned()).await?;
    let mut tx = pool.begin().await?;
    #[derive(sqlx::FromRow)]
    struct Used {
        account_id: Uuid,
        login: String,
        role: String,
    }
    let used = sqlx::query_as::<_, Used>(
        "UPDATE team_invites SET accepted_at = now() WHERE token_hash = $1 \
           AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now() \
         RETURNING account_id, login, role",
    )
    .bind(hash_secret(token))
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(TeamError::InviteUnusable)?;
    let role = Role::parse(&used.role)
        .ok_or_else(|| TeamError::Corrupt(format!("invite role {}", used.role)))?;
    let new = NewMember {
        login: normalize_login("login", &used.login)?,
        display_name,
        role,
        password_hash,
    };
    let member = members::insert(&mut tx, used.account_id, &new).await?;
    let actor = Actor {
        ip_hash,
        ..Actor::member(&member, None)
    };
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(used.account_id),
            actor: &actor,
            action: "invite_accepted",
            target: Some(member.login.clone()),
            detail: json!({ "role": role }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(member)
}

/// Withdraws an open invite.
pub async fn revoke(
    pool: &PgPool,
    account_id: Uuid,
    invite_id: Uuid,
    actor: &Actor,
) -> Result<(), TeamError> {
    let mut tx = pool.begin().await?;
    #[derive(sqlx::FromRow)]
    struct Revoked {
        login: String,
        role: String,
    }
    let revoked = sqlx::query_as::<_, Revoked>(
        "UPDATE team_invites SET revoked_at = now() WHERE id = $1 AND account_id = $2 \
           AND accepted_at IS NULL AND revoked_at IS NULL RETURNING login, role",
    )
    .bind(invite_id)
    .bind(account_id)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(TeamError::InviteNotFound(invite_id))?;
    actor.require_manage(Role::parse(&revoked.role).unwrap_or(Role::Owner))?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(account_id),
            actor,
            action: "invite_revoked",
            target: Some(revoked.login),
            detail: json!({ "role": revoked.role }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
