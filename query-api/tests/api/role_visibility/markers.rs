//! The markers: texts only some roles may see, and the roles in rank order.

use uuid::Uuid;

/// The roles, least trusted first (their index is their rank below).
pub(super) const ROLES: [&str; 4] = ["viewer", "moderator", "admin", "owner"];
pub(super) const MODERATOR: usize = 1;
pub(super) const ADMIN: usize = 2;

/// A text only some roles may see.
#[derive(Debug, Clone)]
pub(crate) struct Secret {
    /// The marker itself: letters and digits, so it reads the same in HTML, JSON and CSV.
    pub(crate) text: String,
    /// What it is, for the failure message.
    pub(crate) what: &'static str,
    /// The least role (index in [`ROLES`]) that may see it.
    pub(crate) least: usize,
}

/// One set of markers: a chat line, a command, a punishment's reason, a revoke's reason, an
/// anti-cheat check's name and a note's text.
#[derive(Debug, Clone)]
pub(super) struct Secrets {
    pub(super) chat: Secret,
    pub(super) command: Secret,
    pub(super) reason: Secret,
    pub(super) revoke: Secret,
    pub(super) flag: Secret,
    pub(super) note: Secret,
}

impl Secrets {
    pub(super) fn new(tag: &str) -> Secrets {
        let secret = |what: &'static str, least: usize| Secret {
            text: format!("{tag}{}{}", what.replace(' ', ""), Uuid::new_v4().simple()),
            what,
            least,
        };
        Secrets {
            chat: secret("chat line", ADMIN),
            command: secret("command", ADMIN),
            reason: secret("punishment reason", MODERATOR),
            revoke: secret("revoke reason", MODERATOR),
            flag: secret("flag check", MODERATOR),
            note: secret("note", MODERATOR),
        }
    }

    pub(super) fn all(&self) -> [&Secret; 6] {
        [
            &self.chat,
            &self.command,
            &self.reason,
            &self.revoke,
            &self.flag,
            &self.note,
        ]
    }
}
