//! The rules decided by one record alone: punishments issued or revoked, rank changes across
//! the staff groups, custom events, and a banned player's alt joining (which reads the
//! `sessions` and `punishments` read models, like query-api's banned-alts check).

use super::evaluate::Scope;
use super::outbox::Notification;
use super::rules::{ActiveRule, staff_groups};
use serde_json::{Value, json};
use shared::alerts::EventType;
use shared::alerts::{RuleSpec, StaffDirection};
use shared::envelope::Logged;
use shared::records::{
    CustomEvent, Punishment, PunishmentAction, RankAction, RankChange, Session, SessionEvent,
};
use sqlx::PgConnection;
use uuid::Uuid;

/// Banned alts listed in one notification at most.
const MAX_BANNED_ALTS: i64 = 10;

/// `punishment_issued` / `punishment_revoked`.
pub(crate) fn punishments(scope: &Scope<'_>, records: &[Logged<Punishment>]) -> Vec<Notification> {
    let mut out = Vec::new();
    for logged in records {
        let p = &logged.record;
        for rule in scope.rules() {
            let (types, event_type) = match (&rule.spec, p.action) {
                (RuleSpec::PunishmentIssued { punishment_types }, PunishmentAction::Issue) => {
                    (punishment_types, EventType::PunishmentIssued)
                }
                (RuleSpec::PunishmentRevoked { punishment_types }, PunishmentAction::Revoke) => {
                    (punishment_types, EventType::PunishmentRevoked)
                }
                _ => continue,
            };
            if !types.is_empty() && !types.contains(&p.punishment_type) {
                continue;
            }
            let issued_at = p.issued_at.unwrap_or(scope.received_at);
            let mut fields = json!({
                // An issue is known by its record id; a revoke names it, when it does.
                "punishment_id": match p.action {
                    PunishmentAction::Issue => Some(logged.id),
                    PunishmentAction::Revoke => p.punishment_id,
                },
                "punishment_type": p.punishment_type.as_str(),
                "player_uuid": p.player_uuid,
                "player_name": p.player_name,
                "reason": p.reason,
                "staff_uuid": p.staff_uuid,
                "staff_name": p.staff_name,
                "server_id": p.server_id,
                "issued_at": issued_at,
                "expires_at": p.expires_at,
            });
            if p.action == PunishmentAction::Revoke {
                fields["revoke_reason"] = json!(p.revoke_reason);
            }
            out.push(scope.notify(rule, event_type, issued_at, fields));
        }
    }
    out
}

/// `custom_event`.
pub(crate) fn custom_events(
    scope: &Scope<'_>,
    records: &[Logged<CustomEvent>],
) -> Vec<Notification> {
    let mut out = Vec::new();
    for logged in records {
        let e = &logged.record;
        for rule in scope.rules() {
            let RuleSpec::CustomEvent { event_name } = &rule.spec else {
                continue;
            };
            if *event_name != e.name {
                continue;
            }
            let occurred_at = e.occurred_at.unwrap_or(scope.received_at);
            let properties = e
                .properties
                .as_ref()
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .unwrap_or(Value::Null);
            let fields = json!({
                "name": e.name,
                "player_uuid": e.player_uuid,
                "properties": properties,
                "occurred_at": occurred_at,
            });
            out.push(scope.notify(rule, EventType::EventCustom, occurred_at, fields));
        }
    }
    out
}

/// Which way a rank change crosses the staff groups, if it does.
fn crossing(change: &RankChange, staff: &[String]) -> Option<StaffDirection> {
    let is_staff = |group: &str| staff.contains(&group.to_lowercase());
    let group = is_staff(&change.group);
    let previous = change.previous_group.as_deref().is_some_and(is_staff);
    match change.action {
        RankAction::Add | RankAction::Set if group && !previous => Some(StaffDirection::Into),
        RankAction::Set if previous && !group => Some(StaffDirection::OutOf),
        RankAction::Remove if group => Some(StaffDirection::OutOf),
        _ => None,
    }
}

/// `staff_rank_change`.
pub(crate) async fn rank_changes(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    records: &[Logged<RankChange>],
) -> Result<Vec<Notification>, sqlx::Error> {
    let mut out = Vec::new();
    if !scope
        .rules()
        .any(|r| matches!(r.spec, RuleSpec::StaffRankChange { .. }))
    {
        return Ok(out);
    }
    let staff = staff_groups(conn, scope.account_id).await?;
    for logged in records {
        let change = &logged.record;
        let Some(direction) = crossing(change, &staff) else {
            continue;
        };
        let event_type = match direction {
            StaffDirection::OutOf => EventType::RankStaffLeft,
            _ => EventType::RankStaffJoined,
        };
        for rule in scope.rules() {
            let RuleSpec::StaffRankChange { direction: wanted } = rule.spec else {
                continue;
            };
            if wanted != StaffDirection::Both && wanted != direction {
                continue;
            }
            let fields = json!({
                "player_uuid": change.player_uuid,
                "player_name": change.player_name,
                "group": change.group,
                "previous_group": change.previous_group,
                "staff_name": change.staff_name,
            });
            let at = change.changed_at.unwrap_or(scope.received_at);
            out.push(scope.notify(rule, event_type, at, fields));
        }
    }
    Ok(out)
}

