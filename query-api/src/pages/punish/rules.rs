//! Who may punish what from the dashboard (the roles table in `docs/dashboard.md`): a
//! moderator warns, kicks, mutes for any length and bans for at most 30 days, and revokes what
//! they could have issued; an admin or owner does everything. Each rule asks
//! [`Role::allows`], the one permission rule.

use crate::team::{Area, Role};
use chrono::{DateTime, Duration, Utc};
use shared::records::PunishmentType;

/// The longest ban a moderator may issue or revoke.
pub const MODERATOR_BAN_DAYS: i64 = 30;

/// Why `role` may not issue a `kind` lasting `length` (None: permanent), or Ok.
pub(super) fn may_issue(
    role: Role,
    kind: PunishmentType,
    length: Option<Duration>,
) -> Result<(), String> {
    if !role.allows(Area::Punish) {
        return Err(format!("the {} role cannot punish players", role.label()));
    }
    if role.allows(Area::PunishWithoutLimit) || kind != PunishmentType::Ban {
        return Ok(());
    }
    match length {
        Some(length) if length <= Duration::days(MODERATOR_BAN_DAYS) => Ok(()),
        _ => Err(format!(
            "a moderator may ban for at most {MODERATOR_BAN_DAYS} days; an admin can issue a \
             longer or permanent ban"
        )),
    }
}

/// Why `role` may not revoke a `kind` issued at `issued_at` and ending at `expires_at`, or Ok.
pub(super) fn may_revoke(
    role: Role,
    kind: PunishmentType,
    issued_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(), String> {
    let length = expires_at.map(|end| end - issued_at);
    may_issue(role, kind, length).map_err(|why| {
        if role.allows(Area::Punish) {
            format!("only an admin can revoke this: {why}")
        } else {
            why
        }
    })
}

/// Reads the form's type: a ban, mute, kick or warning.
pub(super) fn kind(text: &str) -> Option<PunishmentType> {
    match text {
        "ban" => Some(PunishmentType::Ban),
        "mute" => Some(PunishmentType::Mute),
        "kick" => Some(PunishmentType::Kick),
        "warning" => Some(PunishmentType::Warning),
        _ => None,
    }
}

/// The lengths the form offers: its value, its label and the length (None: permanent).
pub(super) const LENGTHS: [(&str, &str, Option<i64>); 9] = [
    ("1h", "1 hour", Some(3600)),
    ("1d", "1 day", Some(86_400)),
    ("3d", "3 days", Some(3 * 86_400)),
    ("7d", "7 days", Some(7 * 86_400)),
    ("14d", "14 days", Some(14 * 86_400)),
    ("30d", "30 days", Some(30 * 86_400)),
    ("90d", "90 days", Some(90 * 86_400)),
    ("365d", "1 year", Some(365 * 86_400)),
    ("permanent", "Permanent", None),
];

/// Reads the form's length: `Some(None)` for permanent, None for a value the form never offers.
pub(super) fn length(value: &str) -> Option<Option<Duration>> {
    LENGTHS
        .iter()
        .find(|(v, _, _)| *v == value)
        .map(|(_, _, seconds)| seconds.map(Duration::seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viewer_punishes_nothing_and_a_moderator_bans_for_thirty_days_at_most() {
        let day = Some(Duration::days(1));
        assert!(may_issue(Role::Viewer, PunishmentType::Warning, None).is_err());
        for kind in [PunishmentType::Warning, PunishmentType::Kick] {
            assert_eq!(may_issue(Role::Moderator, kind, None), Ok(()));
        }
        assert_eq!(
            may_issue(Role::Moderator, PunishmentType::Mute, None),
            Ok(())
        );
        assert_eq!(may_issue(Role::Moderator, PunishmentType::Ban, day), Ok(()));
        let month = Some(Duration::days(30));
        assert_eq!(
            may_issue(Role::Moderator, PunishmentType::Ban, month),
            Ok(())
        );
        let longer = Some(Duration::days(31));
        let refused = may_issue(Role::Moderator, PunishmentType::Ban, longer).unwrap_err();
        assert!(refused.contains("at most 30 days"), "{refused}");
        assert!(may_issue(Role::Moderator, PunishmentType::Ban, None).is_err());
        for role in [Role::Admin, Role::Owner] {
            assert_eq!(may_issue(role, PunishmentType::Ban, None), Ok(()));
        }
    }

    #[test]
    fn a_moderator_revokes_what_they_could_have_issued() {
        let at = Utc::now();
        let week = Some(at + Duration::days(7));
        assert_eq!(
            may_revoke(Role::Moderator, PunishmentType::Ban, at, week),
            Ok(())
        );
        let why = may_revoke(Role::Moderator, PunishmentType::Ban, at, None).unwrap_err();
        assert!(why.starts_with("only an admin can revoke this"), "{why}");
        assert_eq!(
            may_revoke(Role::Admin, PunishmentType::Ban, at, None),
            Ok(())
        );
        assert!(may_revoke(Role::Viewer, PunishmentType::Mute, at, week).is_err());
    }

    #[test]
    fn the_form_offers_known_lengths_only() {
        assert_eq!(length("7d"), Some(Some(Duration::days(7))));
        assert_eq!(length("permanent"), Some(None));
        assert_eq!(length("8d"), None);
        assert_eq!(kind("ban"), Some(PunishmentType::Ban));
        assert_eq!(kind("Ban"), None);
    }
}
