use super::*;
use chrono::TimeZone;
use shared::envelope::{LogMessage, Logged};
use shared::records::AnticheatFlag;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn flag(json: &str) -> Logged<AnticheatFlag> {
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(json).expect("well-formed record"),
    }
}

#[test]
fn flags_keep_their_fields_and_fill_defaults() {
    let full = flag(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","check_name":"Reach","check_type":"A",
            "violation_level":3.5,"detail":"3.4 blocks","source_plugin":"grim",
            "is_experimental":true,"ping_ms":42.0,"tps":19.8,"flagged_at":"2025-03-01T11:00:00Z"}}"#
    ));
    let bare = flag(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","check_name":"Fly","violation_level":0}}"#
    ));
    let account = Uuid::now_v7();
    let message = Positioned {
        stream_sequence: 4,
        message: LogMessage::new(
            account,
            received(),
            RecordBatch::AnticheatFlag(vec![full.clone(), bare.clone()]),
        ),
    };
    let columns = FlagColumns::of(&[&message]);

    assert_eq!(columns.len(), 2);
    assert_eq!(columns.account_id, [account, account]);
    assert_eq!(columns.id, [full.id, bare.id]);
    assert_eq!(columns.check_name, ["Reach", "Fly"]);
    assert_eq!(columns.check_type, [Some("A"), None]);
    assert_eq!(columns.violation_level, [3.5, 0.0]);
    assert_eq!(columns.detail, [Some("3.4 blocks"), None]);
    assert_eq!(columns.source_plugin, [Some("grim"), None]);
    assert_eq!(columns.is_experimental, [true, false], "defaults to false");
    assert_eq!(columns.ping_ms, [Some(42.0), None]);
    assert_eq!(columns.tps, [Some(19.8), None]);
    assert_eq!(
        columns.flagged_at[0].to_rfc3339(),
        "2025-03-01T11:00:00+00:00"
    );
    assert_eq!(
        columns.flagged_at[1],
        received(),
        "falls back to the time of receipt"
    );
    assert_eq!(
        columns.player_uuid[0],
        PLAYER.parse::<Uuid>().expect("uuid")
    );
    assert_eq!(columns.server_id[0], SERVER.parse::<Uuid>().expect("uuid"));
}
