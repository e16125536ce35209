use super::*;
use chrono::TimeZone;
use shared::envelope::Logged;
use shared::records::Punishment;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";
const STAFF: &str = "5b1f0c1e-8a4e-4c7b-9f1d-2b3c4d5e6f70";

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn punishment(json: &str) -> Logged<Punishment> {
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(json).expect("well-formed record"),
    }
}

fn rows(records: Vec<Logged<Punishment>>) -> (Vec<PunishmentIssued>, Vec<PunishmentRevoked>) {
    let account = Uuid::now_v7();
    let message = LogMessage::new(account, received(), RecordBatch::Punishment(records));
    let (issued, revoked) = rows_of(7, &message);
    assert!(issued.iter().all(|p| p.account_id == account));
    assert!(revoked.iter().all(|r| r.account_id == account));
    (issued, revoked)
}

#[test]
fn an_issue_keeps_its_fields_and_place_in_the_log() {
    let ban = punishment(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"ban","reason":"x-ray",
            "staff_uuid":"{STAFF}","staff_name":"Mod","issued_at":"2025-03-01T10:00:00Z",
            "expires_at":"2025-03-08T10:00:00Z","ip_based":true,"scope":"global",
            "source_plugin":"litebans","external_id":"17"}}"#
    ));
    let (issued, revoked) = rows(vec![ban.clone()]);
    assert!(revoked.is_empty());
    let row = &issued[0];
    assert_eq!(row.id, ban.id);
    assert_eq!(row.seq, 7_000);
    assert_eq!(row.punishment_type, "ban");
    assert_eq!(row.reason.as_deref(), Some("x-ray"));
    assert_eq!(row.staff_uuid, Some(STAFF.parse().expect("uuid")));
    assert_eq!(row.staff_name.as_deref(), Some("Mod"));
    assert_eq!(row.server_id, Some(SERVER.parse::<Uuid>().expect("uuid")));
    assert_eq!(row.issued_at.to_rfc3339(), "2025-03-01T10:00:00+00:00");
    assert_eq!(
        row.expires_at.map(|t| t.to_rfc3339()).as_deref(),
        Some("2025-03-08T10:00:00+00:00")
    );
    assert!(row.ip_based);
    assert_eq!(row.scope.as_deref(), Some("global"));
    assert_eq!(row.source_plugin.as_deref(), Some("litebans"));
    assert_eq!(row.external_id.as_deref(), Some("17"));
}

#[test]
fn defaults_fill_what_the_record_left_out_and_kicks_never_expire() {
    let kick = punishment(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"kick",
            "expires_at":"2025-03-08T10:00:00Z"}}"#
    ));
    let (issued, _) = rows(vec![kick]);
    let row = &issued[0];
    assert_eq!(row.expires_at, None, "a kick never expires");
    assert!(!row.ip_based, "ip_based defaults to false");
    assert_eq!(
        row.issued_at,
        received(),
        "falls back to the time of receipt"
    );
    assert_eq!(row.staff_uuid, None, "the console");
}

#[test]
fn a_revoke_names_its_punishment_and_records_who_when_and_why() {
    let target = Uuid::now_v7();
    let by_external = punishment(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"mute","action":"revoke",
            "source_plugin":"litebans","external_id":"9","staff_uuid":"{STAFF}",
            "staff_name":"Mod","revoke_reason":"appeal","issued_at":"2025-03-01T11:00:00Z"}}"#
    ));
    let by_id = punishment(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"ban","action":"revoke",
            "punishment_id":"{target}"}}"#
    ));
    let issue = punishment(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"warning"}}"#
    ));
    let (issued, revoked) = rows(vec![by_external.clone(), issue, by_id]);

    assert_eq!(issued.len(), 1);
    assert_eq!(issued[0].seq, 7_001);
    let first = &revoked[0];
    assert_eq!(first.id, by_external.id);
    assert_eq!(first.seq, 7_000);
    assert_eq!(first.punishment_type, "mute");
    assert_eq!(first.source_plugin.as_deref(), Some("litebans"));
    assert_eq!(first.external_id.as_deref(), Some("9"));
    assert_eq!(first.punishment_id, None);
    assert_eq!(first.revoked_at.to_rfc3339(), "2025-03-01T11:00:00+00:00");
    assert_eq!(first.revoked_by, Some(STAFF.parse().expect("uuid")));
    assert_eq!(first.revoked_by_name.as_deref(), Some("Mod"));
    assert_eq!(first.revoke_reason.as_deref(), Some("appeal"));
    let second = &revoked[1];
    assert_eq!(second.seq, 7_002);
    assert_eq!(second.punishment_id, Some(target));
    assert_eq!(second.revoked_at, received());
    assert_eq!(second.revoked_by, None);
}

