use super::*;
use chrono::TimeZone;
use shared::envelope::{LogMessage, Logged};
use shared::records::ChatEntry;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn entry(json: &str) -> Logged<ChatEntry> {
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(json).expect("well-formed record"),
    }
}

fn positioned(stream_sequence: u64, account: Uuid, batch: RecordBatch) -> Positioned {
    Positioned {
        stream_sequence,
        message: LogMessage::new(account, received(), batch),
    }
}

#[test]
fn entries_become_rows_in_log_order_across_messages() {
    let (first, second) = (Uuid::now_v7(), Uuid::now_v7());
    let said = entry(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","entry_type":"chat",
            "message":"hi \"all\"","channel":"global","sent_at":"2025-03-01T11:59:00Z"}}"#
    ));
    let ran = entry(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","entry_type":"command","message":"/spawn"}}"#
    ));
    let messages = [
        positioned(1, first, RecordBatch::Chat(vec![said.clone()])),
        positioned(2, second, RecordBatch::Heartbeat(Vec::new())),
        positioned(3, second, RecordBatch::Chat(vec![ran.clone()])),
    ];
    let refs: Vec<&Positioned> = messages.iter().collect();
    let columns = ChatColumns::of(&refs);

    assert_eq!(columns.len(), 2);
    assert_eq!(columns.account_id, [first, second]);
    assert_eq!(columns.id, [said.id, ran.id]);
    assert_eq!(columns.entry_type, ["chat", "command"]);
    assert_eq!(columns.message, [r#"hi "all""#, "/spawn"]);
    assert_eq!(columns.channel, [Some("global"), None]);
    assert_eq!(columns.sent_at[0].to_rfc3339(), "2025-03-01T11:59:00+00:00");
    assert_eq!(
        columns.sent_at[1],
        received(),
        "falls back to the time of receipt"
    );
    assert_eq!(
        columns.player_uuid[0],
        PLAYER.parse::<Uuid>().expect("uuid")
    );
    assert_eq!(columns.server_id[1], SERVER.parse::<Uuid>().expect("uuid"));
}

#[test]
fn a_chunk_without_chat_has_no_rows() {
    let messages = [positioned(1, Uuid::nil(), RecordBatch::Custom(Vec::new()))];
    let refs: Vec<&Positioned> = messages.iter().collect();
    assert!(ChatColumns::of(&refs).is_empty());
}
