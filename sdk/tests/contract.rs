//! The SDK's record types against the service's own (`shared::records`): every record the SDK
//! serializes must deserialize into the service's type and pass its validation, so the two
//! never drift apart.

use chrono::{Duration, Utc};
use serde::de::DeserializeOwned;
use serde_json::json;
use shared::records as service;
use uuid::Uuid;
use warden_sdk as sdk;

/// Serializes `record` as the SDK sends it and checks the service accepts it.
fn accepted_by<S: service::PluginRecord + DeserializeOwned>(record: &impl serde::Serialize) -> S {
    let text = serde_json::to_string(record).expect("the SDK record serializes");
    let parsed: S = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the service cannot read {text}: {e}"));
    if let Err(errors) = parsed.validate(Utc::now()) {
        panic!("the service rejects {text}: {errors:?}");
    }
    parsed
}

fn ids() -> (Uuid, Uuid, Uuid) {
    (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7())
}

#[test]
fn every_record_kind_with_every_field_is_accepted() {
    let (server, player, staff) = ids();
    let now = Utc::now() - Duration::seconds(5);
    let heartbeat = sdk::Heartbeat {
        id: Some(Uuid::now_v7()),
        timestamp: Some(now),
        name: Some("Lobby".into()),
        version: Some("Paper 1.21.4".into()),
        memory_used_mb: Some(512.0),
        memory_max_mb: Some(2048.0),
        online: Some(true),
        role: Some(sdk::ServerRole::Proxy),
        ..sdk::Heartbeat::new(server, 19.5, 10, 100)
    };
    let parsed: service::Heartbeat = accepted_by(&heartbeat);
    assert_eq!((parsed.player_count, parsed.online), (10, Some(true)));
    assert_eq!(parsed.role, Some(service::ServerRole::Proxy));

    let chat = sdk::ChatEntry {
        player_name: Some("Notch".into()),
        channel: Some("global".into()),
        sent_at: Some(now),
        ..sdk::ChatEntry::new(server, player, sdk::ChatEntryType::Command, "/spawn")
    };
    let parsed: service::ChatEntry = accepted_by(&chat);
    assert_eq!(parsed.entry_type, service::ChatEntryType::Command);

    let ban = sdk::Punishment {
        player_name: Some("Notch".into()),
        reason: Some("x-ray".into()),
        staff_uuid: Some(staff),
        staff_name: Some("Mod".into()),
        issued_at: Some(now),
        expires_at: Some(now + Duration::days(7)),
        ip_based: Some(false),
        scope: Some("global".into()),
        ..sdk::Punishment::revoke(server, player, sdk::PunishmentType::Ban, "litebans", "42")
    };
    let parsed: service::Punishment = accepted_by(&ban);
    assert_eq!(parsed.action, service::PunishmentAction::Revoke);
    let issue = sdk::Punishment::issue(server, player, sdk::PunishmentType::Warning);
    let parsed: service::Punishment = accepted_by(&issue);
    assert_eq!(parsed.action, service::PunishmentAction::Issue);

    let flag = sdk::AnticheatFlag {
        player_name: Some("Notch".into()),
        check_type: Some("A".into()),
        detail: Some("reach 3.4".into()),
        source_plugin: Some("grim".into()),
        is_experimental: Some(false),
        ping_ms: Some(42.0),
        tps: Some(19.9),
        flagged_at: Some(now),
        ..sdk::AnticheatFlag::new(server, player, "Reach", 3.5)
    };
    let _: service::AnticheatFlag = accepted_by(&flag);

    let join = sdk::Session {
        at: Some(now),
        client_version: Some("1.21.4".into()),
        ip: Some("203.0.113.7".into()),
        ..sdk::Session::new(server, player, "Notch", sdk::SessionEvent::Join)
    };
    let parsed: service::Session = accepted_by(&join);
    assert_eq!(parsed.ip.as_deref(), Some("203.0.113.7"));

    let rank = sdk::RankChange {
        player_name: Some("Notch".into()),
        previous_group: Some("default".into()),
        server_id: Some(server),
        staff_uuid: Some(staff),
        staff_name: Some("Admin".into()),
        expires_at: Some(now + Duration::days(30)),
        changed_at: Some(now),
        ..sdk::RankChange::new(player, sdk::RankAction::Set, "vip")
    };
    let _: service::RankChange = accepted_by(&rank);

    let link = sdk::AccountLink {
        external_name: Some("notch#0001".into()),
        at: Some(now),
        ..sdk::AccountLink::new(player, "discord", "1234", sdk::LinkAction::Link)
    };
    let _: service::AccountLink = accepted_by(&link);

    let properties = json!({"tier": "gold", "n": 1.5, "nested": {"list": [1, null, true]}});
    let event = sdk::CustomEvent {
        occurred_at: Some(now),
        ..sdk::CustomEvent::new(player, "crate_opened").with_properties(properties.clone())
    };
    let parsed: service::CustomEvent = accepted_by(&event);
    let logged: serde_json::Value =
        serde_json::from_str(parsed.properties.expect("properties").get()).expect("json");
    assert_eq!(logged, properties);
}

#[test]
fn minimal_records_are_accepted_too() {
    let (server, player, _) = ids();
    let _: service::Heartbeat = accepted_by(&sdk::Heartbeat::new(server, 20.0, 0, 0));
    let _: service::ChatEntry = accepted_by(&sdk::ChatEntry::new(
        server,
        player,
        sdk::ChatEntryType::Chat,
        "hi",
    ));
    let _: service::AnticheatFlag =
        accepted_by(&sdk::AnticheatFlag::new(server, player, "Fly", 0.0));
    let _: service::Session = accepted_by(&sdk::Session::new(
        server,
        player,
        "Notch",
        sdk::SessionEvent::Quit,
    ));
    let _: service::RankChange =
        accepted_by(&sdk::RankChange::new(player, sdk::RankAction::Add, "mod"));
    let _: service::AccountLink = accepted_by(&sdk::AccountLink::new(
        player,
        "discord",
        "1",
        sdk::LinkAction::Unlink,
    ));
    let parsed: service::CustomEvent = accepted_by(&sdk::CustomEvent::new(player, "login_streak"));
    assert!(parsed.properties.is_none());
}

/// The SDK leaves the service's naming rules to the service (a 422), so it never drifts from them.
#[test]
fn the_sdk_rejects_nothing_the_service_would_reject_silently() {
    // A reserved prefix is the service's rule, not the SDK's: the SDK leaves it to the 422.
    let reserved = sdk::CustomEvent::new(Uuid::now_v7(), "chat_spam");
    let text = serde_json::to_string(&reserved).expect("serializes");
    let parsed: service::CustomEvent = serde_json::from_str(&text).expect("parses");
    assert!(service::PluginRecord::validate(&parsed, Utc::now()).is_err());
}
