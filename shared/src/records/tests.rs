//! Every record kind refuses what PostgreSQL cannot store (`docs/rate-limits.md`, "What ingest
//! accepts"): a NUL in any text field, integers past their column, times outside the stored
//! window, and (custom events) `\u0000` or unpaired surrogates anywhere inside `properties`.

use super::*;
use crate::validation::FieldError;
use serde_json::{Value, json};

const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";
const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";

/// A valid record of each kind with every optional text field filled, and those fields' names.
fn samples() -> Vec<(RecordKind, Value, &'static [&'static str])> {
    vec![
        (
            RecordKind::Heartbeat,
            json!({"server_id": SERVER, "tps": 20.0, "player_count": 3, "max_players": 100,
                   "name": "Lobby", "version": "Paper"}),
            &["name", "version"],
        ),
        (
            RecordKind::Chat,
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch",
                   "entry_type": "chat", "message": "hi", "channel": "global"}),
            &["player_name", "message", "channel"],
        ),
        (
            RecordKind::Punishment,
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch",
                   "type": "ban", "reason": "x", "staff_name": "Mod", "scope": "global",
                   "source_plugin": "litebans", "external_id": "17", "revoke_reason": "r"}),
            &[
                "player_name",
                "reason",
                "staff_name",
                "scope",
                "source_plugin",
                "external_id",
                "revoke_reason",
            ],
        ),
        (
            RecordKind::AnticheatFlag,
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch",
                   "check_name": "Reach", "check_type": "A", "violation_level": 1.5,
                   "detail": "d", "source_plugin": "grim"}),
            &[
                "player_name",
                "check_name",
                "check_type",
                "detail",
                "source_plugin",
            ],
        ),
        (
            RecordKind::Session,
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch",
                   "event": "join", "client_version": "1.21.4"}),
            &["player_name", "client_version"],
        ),
        (
            RecordKind::RankChange,
            json!({"player_uuid": PLAYER, "player_name": "Notch", "action": "add",
                   "group": "vip", "previous_group": "default", "staff_name": "Mod"}),
            &["player_name", "group", "previous_group", "staff_name"],
        ),
        (
            RecordKind::AccountLink,
            json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "123",
                   "external_name": "notch", "action": "link"}),
            &["platform", "external_id", "external_name"],
        ),
        (
            RecordKind::Note,
            json!({"player_uuid": PLAYER, "text": "watch for spam",
                   "evidence": ["https://example.com/clip"],
                   "author": {"member_id": PLAYER, "name": "Mia"},
                   "written_at": "2025-01-31T12:00:00Z"}),
            &["text"],
        ),
        (
            RecordKind::ActionAck,
            json!({"server_id": SERVER, "action_id": PLAYER, "outcome": "failed",
                   "detail": "the player is exempt"}),
            &["detail"],
        ),
        (
            RecordKind::Appeal,
            json!({"id": PLAYER, "step": "submitted", "punishment_id": PLAYER,
                   "player_uuid": PLAYER, "message": "I did not cheat, see my clip.",
                   "at": "2025-01-31T12:00:00Z"}),
            &["message"],
        ),
    ]
}

/// The field errors of `record` as one of `kind`, validated at `now`.
fn errors(kind: RecordKind, record: &Value, now: DateTime<Utc>) -> Vec<FieldError> {
    fn check<T: PluginRecord>(record: &Value, now: DateTime<Utc>) -> Vec<FieldError> {
        let record: T = serde_json::from_value(record.clone()).expect("well-formed record");
        record.validate(now).err().unwrap_or_default()
    }
    match kind {
        RecordKind::Heartbeat => check::<Heartbeat>(record, now),
        RecordKind::Chat => check::<ChatEntry>(record, now),
        RecordKind::Punishment => check::<Punishment>(record, now),
        RecordKind::AnticheatFlag => check::<AnticheatFlag>(record, now),
        RecordKind::Session => check::<Session>(record, now),
        RecordKind::RankChange => check::<RankChange>(record, now),
        RecordKind::AccountLink => check::<AccountLink>(record, now),
        RecordKind::Custom => check::<CustomEvent>(record, now),
        RecordKind::Note => {
            let note: Note = serde_json::from_value(record.clone()).expect("well-formed note");
            note.validate(now).err().unwrap_or_default()
        }
        RecordKind::ActionAck => check::<ActionAck>(record, now),
        RecordKind::Action => {
            let action: Action =
                serde_json::from_value(record.clone()).expect("well-formed action");
            action.validate(now).err().unwrap_or_default()
        }
        RecordKind::Appeal => {
            let appeal: Appeal =
                serde_json::from_value(record.clone()).expect("well-formed appeal");
            appeal.validate(now).err().unwrap_or_default()
        }
        // Not in the samples: an erasure has no text field a client writes.
        RecordKind::Erasure => Vec::new(),
    }
}

fn pairs(errors: Vec<FieldError>) -> Vec<(String, String)> {
    errors.into_iter().map(|e| (e.field, e.code)).collect()
}

#[test]
fn a_nul_in_any_text_field_of_any_record_is_refused_by_name() {
    let now = Utc::now();
    for (kind, record, fields) in samples() {
        assert!(
            errors(kind, &record, now).is_empty(),
            "{kind:?} sample is valid"
        );
        for field in fields {
            let mut bad = record.clone();
            bad[*field] = json!("a\u{0}b");
            assert_eq!(
                pairs(errors(kind, &bad, now)),
                [(field.to_string(), "invalid_characters".to_owned())],
                "{kind:?}.{field}"
            );
        }
    }
}

