//! Team members: create (an owner, or through an invite), list, change a role, remove, change a
//! password. A role change, a removal or a new password ends the member's sessions in the same
//! transaction.

use super::audit::{self, AuditEntry};
use super::{Actor, Role, TeamError, passwords, sessions};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use utoipa::ToSchema;
use uuid::Uuid;

/// A person who may sign in to an account's dashboard.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Member {
    /// The member's id (UUIDv7).
    pub id: Uuid,
    /// The account they belong to.
    pub account_id: Uuid,
    /// What they sign in with (lower-case, unique across the deployment).
    pub login: String,
    /// The name pages show.
    pub display_name: String,
    /// What they may do.
    pub role: Role,
    /// When they joined.
    pub created_at: DateTime<Utc>,
}

/// A `team_members` row (the role as stored).
#[derive(Debug, sqlx::FromRow)]
struct MemberRow {
    id: Uuid,
    account_id: Uuid,
    login: String,
    display_name: String,
    role: String,
    created_at: DateTime<Utc>,
}

pub(crate) const MEMBER_COLUMNS: &str = "id, account_id, login, display_name, role, created_at";

impl TryFrom<MemberRow> for Member {
    type Error = TeamError;

    fn try_from(row: MemberRow) -> Result<Self, TeamError> {
        let role = Role::parse(&row.role).ok_or_else(|| {
            TeamError::Corrupt(format!("member {} has role {}", row.id, row.role))
        })?;
        Ok(Member {
            id: row.id,
            account_id: row.account_id,
            login: row.login,
            display_name: row.display_name,
            role,
            created_at: row.created_at,
        })
    }
}

/// What a new member is made of (already normalized: see `normalize_login`).
#[derive(Debug)]
pub struct NewMember {
    /// Lower-cased login.
    pub login: String,
    /// Trimmed display name.
    pub display_name: String,
    /// Their role.
    pub role: Role,
    /// The PHC string of their password.
    pub password_hash: String,
}

/// Inserts a member inside the caller's transaction; a taken login is [`TeamError::LoginTaken`].
pub(crate) async fn insert(
    conn: &mut PgConnection,
    account_id: Uuid,
    new: &NewMember,
) -> Result<Member, TeamError> {
    let row = sqlx::query_as::<_, MemberRow>(&format!(
        "INSERT INTO team_members (id, account_id, login, display_name, role, password_hash) \
         SELECT $1, a.id, $3, $4, $5, $6 FROM accounts a WHERE a.id = $2 \
         ON CONFLICT (login) DO NOTHING RETURNING {MEMBER_COLUMNS}"
    ))
    .bind(Uuid::now_v7())
    .bind(account_id)
    .bind(&new.login)
    .bind(&new.display_name)
    .bind(new.role.as_str())
    .bind(&new.password_hash)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(row) => row.try_into(),
        None => {
            let account: bool =
                sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)")
                    .bind(account_id)
                    .fetch_one(&mut *conn)
                    .await?;
            Err(if account {
                TeamError::LoginTaken(new.login.clone())
            } else {
                TeamError::AccountNotFound(account_id)
            })
        }
    }
}

