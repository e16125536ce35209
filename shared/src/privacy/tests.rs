use super::keys::{DataKey, FieldKey};
use super::properties;
use super::sealed::{SealedValue, associated_data};
use super::*;
use chrono::{TimeZone, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

#[test]
fn sealed_values_round_trip_and_are_recognised() {
    let value = SealedValue {
        class: FieldClass::Chat,
        day: 20_781,
        nonce: [7; 12],
        ciphertext: vec![1, 2, 3, 250],
    };
    let text = value.encode();
    assert!(is_sealed(&text));
    assert!(text.starts_with('\0'));
    assert_eq!(SealedValue::decode(&text), Some(value));
    assert!(!is_sealed("hello"));
    assert_eq!(SealedValue::decode("\0w1.!!"), None);
    assert_eq!(SealedValue::decode("\0w1.AQ"), None, "too short");
}

#[test]
fn days_are_utc_days_since_1970() {
    let at = Utc.with_ymd_and_hms(2026, 11, 24, 23, 59, 59).unwrap();
    let day = day_of(at);
    assert_eq!(day, 20_781);
    assert_eq!(
        day_start(day),
        Utc.with_ymd_and_hms(2026, 11, 24, 0, 0, 0).unwrap()
    );
    assert_eq!(day_of(day_start(day + 1)), day + 1);
}

#[test]
fn a_field_key_depends_on_every_input() {
    let player = DataKey::random();
    let period = DataKey::random();
    let aad = associated_data(Uuid::nil(), Uuid::nil(), FieldClass::Chat, 1);
    let nonce = [0u8; 12];
    let seal = |key: FieldKey| {
        let mut buffer = b"hello".to_vec();
        key.cipher()
            .seal_in_place_append_tag(
                ring::aead::Nonce::assume_unique_for_key(nonce),
                ring::aead::Aad::from(aad),
                &mut buffer,
            )
            .unwrap();
        buffer
    };
    let base = seal(player.field_key(FieldClass::Chat, 1, Some(&period)));
    assert_eq!(
        base,
        seal(player.field_key(FieldClass::Chat, 1, Some(&period)))
    );
    assert_ne!(
        base,
        seal(player.field_key(FieldClass::Chat, 2, Some(&period)))
    );
    assert_ne!(
        base,
        seal(player.field_key(FieldClass::IpHash, 1, Some(&period)))
    );
    assert_ne!(base, seal(player.field_key(FieldClass::Chat, 1, None)));
    let other_period = DataKey::random();
    assert_ne!(
        base,
        seal(player.field_key(FieldClass::Chat, 1, Some(&other_period)))
    );
    let other_player = DataKey::random();
    assert_ne!(
        base,
        seal(other_player.field_key(FieldClass::Chat, 1, Some(&period)))
    );
}

#[test]
fn wrapped_keys_open_only_under_their_name_and_master() {
    let master = MasterKey::new("a master key of at least thirty-two characters").unwrap();
    let key = DataKey::random();
    let wrapped = master.wrap("p.a.b", &key);
    assert_eq!(master.unwrap_key("p.a.b", &wrapped), Ok(key));
    assert_eq!(
        master.unwrap_key("p.a.c", &wrapped),
        Err(MasterKeyError::Unwrap)
    );
    let other = MasterKey::new("another master key, also thirty-two characters").unwrap();
    assert_eq!(
        other.unwrap_key("p.a.b", &wrapped),
        Err(MasterKeyError::Unwrap)
    );
    assert!(matches!(
        MasterKey::new("short"),
        Err(MasterKeyError::TooShort)
    ));
    assert_eq!(format!("{master:?}"), "MasterKey([redacted])");
}

#[test]
fn properties_split_and_join_keeping_values_verbatim() {
    let raw =
        RawValue::from_string(r#"{"b": 1.10, "a":{"x":[1, 2]}, "c":"\u00e9"}"#.into()).unwrap();
    let entries = properties::split(&raw).unwrap();
    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["b", "a", "c"]);
    assert_eq!(
        properties::join(&entries).get(),
        r#"{"b":1.10,"a":{"x":[1, 2]},"c":"\u00e9"}"#
    );
    assert!(properties::split(&RawValue::from_string("[1]".into()).unwrap()).is_none());
    let sealed = properties::string_value("\0w1.abc");
    assert_eq!(sealed.get(), r#""\u0000w1.abc""#);
    assert_eq!(properties::string_of(&sealed).as_deref(), Some("\0w1.abc"));

    // Values are found where they stand and replaced there, the rest kept as it is.
    let text = r#"{ "a" : [1, "]"] ,"b\"":{"c": 2.50},  "d":"x" }"#;
    let spans = properties::spans(text).unwrap();
    let found: Vec<(&str, &str)> = spans
        .iter()
        .map(|(key, span)| (key.as_str(), &text[span.clone()]))
        .collect();
    assert_eq!(
        found,
        [
            ("a", r#"[1, "]"]"#),
            ("b\"", r#"{"c": 2.50}"#),
            ("d", r#""x""#)
        ]
    );
    let (mut sealed, mut odd) = (String::new(), String::new());
    properties::push_sealed(&mut sealed, "\0w1.abc-_");
    properties::push_sealed(&mut odd, "not \"sealed\"");
    let replaced = [(spans[0].1.clone(), sealed), (spans[2].1.clone(), odd)];
    assert_eq!(
        properties::splice(text, &replaced).get(),
        r#"{ "a" : "\u0000w1.abc-_" ,"b\"":{"c": 2.50},  "d":"not \"sealed\"" }"#
    );
    assert!(properties::spans("[1]").is_none());
    for (text, entries) in [("{}", false), (" { \n } ", false), (r#"{"a":1}"#, true)] {
        let raw = RawValue::from_string(text.into()).unwrap();
        assert_eq!(properties::has_entries(&raw), entries, "{text}");
    }
}

#[test]
fn policies_validate_days_and_property_names() {
    let mut policy = PrivacyPolicy::default();
    assert!(policy.validate().is_ok());
    policy.retention.chat = Some(0);
    policy.retention.sessions = Some(36_501);
    policy.clear_properties = vec!["item".into(), "item".into(), String::new()];
    policy.personal_properties = vec!["email".into(), "email".into(), "item".into()];
    let errors = policy.validate().unwrap_err();
    let fields: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.field.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("retention.chat", "out_of_range"),
            ("retention.sessions", "out_of_range"),
            ("clear_properties[1]", "duplicate"),
            ("clear_properties[2]", "invalid_length"),
            ("personal_properties[1]", "duplicate"),
        ]
    );
}

#[test]
fn every_property_is_personal_but_those_kept_in_clear() {
    let mut policy = PrivacyPolicy::default();
    assert!(policy.is_personal_property("email"));
    assert!(policy.is_personal_property("item"));
    policy.clear_properties = vec!["item".into()];
    assert!(policy.is_personal_property("email"));
    assert!(!policy.is_personal_property("item"));
}

#[test]
fn a_stored_policy_of_the_old_shape_reads_and_drops_its_personal_list() {
    // The old shape: retention and the personal properties, the only ones then sealed.
    let old = r#"{"retention":{"chat":90},"personal_properties":["email"]}"#;
    let policy: PrivacyPolicy = serde_json::from_str(old).unwrap();
    assert_eq!(policy.retention.chat, Some(90));
    assert!(policy.clear_properties.is_empty(), "everything is sealed");
    assert!(policy.is_personal_property("email") && policy.is_personal_property("item"));
    let stored = serde_json::to_value(policy.clone().normalized()).unwrap();
    assert_eq!(
        stored,
        serde_json::json!({
            "retention": {"chat": 90, "ip_hashes": null, "sessions": null,
                          "custom_events": null, "anticheat_flags": null},
            "clear_properties": []
        })
    );

    // Sent with a clear list, the old list keeps its meaning: what it names stays sealed.
    let both: PrivacyPolicy = serde_json::from_str(
        r#"{"clear_properties":["email","item"],"personal_properties":["email","ip"]}"#,
    )
    .unwrap();
    assert!(both.validate().is_ok());
    let both = both.normalized();
    assert_eq!(both.clear_properties, ["item"]);
    assert!(both.personal_properties.is_empty());
}

#[test]
fn retention_cutoffs_follow_the_days_set() {
    let now = Utc.with_ymd_and_hms(2026, 11, 24, 12, 0, 0).unwrap();
    let mut policy = PrivacyPolicy::default();
    assert_eq!(policy.cutoff(RetentionKind::Chat, now), None);
    policy.retention.chat = Some(90);
    let cutoff = policy.cutoff(RetentionKind::Chat, now).unwrap();
    assert_eq!(cutoff, Utc.with_ymd_and_hms(2026, 8, 26, 12, 0, 0).unwrap());
    assert!(policy.expired(
        RetentionKind::Chat,
        cutoff - chrono::Duration::seconds(1),
        now
    ));
    assert!(!policy.expired(RetentionKind::Chat, cutoff, now));
    assert!(!policy.expired(
        RetentionKind::Sessions,
        cutoff - chrono::Duration::days(999),
        now
    ));
    assert_eq!(RetentionKind::Chat.class(), Some(FieldClass::Chat));
    assert_eq!(RetentionKind::Sessions.class(), None);
}
