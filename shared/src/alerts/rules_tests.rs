use super::*;
use serde_json::json;

fn parse(value: Value) -> Result<RuleSpec, Vec<FieldError>> {
    RuleSpec::parse(&value)
}

/// The (field, code) pairs of a refusal.
fn refusal(value: Value) -> Vec<(String, String)> {
    parse(value.clone())
        .expect_err(&format!("{value} should be refused"))
        .into_iter()
        .map(|e| (e.field, e.code))
        .collect()
}

fn one(field: &str, code: &str) -> Vec<(String, String)> {
    vec![(field.to_owned(), code.to_owned())]
}

#[test]
fn every_kind_parses_with_its_fields() {
    let server = Uuid::new_v4();
    let cases = [
        (
            json!({"kind": "punishment_issued", "punishment_types": ["ban", "mute"]}),
            RuleSpec::PunishmentIssued {
                punishment_types: vec![PunishmentType::Ban, PunishmentType::Mute],
            },
        ),
        (
            json!({"kind": "punishment_revoked"}),
            RuleSpec::PunishmentRevoked {
                punishment_types: vec![],
            },
        ),
        (
            json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60}),
            RuleSpec::AnticheatThreshold {
                flags: 5,
                window_seconds: 60,
                check: None,
            },
        ),
        (
            json!({"kind": "anticheat_threshold", "flags": 2, "window_seconds": 3600, "check": "Reach"}),
            RuleSpec::AnticheatThreshold {
                flags: 2,
                window_seconds: 3600,
                check: Some("Reach".into()),
            },
        ),
        (
            json!({"kind": "server_offline", "server_id": server}),
            RuleSpec::ServerOffline {
                server_id: Some(server),
            },
        ),
        (
            json!({"kind": "server_online"}),
            RuleSpec::ServerOnline { server_id: None },
        ),
        (
            json!({"kind": "tps_low", "below": 15.5, "minutes": 5}),
            RuleSpec::TpsLow {
                below: 15.5,
                minutes: 5,
                server_id: None,
            },
        ),
        (
            json!({"kind": "banned_alt_joined"}),
            RuleSpec::BannedAltJoined {},
        ),
        (
            json!({"kind": "staff_rank_change"}),
            RuleSpec::StaffRankChange {
                direction: StaffDirection::Both,
            },
        ),
        (
            json!({"kind": "staff_rank_change", "direction": "out_of"}),
            RuleSpec::StaffRankChange {
                direction: StaffDirection::OutOf,
            },
        ),
        (
            json!({"kind": "custom_event", "event_name": "vote_received"}),
            RuleSpec::CustomEvent {
                event_name: "vote_received".into(),
            },
        ),
    ];
    let mut kinds = std::collections::HashSet::new();
    for (value, expected) in cases {
        let spec = parse(value.clone()).unwrap_or_else(|e| panic!("{value}: {e:?}"));
        assert_eq!(spec, expected);
        assert_eq!(spec.kind(), value["kind"].as_str().expect("kind"));
        // What is stored reads back the same.
        assert_eq!(parse(spec.to_value()), Ok(spec.clone()));
        kinds.insert(spec.rule_kind());
    }
    assert_eq!(kinds.len(), RuleKind::ALL.len(), "every kind is covered");
}

#[test]
fn the_stored_spec_carries_the_kind() {
    let spec = RuleSpec::AnticheatThreshold {
        flags: 5,
        window_seconds: 60,
        check: None,
    };
    assert_eq!(
        spec.to_value(),
        json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60})
    );
    assert_eq!(
        RuleSpec::StaffRankChange {
            direction: StaffDirection::Into
        }
        .to_value(),
        json!({"kind": "staff_rank_change", "direction": "into"})
    );
}

#[test]
fn kind_is_required_and_must_be_known() {
    assert_eq!(
        refusal(json!({"punishment_types": []})),
        one("kind", "required")
    );
    assert_eq!(refusal(json!({"kind": null})), one("kind", "required"));
    assert_eq!(
        refusal(json!({"kind": "punishment"})),
        one("kind", "unknown_kind")
    );
    assert_eq!(refusal(json!({"kind": 3})), one("kind", "unknown_kind"));
    assert_eq!(
        refusal(json!(["punishment_issued"])),
        one("", "invalid_type")
    );
    let message = &parse(json!({"kind": "x"})).expect_err("unknown")[0].message;
    assert!(message.contains("tps_low"), "lists the kinds: {message}");
}

#[test]
fn unknown_fields_are_refused_for_every_kind() {
    let valid = [
        json!({"kind": "punishment_issued"}),
        json!({"kind": "punishment_revoked"}),
        json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60}),
        json!({"kind": "server_offline"}),
        json!({"kind": "server_online"}),
        json!({"kind": "tps_low", "below": 15, "minutes": 5}),
        json!({"kind": "banned_alt_joined"}),
        json!({"kind": "staff_rank_change"}),
        json!({"kind": "custom_event", "event_name": "vote"}),
    ];
    for mut value in valid {
        assert!(parse(value.clone()).is_ok(), "{value}");
        value["punishment_type"] = json!("ban"); // a misspelling of punishment_types
        assert_eq!(refusal(value), one("punishment_type", "unknown_field"));
    }
    // A field of another kind is unknown too.
    assert_eq!(
        refusal(json!({"kind": "server_offline", "below": 10})),
        one("below", "unknown_field")
    );
}