/// Creates a member directly (the admin API and the command line: an account's first owner).
pub async fn create(
    pool: &PgPool,
    account_id: Uuid,
    login: &str,
    display_name: &str,
    role: Role,
    password: &str,
    actor: &Actor,
) -> Result<Member, TeamError> {
    let mut errors = Vec::new();
    let login = super::normalize_login("login", login).map_err(|e| errors.push(e));
    let name =
        super::normalize_display_name("display_name", display_name).map_err(|e| errors.push(e));
    let _ = passwords::check_password("password", password).map_err(|e| errors.push(e));
    let (Ok(login), Ok(display_name)) = (login, name) else {
        return Err(TeamError::Rejected(errors));
    };
    if !errors.is_empty() {
        return Err(TeamError::Rejected(errors));
    }
    actor.require_manage(role)?;
    let password_hash = passwords::hash(password.to_owned()).await?;
    let mut tx = pool.begin().await?;
    let new = NewMember {
        login,
        display_name,
        role,
        password_hash,
    };
    let member = insert(&mut tx, account_id, &new).await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(account_id),
            actor,
            action: "member_created",
            target: Some(member.login.clone()),
            detail: json!({ "role": role }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(member)
}

/// The account's members, oldest first.
pub async fn list(pool: &PgPool, account_id: Uuid) -> Result<Vec<Member>, TeamError> {
    let rows = sqlx::query_as::<_, MemberRow>(&format!(
        "SELECT {MEMBER_COLUMNS} FROM team_members WHERE account_id = $1 ORDER BY created_at, id"
    ))
    .bind(account_id)
    .fetch_all(pool)
    .await?;
    rows.into_iter().map(Member::try_from).collect()
}

/// Locks the account's owners and the member, and checks the actor may touch them. Returns the
/// member and how many owners the account has.
async fn lock_for_change(
    conn: &mut PgConnection,
    account_id: Uuid,
    member_id: Uuid,
    actor: &Actor,
) -> Result<(Member, usize), TeamError> {
    // Locking every owner row (and the target) serializes two owners demoting each other at
    // once: the second sees the first's change and the last owner stays.
    let rows = sqlx::query_as::<_, MemberRow>(&format!(
        "SELECT {MEMBER_COLUMNS} FROM team_members \
         WHERE account_id = $1 AND (role = 'owner' OR id = $2) ORDER BY id FOR UPDATE"
    ))
    .bind(account_id)
    .bind(member_id)
    .fetch_all(&mut *conn)
    .await?;
    let owners = rows.iter().filter(|r| r.role == "owner").count();
    let member: Member = rows
        .into_iter()
        .find(|r| r.id == member_id)
        .ok_or(TeamError::MemberNotFound(member_id))?
        .try_into()?;
    actor.require_manage(member.role)?;
    Ok((member, owners))
}

/// Gives a member another role; their sessions end (they sign in again under the new role).
pub async fn set_role(
    pool: &PgPool,
    account_id: Uuid,
    member_id: Uuid,
    role: Role,
    actor: &Actor,
) -> Result<Member, TeamError> {
    actor.require_manage(role)?;
    let mut tx = pool.begin().await?;
    let (member, owners) = lock_for_change(&mut tx, account_id, member_id, actor).await?;
    if member.role == Role::Owner && role != Role::Owner && owners <= 1 {
        return Err(TeamError::LastOwner);
    }
    sqlx::query("UPDATE team_members SET role = $2, updated_at = now() WHERE id = $1")
        .bind(member_id)
        .bind(role.as_str())
        .execute(&mut *tx)
        .await?;
    sessions::end_all(&mut tx, member_id).await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(account_id),
            actor,
            action: "member_role_changed",
            target: Some(member.login.clone()),
            detail: json!({ "from": member.role, "to": role }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Member { role, ..member })
}

/// Removes a member; their sessions end with the row (ON DELETE CASCADE).
pub async fn remove(
    pool: &PgPool,
    account_id: Uuid,
    member_id: Uuid,
    actor: &Actor,
) -> Result<Member, TeamError> {
    let mut tx = pool.begin().await?;
    let (member, owners) = lock_for_change(&mut tx, account_id, member_id, actor).await?;
    if member.role == Role::Owner && owners <= 1 {
        return Err(TeamError::LastOwner);
    }
    sqlx::query("DELETE FROM team_members WHERE id = $1")
        .bind(member_id)
        .execute(&mut *tx)
        .await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(account_id),
            actor,
            action: "member_removed",
            target: Some(member.login.clone()),
            detail: json!({ "role": member.role }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(member)
}

/// Sets a member's password (their own, or the operator's reset); every session of theirs ends.
pub async fn set_password(
    pool: &PgPool,
    member: &Member,
    password: &str,
    actor: &Actor,
) -> Result<(), TeamError> {
    passwords::check_password("password", password)?;
    let password_hash = passwords::hash(password.to_owned()).await?;
    let mut tx = pool.begin().await?;
    sqlx::query("UPDATE team_members SET password_hash = $2, updated_at = now() WHERE id = $1")
        .bind(member.id)
        .bind(password_hash)
        .execute(&mut *tx)
        .await?;
    sessions::end_all(&mut tx, member.id).await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            account_id: Some(member.account_id),
            actor,
            action: "password_changed",
            target: Some(member.login.clone()),
            detail: json!({}),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The member with `login` and their password hash, for sign-in.
pub(crate) async fn find_for_sign_in(
    pool: &PgPool,
    login: &str,
) -> Result<Option<(Member, String)>, TeamError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        member: MemberRow,
        password_hash: String,
    }
    let row = sqlx::query_as::<_, Row>(&format!(
        "SELECT {MEMBER_COLUMNS}, password_hash FROM team_members WHERE login = $1"
    ))
    .bind(login)
    .fetch_optional(pool)
    .await?;
    row.map(|row| Ok((row.member.try_into()?, row.password_hash)))
        .transpose()
}

/// A member of the account by id.
pub async fn get(pool: &PgPool, account_id: Uuid, member_id: Uuid) -> Result<Member, TeamError> {
    sqlx::query_as::<_, MemberRow>(&format!(
        "SELECT {MEMBER_COLUMNS} FROM team_members WHERE account_id = $1 AND id = $2"
    ))
    .bind(account_id)
    .bind(member_id)
    .fetch_optional(pool)
    .await?
    .ok_or(TeamError::MemberNotFound(member_id))?
    .try_into()
}
