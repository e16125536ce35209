//! What a reader may see of the records themselves, whatever page, partial, stream or analysis
//! shows them: the one rule behind every view that shows records (`docs/dashboard.md`, "Roles").
//!
//! [`Role::allows`] decides which pages a member may open. Some records are shown on pages
//! of several areas: a chat line is an event on the Events page and a line of the chat logs;
//! a ban is an event, a point on a trend and a row of the punishment log. Their *values* (the
//! chat text, the reason, a flag's check) belong to the area of the page that owns them
//! ([`owner`]), and a reader sees them only where that area is allowed, on every view:
//!
//! | records | their values need |
//! |---|---|
//! | chat lines and commands (`chat_*` events) | [`Area::ChatLogs`] (admin and up) |
//! | punishments and revokes (`punish_*` events) | [`Area::Punishments`] (moderator and up) |
//! | anti-cheat flags (`anticheat_flag`) | [`Area::Flags`] (moderator and up) |
//! | anything else (custom events, sessions, rank changes) | the page showing them |
//!
//! Where the values are withheld, the record still counts: a viewer sees that a chat line was
//! sent (its time, player and name on the Events page, its count on a trend), never what it
//! said. Concretely:
//! - an event's properties read as `{}` ([`Visibility::event`], [`Visibility::properties`]);
//! - a breakdown by a property of such records (a trend's series labels, a funnel's rows) is
//!   refused ([`Visibility::breakdown`]), since its labels are the values;
//! - the Overview's activity leaves out punishments and flags altogether
//!   ([`Visibility::shows`]).
//!
//! Dashboard keys are not members: they read everything their account holds ([`Visibility::KEY`],
//! `shared/docs/api-contract.md`).

use super::{Area, Role};
use shared::timeline::TimelineEvent;

/// The name the Overview's activity and the trends give anti-cheat flags (they have no
/// timeline event of their own).
pub const FLAG: &str = "anticheat_flag";
/// The prefix of chat lines' and commands' events.
pub const CHAT: &str = "chat_";
/// The prefix of punishments' and revokes' events.
pub const PUNISHMENTS: &str = "punish_";

/// Whose view a read is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Visibility {
    /// The member's role; `None` for a dashboard key.
    role: Option<Role>,
}

/// The area that owns the values of the records named `name` (an event name, or [`FLAG`]),
/// if any: see the module's table.
pub fn owner(name: &str) -> Option<Area> {
    if name.starts_with(CHAT) {
        Some(Area::ChatLogs)
    } else if name.starts_with(PUNISHMENTS) {
        Some(Area::Punishments)
    } else if name == FLAG {
        Some(Area::Flags)
    } else {
        None
    }
}

/// A breakdown refused because its labels would be values the reader may not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Withheld {
    /// The area whose values they are.
    pub area: Area,
    /// The reader's role.
    pub role: Role,
}

impl Withheld {
    /// What the reader is told.
    pub fn message(&self) -> String {
        let (what, who) = match self.area {
            Area::ChatLogs => ("chat lines and commands", "admins and owners"),
            Area::Punishments => ("punishments", "moderators and up"),
            Area::Flags => ("anti-cheat flags", "moderators and up"),
            _ => ("these records", "other roles"),
        };
        format!(
            "the values of {what} are shown to {who} only, not to the {} role: counts are \
             available without a property breakdown",
            self.role.label()
        )
    }
}

impl Visibility {
    /// A dashboard key: everything of its account.
    pub const KEY: Visibility = Visibility { role: None };

    /// A member with `role`.
    pub fn member(role: Role) -> Visibility {
        Visibility { role: Some(role) }
    }

    /// Whether the reader may use `area` (a key may use every reading area).
    pub fn allows(self, area: Area) -> bool {
        self.role.is_none_or(|role| role.allows(area))
    }

    /// Whether the reader sees the values of the records named `name` ([`owner`]).
    pub fn shows(self, name: &str) -> bool {
        owner(name).is_none_or(|area| self.allows(area))
    }

    /// The properties (JSON text) of an event named `name` as this reader sees them: as
    /// stored, or `{}` when withheld.
    pub fn properties<'a>(self, name: &str, properties: &'a str) -> &'a str {
        if self.shows(name) { properties } else { "{}" }
    }

    /// `event` as this reader sees it: itself, or a copy without its properties.
    pub fn event(self, event: &TimelineEvent) -> Option<TimelineEvent> {
        (!self.shows(&event.name)).then(|| TimelineEvent {
            properties: "{}".to_owned(),
            ..event.clone()
        })
    }

    /// Whether a breakdown by a property of the records named `names` may be shown: refused
    /// when any of them has values the reader may not see.
    pub fn breakdown<'a>(self, names: impl IntoIterator<Item = &'a str>) -> Result<(), Withheld> {
        let Some(role) = self.role else {
            return Ok(());
        };
        match names.into_iter().find_map(owner) {
            Some(area) if !role.allows(area) => Err(Withheld { area, role }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_roles_table() {
        let shown = |role, name| Visibility::member(role).shows(name);
        for role in Role::ALL {
            assert_eq!(shown(role, "chat_message"), role >= Role::Admin, "{role}");
            assert_eq!(shown(role, "chat_command"), role >= Role::Admin, "{role}");
            assert_eq!(shown(role, "punish_ban"), role >= Role::Moderator, "{role}");
            assert_eq!(shown(role, "punish_revoke"), role >= Role::Moderator);
            assert_eq!(shown(role, FLAG), role >= Role::Moderator, "{role}");
            for open in ["session_join", "rank_change", "quest_completed"] {
                assert!(shown(role, open), "{role} {open}");
            }
        }
        assert!(Visibility::KEY.shows("chat_message") && Visibility::KEY.shows(FLAG));
    }

    #[test]
    fn withheld_values_read_as_an_empty_object() {
        let viewer = Visibility::member(Role::Viewer);
        let text = r#"{"message":"hi"}"#;
        assert_eq!(viewer.properties("chat_message", text), "{}");
        assert_eq!(viewer.properties("session_join", text), text);
        assert_eq!(Visibility::KEY.properties("chat_message", text), text);
        assert_eq!(
            Visibility::member(Role::Admin).properties("chat_message", text),
            text
        );
    }

    #[test]
    fn breakdowns_of_withheld_values_are_refused() {
        let viewer = Visibility::member(Role::Viewer);
        assert_eq!(
            viewer.breakdown(["session_join", "punish_ban"]),
            Err(Withheld {
                area: Area::Punishments,
                role: Role::Viewer
            })
        );
        assert!(viewer.breakdown(["session_join", "quest_done"]).is_ok());
        let moderator = Visibility::member(Role::Moderator);
        assert!(moderator.breakdown(["punish_ban", FLAG]).is_ok());
        assert!(moderator.breakdown(["chat_message"]).is_err());
        assert!(Visibility::KEY.breakdown(["chat_message"]).is_ok());
    }
}
