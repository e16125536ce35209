//! What erased values do to each read model. After `Keyring::open`, a field whose key was
//! destroyed reads as erased: a required text as "", an optional one as `None`, a list as
//! empty. The rules (`docs/privacy.md`, "Erase a player"): an erased name never overwrites a
//! stored one; chat lines, account links and notes whose text is erased are not stored;
//! everything else stores what the record holds, and aggregates still count the record.

use super::chat::ChatColumns;
use super::notes::NoteColumns;
use super::players::{PlayerRow, fold, sightings_of};
use super::{Positioned, active_days, punishments};
use chrono::{DateTime, TimeZone, Utc};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::records::{Note, NoteAuthor};
use shared::timeline::events_of;
use std::collections::BTreeMap;
use uuid::Uuid;

const ACCOUNT: Uuid = Uuid::from_u128(0xa);
const PLAYER: Uuid = Uuid::from_u128(0xb);
const SERVER: Uuid = Uuid::from_u128(0xc);

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, minute, 0)
        .single()
        .expect("a valid time")
}

fn logged<T: serde::de::DeserializeOwned>(json: String) -> Logged<T> {
    Logged {
        id: Uuid::now_v7(),
        record: serde_json::from_str(&json).expect("a well-formed record"),
    }
}

fn positioned(stream_sequence: u64, batch: RecordBatch) -> Positioned {
    Positioned {
        stream_sequence,
        message: LogMessage::new(ACCOUNT, at(59), batch),
    }
}

fn join(name: &str, minute: u32) -> RecordBatch {
    RecordBatch::Session(vec![logged(format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","player_name":"{name}",
            "event":"join","at":"{}"}}"#,
        at(minute).to_rfc3339()
    ))])
}

/// A chat entry; `name` None is an erased (or absent) name.
fn chat(message: &str, name: Option<&str>, minute: u32) -> Logged<shared::records::ChatEntry> {
    let name = name.map_or(String::new(), |n| format!(r#","player_name":"{n}""#));
    logged(format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","entry_type":"chat",
            "message":"{message}"{name},"sent_at":"{}"}}"#,
        at(minute).to_rfc3339()
    ))
}

fn link(action: &str, external_id: &str, minute: u32) -> RecordBatch {
    RecordBatch::AccountLink(vec![logged(format!(
        r#"{{"player_uuid":"{PLAYER}","platform":"discord","external_id":"{external_id}",
            "action":"{action}","at":"{}"}}"#,
        at(minute).to_rfc3339()
    ))])
}

/// Folds `messages` (stream sequences 1, 2, ...) one chunk each; the player's final row.
fn player_after(messages: &[Positioned]) -> Option<PlayerRow> {
    let mut stored = BTreeMap::new();
    for m in messages {
        for row in fold(&stored, &sightings_of(m.stream_sequence, &m.message)) {
            stored.insert((row.account_id, row.uuid), row);
        }
    }
    stored.into_values().next()
}

#[test]
fn an_erased_name_never_overwrites_the_stored_one_nor_becomes_a_name() {
    let later_erased = player_after(&[
        positioned(1, join("Steve", 1)),
        positioned(2, join("", 5)),
        positioned(3, RecordBatch::Chat(vec![chat("hi", None, 7)])),
    ])
    .expect("a row");
    assert_eq!(later_erased.username.as_deref(), Some("Steve"));
    assert_eq!(later_erased.names, ["Steve"]);
    assert_eq!(later_erased.last_seen, at(7), "still a sighting");

    let only_erased = player_after(&[positioned(1, join("", 2))]).expect("a row");
    assert_eq!(only_erased.username, None, "a new row stores no name");
    assert!(only_erased.names.is_empty());
    assert_eq!(only_erased.first_seen, at(2));

    let erased = positioned(1, join("", 2));
    let sightings = sightings_of(1, &erased.message);
    assert_eq!(
        sightings[0].name, None,
        "so player_names gets no row either"
    );
}

#[test]
fn an_account_link_whose_id_is_erased_is_not_stored() {
    let erased = player_after(&[positioned(1, link("link", "", 3))]).expect("a row");
    assert_eq!(erased.linked_platform, None);
    assert_eq!(erased.linked_external_id, None);
    assert_eq!(erased.linked_at, None);

    // An unlink needs no id: it still ends the link.
    let unlinked = player_after(&[
        positioned(1, link("link", "42", 1)),
        positioned(2, link("unlink", "", 4)),
    ])
    .expect("a row");
    assert_eq!(unlinked.linked_external_id, None);
    assert_eq!(unlinked.linked_at, Some(at(4)));
}

#[test]
fn an_erased_chat_line_is_no_row_but_still_counts() {
    let messages = [positioned(
        1,
        RecordBatch::Chat(vec![chat("", None, 1), chat("still here", Some("Alex"), 2)]),
    )];
    let refs: Vec<&Positioned> = messages.iter().collect();
    let columns = ChatColumns::of(&refs);
    assert_eq!(columns.message, ["still here"]);

    // The timeline (and the trends folded from it) and active days read the record.
    let events = events_of(1, &messages[0].message);
    assert_eq!(events.len(), 2);
    assert!(
        events[0].properties.contains(r#""message":"""#),
        "{}",
        events[0].properties
    );
    assert_eq!(active_days::active_days(&refs).len(), 1);
}

#[test]
fn a_note_whose_text_is_erased_is_not_stored_nor_counted_as_hostile() {
    let note = |text: &str| Logged {
        id: Uuid::now_v7(),
        record: Note {
            player_uuid: PLAYER,
            punishment_id: None,
            text: text.into(),
            // Erased links read as an empty list.
            evidence: Vec::new(),
            author: NoteAuthor {
                member_id: Uuid::from_u128(3),
                name: "Mia".into(),
            },
            written_at: at(1),
        },
    };
    let kept = note("watch him");
    let messages = [positioned(
        1,
        RecordBatch::Note(vec![note(""), kept.clone()]),
    )];
    let refs: Vec<&Positioned> = messages.iter().collect();
    let columns = NoteColumns::of(&refs);
    assert_eq!(columns.id, [kept.id]);
    assert_eq!(columns.skipped, 0);
}

#[test]
fn a_punishment_keeps_its_row_without_the_erased_texts() {
    let staff = Uuid::from_u128(0xd);
    let ban = logged(format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{PLAYER}","type":"ban",
            "staff_uuid":"{staff}","issued_at":"{}"}}"#,
        at(1).to_rfc3339()
    ));
    let message = positioned(4, RecordBatch::Punishment(vec![ban])).message;
    let (issued, _) = punishments::rows_of(4, &message);
    assert_eq!(issued.len(), 1, "the history stays");
    assert_eq!(issued[0].reason, None);
    assert_eq!(issued[0].staff_name, None);
    assert_eq!(issued[0].staff_uuid, Some(staff));
}
