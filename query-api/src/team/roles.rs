//! Roles and what each may do: the one place that decides (`docs/dashboard.md`, "Roles").

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A team member's role within their account, from least to most trusted.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads the network's state: overview, servers, staff, events, funnels.
    Viewer,
    /// Also players, punishments, anti-cheat flags and notes.
    Moderator,
    /// Also chat logs, API keys, settings, members, the audit log and alerts.
    Admin,
    /// Also ownership (creating, promoting and removing owners) and account deletion.
    Owner,
}

/// Something a role may or may not do: a page, or an operation on the team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    /// The overview page.
    Overview,
    /// Servers and their charts.
    Servers,
    /// Staff on duty and the leaderboard.
    Staff,
    /// The live event explorer.
    Events,
    /// Funnels.
    Funnels,
    /// Retention and trends.
    Analytics,
    /// Player profiles and histories.
    Players,
    /// Punishments.
    Punishments,
    /// Punishing from the dashboard within the moderator's limits (a ban of at most 30 days).
    Punish,
    /// Punishing and revoking without limit (permanent and longer bans).
    PunishWithoutLimit,
    /// Anti-cheat flags.
    Flags,
    /// Staff notes on players.
    Notes,
    /// Chat logs.
    ChatLogs,
    /// API keys (create, rotate, revoke).
    Keys,
    /// The account's settings (staff groups, sync interval).
    Settings,
    /// Team members and invites (below owner).
    Members,
    /// The audit log.
    Audit,
    /// Alerts: destinations, rules and the delivery log.
    Alerts,
    /// Owners: inviting, promoting to, demoting and removing them.
    Ownership,
    /// Deleting the account.
    AccountDeletion,
}

impl Role {
    /// Every role, least trusted first.
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Moderator, Role::Admin, Role::Owner];

    /// Whether this role may use `area`. The only permission rule: every other check (the
    /// navigation bar, each page, each team operation) asks this function.
    pub fn allows(self, area: Area) -> bool {
        let least = match area {
            Area::Overview
            | Area::Servers
            | Area::Staff
            | Area::Events
            | Area::Funnels
            | Area::Analytics => Role::Viewer,
            Area::Players | Area::Punishments | Area::Punish | Area::Flags | Area::Notes => {
                Role::Moderator
            }
            Area::ChatLogs
            | Area::Keys
            | Area::Settings
            | Area::Members
            | Area::Audit
            | Area::Alerts
            | Area::PunishWithoutLimit => Role::Admin,
            Area::Ownership | Area::AccountDeletion => Role::Owner,
        };
        self >= least
    }

    /// Whether this role may give `role` to someone (or take it away): members need
    /// [`Area::Members`], and owners additionally [`Area::Ownership`].
    pub fn may_manage(self, role: Role) -> bool {
        self.allows(Area::Members) && (role != Role::Owner || self.allows(Area::Ownership))
    }

    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Moderator => "moderator",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    /// Reads the stored and wire form.
    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == text)
    }

    /// The name shown on pages.
    pub fn label(self) -> &'static str {
        match self {
            Role::Viewer => "Viewer",
            Role::Moderator => "Moderator",
            Role::Admin => "Admin",
            Role::Owner => "Owner",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_in_the_readme_holds() {
        let viewer = [
            Area::Overview,
            Area::Servers,
            Area::Staff,
            Area::Events,
            Area::Funnels,
            Area::Analytics,
        ];
        let moderator = [Area::Players, Area::Punishments, Area::Flags, Area::Notes];
        let admin = [
            Area::ChatLogs,
            Area::Keys,
            Area::Settings,
            Area::Members,
            Area::Audit,
            Area::Alerts,
        ];
        let owner = [Area::Ownership, Area::AccountDeletion];
        let tiers: [&[Area]; 4] = [&viewer, &moderator, &admin, &owner];
        for (rank, role) in Role::ALL.into_iter().enumerate() {
            for (tier, areas) in tiers.iter().enumerate() {
                for area in *areas {
                    assert_eq!(role.allows(*area), tier <= rank, "{role} {area:?}");
                }
            }
        }
    }

    #[test]
    fn admins_cannot_make_or_unmake_owners() {
        assert!(Role::Admin.may_manage(Role::Admin));
        assert!(!Role::Admin.may_manage(Role::Owner));
        assert!(Role::Owner.may_manage(Role::Owner));
        assert!(!Role::Moderator.may_manage(Role::Viewer));
    }

    #[test]
    fn roles_round_trip() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("super_admin"), None);
    }
}