/// `banned_alt_joined`: a join whose IP hash (or any earlier hash of the player) is shared
/// with a player banned now.
pub(crate) async fn joins(
    conn: &mut PgConnection,
    scope: &Scope<'_>,
    records: &[Logged<Session>],
) -> Result<Vec<Notification>, sqlx::Error> {
    let mut out = Vec::new();
    let rules: Vec<&ActiveRule> = scope
        .rules()
        .filter(|r| matches!(r.spec, RuleSpec::BannedAltJoined {}))
        .collect();
    if rules.is_empty() {
        return Ok(out);
    }
    for logged in records {
        let join = &logged.record;
        if join.event != SessionEvent::Join {
            continue;
        }
        let alts = banned_alts(conn, scope.account_id, join).await?;
        if alts.is_empty() {
            continue;
        }
        let banned: Vec<Value> = alts
            .into_iter()
            .map(|(uuid, username)| json!({"uuid": uuid, "username": username}))
            .collect();
        let at = join.at.unwrap_or(scope.received_at);
        // An erased name reads as empty: the notification then names no one.
        let name = Some(join.player_name.as_str()).filter(|name| !name.is_empty());
        for rule in &rules {
            let fields = json!({
                "player_uuid": join.player_uuid,
                "player_name": name,
                "server_id": join.server_id,
                "banned_alts": banned,
            });
            out.push(scope.notify(rule, EventType::PlayerBannedAltJoined, at, fields));
        }
    }
    Ok(out)
}

/// The players sharing an IP hash with `join`'s player (this join's hash or an earlier one)
/// who are banned now, by name.
async fn banned_alts(
    conn: &mut PgConnection,
    account: Uuid,
    join: &Session,
) -> Result<Vec<(Uuid, Option<String>)>, sqlx::Error> {
    // Read through sessions_player_time_idx, sessions_ip_hash_idx and the punishments' player
    // index, like query-api's banned_alts.
    sqlx::query_as(
        "SELECT se.player_uuid, pl.username
         FROM (SELECT DISTINCT se.player_uuid FROM sessions se
               WHERE se.account_id = $1 AND se.player_uuid <> $2
                 AND se.ip_hash IN (
                   SELECT s.ip_hash FROM sessions s WHERE s.account_id = $1
                     AND s.player_uuid = $2 AND s.ip_hash IS NOT NULL
                   UNION SELECT $3::text WHERE $3::text IS NOT NULL)
                 AND EXISTS (SELECT 1 FROM punishments p WHERE p.account_id = $1
                   AND p.player_uuid = se.player_uuid AND p.type = 'ban'
                   AND p.revoked_at IS NULL
                   AND (p.expires_at IS NULL OR p.expires_at > now()))) se
         LEFT JOIN players pl ON pl.account_id = $1 AND pl.uuid = se.player_uuid
         ORDER BY pl.username NULLS LAST, se.player_uuid
         LIMIT $4",
    )
    .bind(account)
    .bind(join.player_uuid)
    .bind(join.ip_hash.as_deref())
    .bind(MAX_BANNED_ALTS)
    .fetch_all(conn)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(action: RankAction, group: &str, previous: Option<&str>) -> RankChange {
        RankChange {
            player_uuid: Uuid::nil(),
            player_name: None,
            action,
            group: group.to_owned(),
            previous_group: previous.map(str::to_owned),
            server_id: None,
            staff_uuid: None,
            staff_name: None,
            expires_at: None,
            changed_at: None,
        }
    }

    #[test]
    fn rank_changes_cross_the_staff_groups_only_when_they_enter_or_leave() {
        let staff = vec!["admin".to_owned(), "mod".to_owned()];
        let into = Some(StaffDirection::Into);
        let out_of = Some(StaffDirection::OutOf);
        assert_eq!(
            crossing(&change(RankAction::Add, "Mod", None), &staff),
            into
        );
        assert_eq!(
            crossing(&change(RankAction::Set, "admin", Some("default")), &staff),
            into
        );
        assert_eq!(
            crossing(&change(RankAction::Set, "default", Some("ADMIN")), &staff),
            out_of
        );
        assert_eq!(
            crossing(&change(RankAction::Remove, "mod", None), &staff),
            out_of
        );
        assert_eq!(
            crossing(&change(RankAction::Set, "admin", Some("mod")), &staff),
            None
        );
        assert_eq!(
            crossing(&change(RankAction::Add, "vip", None), &staff),
            None
        );
        assert_eq!(
            crossing(&change(RankAction::Remove, "vip", None), &staff),
            None
        );
    }
}
