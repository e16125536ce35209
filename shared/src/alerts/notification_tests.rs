use super::*;
use chrono::TimeZone;

#[test]
fn event_types_round_trip_through_text_and_serde() {
    for t in EventType::ALL {
        assert_eq!(EventType::parse(t.as_str()), Some(t));
        assert_eq!(
            serde_json::to_value(t).expect("serialize"),
            json!(t.as_str())
        );
    }
    assert_eq!(EventType::PunishmentIssued.as_str(), "punishment.issued");
    assert_eq!(EventType::RankStaffLeft.as_str(), "rank.staff_left");
    assert_eq!(EventType::parse("punishment_issued"), None);
}

#[test]
fn the_body_is_type_timestamp_and_data() {
    let at = Utc
        .with_ymd_and_hms(2026, 11, 24, 10, 0, 5)
        .single()
        .expect("time");
    let data = json!({"rule_id": null, "player_name": "Steve"});
    let body = body("punishment.issued", at, &data);
    let parsed: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(
        parsed,
        json!({
            "type": "punishment.issued",
            "timestamp": "2026-11-24T10:00:05.000Z",
            "data": {"rule_id": null, "player_name": "Steve"},
        })
    );
}

#[test]
fn test_data_names_the_destination() {
    let account = Uuid::new_v4();
    let destination = Uuid::new_v4();
    let data = test_data(account, destination);
    assert_eq!(data["account_id"], json!(account));
    assert_eq!(data["destination_id"], json!(destination));
    assert_eq!(data["message"], json!(TEST_MESSAGE));
    assert_eq!(data["rule_id"], Value::Null);
    assert_eq!(data["rule_name"], Value::Null);
}