#[test]
fn hostile_but_storable_text_at_full_length_is_accepted() {
    // 4-byte characters at each field's limit: the longest index entry they make (external_id
    // 128 + source_plugin 64 characters) is 768 bytes, far below the btree limit.
    let now = Utc::now();
    for (kind, record, fields) in samples() {
        for field in fields {
            let valid_at = |len: usize| {
                let mut long = record.clone();
                long[*field] = json!(format!("\u{202e}{}", "\u{10ffff}".repeat(len - 1)));
                errors(kind, &long, now).is_empty()
            };
            // The longest valid length, by bisection: valid at `lo`, invalid at `hi` (every
            // field takes 10 characters: an appeal's message needs that many).
            let (mut lo, mut hi) = (MIN_APPEAL_MESSAGE, 10_000);
            assert!(valid_at(lo) && !valid_at(hi), "{kind:?}.{field}");
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if valid_at(mid) { lo = mid } else { hi = mid }
            }
            assert!(
                [32, 64, 128, 512, 2000, 2048, 4096].contains(&lo),
                "{kind:?}.{field}: {lo}"
            );
        }
    }
}

#[test]
fn heartbeat_counts_must_fit_an_integer_column() {
    let (kind, mut record, _) = samples().remove(0);
    for (count, ok) in [
        (i64::from(i32::MAX), true),
        (1 << 31, false),
        (1 << 40, false),
    ] {
        record["player_count"] = json!(count);
        record["max_players"] = json!(count);
        let codes = pairs(errors(kind, &record, Utc::now()));
        assert_eq!(codes.is_empty(), ok, "{count}: {codes:?}");
        if !ok {
            assert_eq!(codes[0], ("player_count".into(), "out_of_range".into()));
            assert_eq!(codes[1], ("max_players".into(), "out_of_range".into()));
        }
    }
}

#[test]
fn record_times_and_expiries_stay_in_the_stored_window() {
    let now = Utc::now();
    let times = [
        (RecordKind::Heartbeat, "timestamp"),
        (RecordKind::Chat, "sent_at"),
        (RecordKind::Punishment, "issued_at"),
        (RecordKind::AnticheatFlag, "flagged_at"),
        (RecordKind::Session, "at"),
        (RecordKind::RankChange, "changed_at"),
        (RecordKind::AccountLink, "at"),
    ];
    let samples = samples();
    for (kind, field) in times {
        let (_, record, _) = samples.iter().find(|s| s.0 == kind).expect("sample");
        for (at, code) in [
            ("2000-01-01T00:00:00Z", None),
            ("1999-12-31T23:59:59Z", Some("out_of_range")),
            ("0000-01-01T00:00:00+12:00", Some("out_of_range")),
            ("9999-12-31T23:59:59-12:00", Some("in_future")),
        ] {
            let mut record = record.clone();
            record[field] = json!(at);
            let got = pairs(errors(kind, &record, now));
            let want: Vec<(String, String)> = code
                .map(|c| (field.to_owned(), c.to_owned()))
                .into_iter()
                .collect();
            assert_eq!(got, want, "{kind:?}.{field} = {at}");
        }
    }
    for kind in [RecordKind::Punishment, RecordKind::RankChange] {
        let (_, record, _) = samples.iter().find(|s| s.0 == kind).expect("sample");
        for (at, ok) in [
            ("9999-12-31T23:59:59Z", true),
            ("9999-12-31T23:59:59-00:01", false),
            ("1999-01-01T00:00:00Z", false),
        ] {
            let mut record = record.clone();
            record["expires_at"] = json!(at);
            let got = pairs(errors(kind, &record, now));
            assert_eq!(
                got.iter().any(|(f, _)| f == "expires_at"),
                !ok,
                "{kind:?} {at}"
            );
        }
    }
}

#[test]
fn custom_event_properties_refuse_nul_and_lone_surrogates_with_a_path() {
    let now = Utc::now();
    let event = |properties: &str| -> Vec<(String, String)> {
        let record: CustomEvent = serde_json::from_str(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"crate_opened","properties":{properties}}}"#
        ))
        .expect("well-formed event");
        pairs(record.validate(now).err().unwrap_or_default())
    };
    let refused = |field: &str| vec![(field.to_owned(), "invalid_characters".to_owned())];
    assert_eq!(event(r#"{"a":{"b":"x\u0000"}}"#), refused("properties.a.b"));
    assert_eq!(event(r#"{"a\u0000":1}"#), refused(r"properties.a\u0000"));
    assert_eq!(event(r#"{"l":[0,"\udfff"]}"#), refused("properties.l[1]"));
    assert!(event(r#"{"ok":"\ud83d\ude00 \u202e \\u0000","n":1e308}"#).is_empty());
}

#[test]
fn a_heartbeat_role_is_server_or_proxy_and_a_game_server_when_absent() {
    let (_, sample, _) = samples().remove(0);
    let with = |role: Value| {
        let mut record = sample.clone();
        record["role"] = role;
        serde_json::from_value::<Heartbeat>(record)
    };
    let role_of = |role: Value| with(role).expect("accepted").role;
    assert_eq!(role_of(json!("proxy")), Some(ServerRole::Proxy));
    assert_eq!(role_of(json!("server")), Some(ServerRole::Server));
    assert_eq!(role_of(Value::Null), None);
    let absent: Heartbeat = serde_json::from_value(sample.clone()).expect("accepted");
    assert_eq!(absent.role, None);
    assert_eq!(absent.role.unwrap_or_default(), ServerRole::Server);
    for bad in [json!("Proxy"), json!("bungee"), json!(""), json!(1)] {
        assert!(with(bad.clone()).is_err(), "{bad}");
    }
    // Stored as text and read back.
    for role in [ServerRole::Server, ServerRole::Proxy] {
        assert_eq!(
            ServerRole::try_from(role.as_str().to_owned()).ok(),
            Some(role)
        );
    }
    assert!(ServerRole::try_from("lobby".to_owned()).is_err());
}