#[test]
fn missing_and_mistyped_fields_are_refused() {
    assert_eq!(
        refusal(json!({"kind": "anticheat_threshold", "window_seconds": 60})),
        one("flags", "required")
    );
    assert_eq!(
        refusal(json!({"kind": "tps_low", "below": 15})),
        one("minutes", "required")
    );
    assert_eq!(
        refusal(json!({"kind": "custom_event"})),
        one("event_name", "required")
    );
    assert_eq!(
        refusal(json!({"kind": "anticheat_threshold", "flags": "5", "window_seconds": 60})),
        one("", "invalid_type")
    );
    assert_eq!(
        refusal(json!({"kind": "anticheat_threshold", "flags": -1, "window_seconds": 60})),
        one("", "invalid_type")
    );
    assert_eq!(
        refusal(json!({"kind": "punishment_issued", "punishment_types": ["jail"]})),
        one("", "invalid_type")
    );
    assert_eq!(
        refusal(json!({"kind": "staff_rank_change", "direction": "sideways"})),
        one("", "invalid_type")
    );
    assert_eq!(
        refusal(json!({"kind": "server_online", "server_id": "not-a-uuid"})),
        one("", "invalid_type")
    );
}

#[test]
fn ranges_are_checked() {
    let anticheat = |flags: u32, window: u32| json!({"kind": "anticheat_threshold", "flags": flags, "window_seconds": window});
    for (flags, window, field) in [
        (1, 60, "flags"),
        (1001, 60, "flags"),
        (5, 0, "window_seconds"),
        (5, 3601, "window_seconds"),
    ] {
        assert_eq!(
            refusal(anticheat(flags, window)),
            one(field, "out_of_range"),
            "{flags} {window}"
        );
    }
    assert!(parse(anticheat(1000, 1)).is_ok());
    assert_eq!(
        refusal(
            json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60, "check": ""})
        ),
        one("check", "invalid_length")
    );
    assert_eq!(
        refusal(
            json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60, "check": "a\u{0}"})
        ),
        one("check", "invalid_characters")
    );

    let tps =
        |below: f64, minutes: u32| json!({"kind": "tps_low", "below": below, "minutes": minutes});
    for (below, minutes, field) in [
        (0.0, 5, "below"),
        (-1.0, 5, "below"),
        (20.01, 5, "below"),
        (15.0, 0, "minutes"),
        (15.0, 1441, "minutes"),
    ] {
        assert_eq!(
            refusal(tps(below, minutes)),
            one(field, "out_of_range"),
            "{below} {minutes}"
        );
    }
    assert!(parse(tps(20.0, 1440)).is_ok());
    assert!(parse(tps(0.1, 1)).is_ok());
    // A non-finite threshold cannot come from JSON, but validate refuses it anyway.
    let nan = RuleSpec::TpsLow {
        below: f64::NAN,
        minutes: 5,
        server_id: None,
    };
    assert!(nan.validate().is_err());
}

#[test]
fn punishment_types_may_not_repeat() {
    assert_eq!(
        refusal(json!({"kind": "punishment_issued", "punishment_types": ["ban", "ban"]})),
        one("punishment_types", "duplicate")
    );
    assert!(parse(json!({"kind": "punishment_revoked", "punishment_types": ["ban", "mute", "kick", "warning"]})).is_ok());
}

#[test]
fn custom_event_names_follow_the_event_name_rules() {
    let custom = |name: &str| json!({"kind": "custom_event", "event_name": name});
    assert_eq!(
        refusal(custom("Vote")),
        one("event_name", "invalid_event_name")
    );
    assert_eq!(refusal(custom("")), one("event_name", "invalid_event_name"));
    assert_eq!(
        refusal(custom(&"a".repeat(65))),
        one("event_name", "invalid_event_name")
    );
    assert_eq!(
        refusal(custom("punish_ban")),
        one("event_name", "reserved_prefix")
    );
    assert!(parse(custom(&"a".repeat(64))).is_ok());
}

#[test]
fn kinds_round_trip_through_text() {
    for kind in RuleKind::ALL {
        assert_eq!(RuleKind::parse(kind.as_str()), Some(kind));
        assert_eq!(
            serde_json::to_value(kind).expect("serialize"),
            json!(kind.as_str())
        );
    }
    assert_eq!(RuleKind::parse("nope"), None);
}

#[test]
fn server_rules_expose_their_server() {
    let id = Uuid::new_v4();
    assert_eq!(
        RuleSpec::TpsLow {
            below: 10.0,
            minutes: 1,
            server_id: Some(id)
        }
        .server_id(),
        Some(id)
    );
    assert_eq!(RuleSpec::ServerOnline { server_id: None }.server_id(), None);
    assert_eq!(RuleSpec::BannedAltJoined {}.server_id(), None);
}

#[test]
fn counts_written_as_whole_number_floats_are_integers() {
    assert_eq!(
        parse(json!({"kind": "anticheat_threshold", "flags": 5.0, "window_seconds": 6e1})),
        Ok(RuleSpec::AnticheatThreshold {
            flags: 5,
            window_seconds: 60,
            check: None,
        })
    );
    assert_eq!(
        parse(json!({"kind": "tps_low", "below": 15, "minutes": 10.0})),
        Ok(RuleSpec::TpsLow {
            below: 15.0,
            minutes: 10,
            server_id: None,
        })
    );
    let codes = refusal(json!({"kind": "tps_low", "below": 15, "minutes": 10.5}));
    assert_eq!(codes, one("", "invalid_type"));
}