#[test]
fn other_record_kinds_have_no_punishment_rows() {
    let message = LogMessage::new(Uuid::nil(), received(), RecordBatch::Chat(Vec::new()));
    let (issued, revoked) = rows_of(1, &message);
    assert!(issued.is_empty() && revoked.is_empty());
}

fn action(json: serde_json::Value) -> Logged<shared::records::Action> {
    let record: shared::records::Action = serde_json::from_value(json).expect("well-formed action");
    Logged {
        id: record.id,
        record,
    }
}

#[test]
fn a_dashboard_ban_and_its_revoke_are_a_punishment_with_the_member_and_no_server() {
    let ban_id = Uuid::now_v7();
    let ban = action(serde_json::json!({
        "id": ban_id, "type": "issue",
        "punishment": {"type": "ban", "player_uuid": PLAYER, "player_name": "Griefer",
                       "reason": "x-ray", "expires_at": "2025-03-08T10:00:00Z", "scope": "global"},
        "by": {"member_id": STAFF, "name": "Moderator Mo"}, "at": "2025-03-01T10:00:00Z"
    }));
    let revoke = action(serde_json::json!({
        "id": Uuid::now_v7(), "type": "revoke",
        "revoke": {"punishment_id": ban_id, "player_uuid": PLAYER, "type": "ban",
                   "source_plugin": "warden", "reason": "appeal accepted"},
        "by": {"member_id": STAFF, "name": "Admin Ada"}, "at": "2025-03-01T11:00:00Z"
    }));
    // A forged action (an issue without its punishment) is skipped, not stored.
    let forged = action(serde_json::json!({
        "id": Uuid::now_v7(), "type": "issue",
        "by": {"member_id": STAFF, "name": "Nobody"}, "at": "2025-03-01T11:00:00Z"
    }));
    let account = Uuid::now_v7();
    let message = LogMessage::new(
        account,
        received(),
        RecordBatch::Action(vec![ban, revoke.clone(), forged]),
    );
    let (issued, revoked) = rows_of(9, &message);
    assert_eq!(issued.len(), 1);
    let row = &issued[0];
    assert_eq!((row.account_id, row.id, row.seq), (account, ban_id, 9_000));
    assert_eq!(row.player_uuid, PLAYER.parse::<Uuid>().expect("uuid"));
    assert_eq!(row.punishment_type, "ban");
    assert_eq!(row.reason.as_deref(), Some("x-ray"));
    assert_eq!(
        (row.staff_uuid, row.staff_name.as_deref()),
        (None, Some("Moderator Mo"))
    );
    assert_eq!(row.server_id, None);
    assert_eq!(row.issued_at.to_rfc3339(), "2025-03-01T10:00:00+00:00");
    assert_eq!(
        row.expires_at.map(|t| t.to_rfc3339()).as_deref(),
        Some("2025-03-08T10:00:00+00:00")
    );
    assert_eq!(row.scope.as_deref(), Some("global"));
    assert_eq!(row.source_plugin.as_deref(), Some("warden"));
    assert_eq!(revoked.len(), 1);
    let end = &revoked[0];
    assert_eq!((end.id, end.seq), (revoke.id, 9_001));
    assert_eq!(end.punishment_id, Some(ban_id));
    assert_eq!(end.punishment_type, "ban");
    assert_eq!(end.revoked_by_name.as_deref(), Some("Admin Ada"));
    assert_eq!(end.revoke_reason.as_deref(), Some("appeal accepted"));
    assert_eq!(end.revoked_at.to_rfc3339(), "2025-03-01T11:00:00+00:00");
}
