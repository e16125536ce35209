use super::*;
use chrono::TimeZone;
use shared::envelope::{LogMessage, Logged};
use shared::records::{Note, NoteAuthor};

fn received() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn note(text: &str, evidence: &[&str], written_at: DateTime<Utc>) -> Logged<Note> {
    Logged {
        id: Uuid::now_v7(),
        record: Note {
            player_uuid: Uuid::from_u128(7),
            punishment_id: Some(Uuid::from_u128(9)),
            text: text.into(),
            evidence: evidence.iter().map(|s| (*s).to_owned()).collect(),
            author: NoteAuthor {
                member_id: Uuid::from_u128(3),
                name: "Mia".into(),
            },
            written_at,
        },
    }
}

#[test]
fn valid_notes_become_rows_and_hostile_ones_are_skipped() {
    let account = Uuid::from_u128(1);
    let good = note("watch for spam", &["https://a.example/clip"], received());
    let nul = note("a\0b", &[], received());
    let bad_link = note("x", &["javascript:alert(1)"], received());
    // Judged against the message's time of receipt, not the clock: a replay next year skips
    // exactly what the first pass skipped.
    let future = note("x", &[], received() + chrono::Duration::hours(1));
    let later = note("second", &[], received());
    let messages = [
        Positioned {
            stream_sequence: 4,
            message: LogMessage::new(
                account,
                received(),
                RecordBatch::Note(vec![nul, good.clone(), bad_link, future]),
            ),
        },
        Positioned {
            stream_sequence: 5,
            message: LogMessage::new(account, received(), RecordBatch::Note(vec![later.clone()])),
        },
    ];
    let refs: Vec<&Positioned> = messages.iter().collect();
    let columns = NoteColumns::of(&refs);
    assert_eq!(columns.id, [good.id, later.id]);
    assert_eq!(columns.skipped, 3);
    // Each keeps its own position in its message.
    assert_eq!(columns.seq, [4001, 5000]);
    assert_eq!(
        columns.evidence[0],
        serde_json::json!(["https://a.example/clip"])
    );
    assert_eq!(columns.punishment_id[0], Some(Uuid::from_u128(9)));
    assert_eq!(columns.author_name, ["Mia", "Mia"]);
}
