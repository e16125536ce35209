//! The people of an account: members with a role, invites, passwords, sign-in sessions and the
//! audit log. The admin API, the command line and the dashboard's pages all go through these
//! functions, so a rule (who may make an owner, the last owner stays) holds on every path.

pub mod audit;
pub mod cli;
pub mod invites;
pub mod members;
pub mod passwords;
pub mod roles;
pub mod sessions;
pub mod visibility;

pub use members::Member;
pub use roles::{Area, Role};
pub use visibility::Visibility;

use shared::validation::{FieldError, FieldErrors};
use uuid::Uuid;

/// Why a team operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// No account has that id.
    #[error("there is no account with id {0}")]
    AccountNotFound(Uuid),
    /// No member of the account has that id.
    #[error("there is no member with id {0} in this account")]
    MemberNotFound(Uuid),
    /// No open invite of the account has that id.
    #[error("there is no open invite with id {0} in this account")]
    InviteNotFound(Uuid),
    /// The invite link is unknown, used, withdrawn or expired (one answer for all four).
    #[error("this invite link is not valid: it was used, withdrawn or has expired")]
    InviteUnusable,
    /// Someone already signs in with that login.
    #[error("the login '{0}' is taken")]
    LoginTaken(String),
    /// The caller's role does not allow it.
    #[error("{0}")]
    NotAllowed(String),
    /// The change would leave the account without an owner.
    #[error("an account keeps at least one owner: make another member owner first")]
    LastOwner,
    /// The input breaks a rule.
    #[error("invalid input")]
    Rejected(Vec<FieldError>),
    /// A stored row holds something this build cannot read.
    #[error("stored team data is invalid: {0}")]
    Corrupt(String),
    /// Hashing a password failed (should not happen).
    #[error("password hashing failed: {0}")]
    Hashing(String),
    /// PostgreSQL failed.
    #[error("team query failed")]
    Database(#[from] sqlx::Error),
}

impl From<FieldError> for TeamError {
    fn from(error: FieldError) -> Self {
        TeamError::Rejected(vec![error])
    }
}

/// Who is acting, for permission checks and the audit log.
#[derive(Debug, Clone)]
pub enum Who {
    /// The operator: the admin key (`"admin key"`) or the command line (`"command line"`).
    Operator(&'static str),
    /// Someone not signed in, named by the login they tried (a sign-in attempt).
    Visitor(String),
    /// A signed-in member.
    Member {
        /// The member's id.
        id: Uuid,
        /// Their login, as the audit log shows them.
        login: String,
        /// Their role now.
        role: Role,
    },
}

/// Who is acting, and from where (an HMAC of the client's IP, never the address).
#[derive(Debug, Clone)]
pub struct Actor {
    /// Who.
    pub who: Who,
    /// The client IP's keyed hash, when there is a client.
    pub ip_hash: Option<String>,
}

impl Actor {
    /// The operator through the admin API.
    pub fn admin_key() -> Actor {
        Actor {
            who: Who::Operator("admin key"),
            ip_hash: None,
        }
    }

    /// The operator at the command line.
    pub fn command_line() -> Actor {
        Actor {
            who: Who::Operator("command line"),
            ip_hash: None,
        }
    }

    /// A signed-in member.
    pub fn member(member: &Member, ip_hash: Option<String>) -> Actor {
        Actor {
            who: Who::Member {
                id: member.id,
                login: member.login.clone(),
                role: member.role,
            },
            ip_hash,
        }
    }

    /// Whether the actor may give or take away `role`. The operator may do anything.
    pub fn may_manage(&self, role: Role) -> bool {
        match &self.who {
            Who::Operator(_) => true,
            Who::Visitor(_) => false,
            Who::Member { role: own, .. } => own.may_manage(role),
        }
    }

    /// Refuses unless the actor may give or take away `role`.
    pub fn require_manage(&self, role: Role) -> Result<(), TeamError> {
        if self.may_manage(role) {
            Ok(())
        } else if role == Role::Owner {
            Err(TeamError::NotAllowed(
                "only an owner can make, change or remove an owner".into(),
            ))
        } else {
            Err(TeamError::NotAllowed(
                "only owners and admins manage the team".into(),
            ))
        }
    }

    /// The member acting, if one is.
    pub fn member_id(&self) -> Option<Uuid> {
        match &self.who {
            Who::Member { id, .. } => Some(*id),
            Who::Operator(_) | Who::Visitor(_) => None,
        }
    }

    /// How the audit log names the actor.
    pub fn label(&self) -> &str {
        match &self.who {
            Who::Operator(label) => label,
            Who::Visitor(login) | Who::Member { login, .. } => login,
        }
    }
}

/// A login, lower-cased and trimmed, or why it cannot be one (3..=254 characters, no spaces or
/// control characters; an e-mail address is the usual choice but not required).
pub fn normalize_login(field: &str, login: &str) -> Result<String, FieldError> {
    let login = login.trim().to_lowercase();
    let mut errors = FieldErrors::new();
    errors.text(field, Some(&login), 3, 254);
    if login.chars().any(|c| c.is_whitespace() || c.is_control()) {
        errors.push(field, "invalid_login", "must not contain spaces");
    }
    match errors.into_result() {
        Ok(()) => Ok(login),
        Err(mut errors) => Err(errors.remove(0)),
    }
}

/// A display name, trimmed (1..=100 characters).
pub fn normalize_display_name(field: &str, name: &str) -> Result<String, FieldError> {
    let name = name.trim().to_owned();
    let mut errors = FieldErrors::new();
    errors.text(field, Some(&name), 1, 100);
    match errors.into_result() {
        Ok(()) => Ok(name),
        Err(mut errors) => Err(errors.remove(0)),
    }
}

/// Reads a role's wire form, or says which ones exist.
pub fn parse_role(field: &str, text: &str) -> Result<Role, FieldError> {
    Role::parse(text).ok_or_else(|| FieldError {
        field: field.to_owned(),
        code: "invalid_role".to_owned(),
        message: "must be owner, admin, moderator or viewer".to_owned(),
    })
}

/// 256 random bits, hex, with a prefix that says what the token is for.
pub(crate) fn new_token(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_lower_cased_and_bounded() {
        assert_eq!(
            normalize_login("login", " Owner@Demo.Local ").ok(),
            Some("owner@demo.local".to_owned())
        );
        assert!(normalize_login("login", "ab").is_err());
        assert!(normalize_login("login", "a b@c").is_err());
        assert!(normalize_login("login", &"x".repeat(255)).is_err());
    }
}
