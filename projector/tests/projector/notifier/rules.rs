//! Every rule kind makes the right outbox rows, with the payload `data` of the design.

use super::{Notifying, Row};
use crate::harness::logged;
use chrono::{Duration, SubsecRound, Utc};
use serde_json::{Value, json};
use shared::records::{AnticheatFlag, CustomEvent, Heartbeat, Punishment, RankChange, Session};
use uuid::Uuid;

fn of_rule(rows: &[Row], rule: Uuid) -> Vec<&Row> {
    rows.iter().filter(|r| r.rule_id == Some(rule)).collect()
}

#[tokio::test]
async fn punishments_issued_and_revoked_match_their_types() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    let second = n.destination(account).await?;
    let bans = n
        .rule(
            account,
            Some("Bans"),
            json!({"kind": "punishment_issued", "punishment_types": ["ban"]}),
            &[destination, second],
        )
        .await?;
    let revokes = n
        .rule(
            account,
            None,
            json!({"kind": "punishment_revoked"}),
            &[destination],
        )
        .await?;
    let (server, player, staff) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let ban_id = Uuid::now_v7();
    let ban = crate::harness::logged_as::<Punishment>(
        ban_id,
        &format!(
            r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"Griefer",
                "type":"ban","reason":"x-ray","staff_uuid":"{staff}","staff_name":"Mod",
                "issued_at":"2025-03-01T10:00:00Z","expires_at":"2025-04-01T10:00:00Z"}}"#
        ),
    );
    let mute = logged::<Punishment>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","type":"mute"}}"#
    ));
    let sequence = n.h.publish(account, Utc::now(), vec![ban, mute]).await?;
    let revoke = logged::<Punishment>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","type":"ban","action":"revoke",
            "punishment_id":"{ban_id}","revoke_reason":"appeal","staff_name":"Admin",
            "issued_at":"2025-03-02T10:00:00Z"}}"#
    ));
    n.h.publish(account, Utc::now(), vec![revoke]).await?;

    let rows = n.rows_reach(account, 3).await?;
    let issued = of_rule(&rows, bans);
    assert_eq!(issued.len(), 2, "one row per destination of the rule");
    let destinations: Vec<Uuid> = issued.iter().map(|r| r.destination_id).collect();
    assert!(destinations.contains(&destination) && destinations.contains(&second));
    assert_eq!(issued[0].payload, issued[1].payload);
    assert_eq!(issued[0].event_type, "punishment.issued");
    assert_eq!(issued[0].source_sequence, Some(sequence as i64));
    assert_eq!(
        issued[0].payload,
        json!({
            "rule_id": bans, "rule_name": "Bans", "account_id": account,
            "punishment_id": ban_id, "punishment_type": "ban",
            "player_uuid": player, "player_name": "Griefer", "reason": "x-ray",
            "staff_uuid": staff, "staff_name": "Mod", "server_id": server,
            "issued_at": "2025-03-01T10:00:00Z", "expires_at": "2025-04-01T10:00:00Z",
        })
    );
    let revoked = of_rule(&rows, revokes);
    assert_eq!(revoked.len(), 1);
    assert_eq!(revoked[0].event_type, "punishment.revoked");
    assert_eq!(
        revoked[0].payload,
        json!({
            "rule_id": revokes, "rule_name": null, "account_id": account,
            "punishment_id": ban_id, "punishment_type": "ban",
            "player_uuid": player, "player_name": null, "reason": null,
            "staff_uuid": null, "staff_name": "Admin", "server_id": server,
            "issued_at": "2025-03-02T10:00:00Z", "expires_at": null,
            "revoke_reason": "appeal",
        })
    );
    Ok(())
}

#[tokio::test]
async fn anticheat_threshold_fires_once_per_burst() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    let rule = n
        .rule(
            account,
            Some("Fly"),
            json!({"kind": "anticheat_threshold", "flags": 3, "window_seconds": 60}),
            &[destination],
        )
        .await?;
    let only_speed = n
        .rule(
            account,
            None,
            json!({"kind": "anticheat_threshold", "flags": 2, "window_seconds": 60,
                   "check": "Speed"}),
            &[destination],
        )
        .await?;
    let (server, player, other, speedy) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let flag = |who: Uuid, check: &str| {
        logged::<AnticheatFlag>(&format!(
            r#"{{"server_id":"{server}","player_uuid":"{who}","player_name":"Cheater",
                "check_name":"{check}","violation_level":1.0}}"#
        ))
    };
    let start = Utc::now();
    // Two flags each for two players: under the threshold of 3.
    n.h.publish(
        account,
        start,
        vec![flag(player, "Fly"), flag(player, "Reach")],
    )
    .await?;
    n.h.publish(account, start, vec![flag(other, "Fly"), flag(other, "Fly")])
        .await?;
    n.caught_up().await?;
    assert!(n.rows(account).await?.is_empty());
    // The third flag of `player` in the window crosses it; more in the same burst do not.
    n.h.publish(
        account,
        start + Duration::seconds(5),
        vec![flag(player, "Fly")],
    )
    .await?;
    n.h.publish(
        account,
        start + Duration::seconds(6),
        vec![flag(player, "Fly")],
    )
    .await?;
    let rows = n.rows_reach(account, 1).await?;
    assert_eq!(rows[0].event_type, "anticheat.threshold");
    let mut payload = rows[0].payload.clone();
    let mut checks: Vec<String> = serde_json::from_value(payload["checks"].take())?;
    checks.sort();
    assert_eq!(checks, ["Fly", "Reach"]);
    assert_eq!(
        payload,
        json!({
            "rule_id": rule, "rule_name": "Fly", "account_id": account,
            "player_uuid": player, "player_name": "Cheater", "server_id": server,
            "flags": 3, "window_seconds": 60, "checks": null,
        })
    );
    // Two Speed flags of another player: only the Speed rule fires.
    n.h.publish(
        account,
        start + Duration::seconds(7),
        vec![flag(speedy, "Speed")],
    )
    .await?;
    n.h.publish(
        account,
        start + Duration::seconds(8),
        vec![flag(speedy, "Speed")],
    )
    .await?;
    let rows = n.rows_reach(account, 2).await?;
    assert_eq!(rows[1].rule_id, Some(only_speed));
    assert_eq!(rows[1].payload["flags"], json!(2));
    assert_eq!(rows[1].payload["checks"], json!(["Speed"]));
    // A full window without reaching the threshold, then a new burst fires again.
    let later = start + Duration::seconds(200);
    n.h.publish(
        account,
        later,
        vec![
            flag(player, "Fly"),
            flag(player, "Fly"),
            flag(player, "Fly"),
        ],
    )
    .await?;
    let rows = n.rows_reach(account, 3).await?;
    assert_eq!(rows[2].rule_id, Some(rule));
    assert_eq!(rows[2].payload["flags"], json!(3));
    Ok(())
}

#[tokio::test]
async fn heartbeats_drive_offline_online_and_tps_rules() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    let offline = n
        .rule(
            account,
            None,
            json!({"kind": "server_offline"}),
            &[destination],
        )
        .await?;
    let online = n
        .rule(
            account,
            None,
            json!({"kind": "server_online"}),
            &[destination],
        )
        .await?;
    let tps = n
        .rule(
            account,
            Some("Lag"),
            json!({"kind": "tps_low", "below": 15.0, "minutes": 1}),
            &[destination],
        )
        .await?;
    let (server, elsewhere) = (Uuid::now_v7(), Uuid::now_v7());
    // A rule limited to another server never fires here.
    n.rule(
        account,
        None,
        json!({"kind": "server_offline", "server_id": elsewhere}),
        &[destination],
    )
    .await?;
    let beat = |tps: f64, online: bool| {
        logged::<Heartbeat>(&format!(
            r#"{{"server_id":"{server}","name":"Lobby","tps":{tps},"player_count":1,
                "max_players":10,"online":{online}}}"#
        ))
    };
    // Microseconds, as PostgreSQL keeps the times the notifier stores.
    let t0 = Utc::now().trunc_subsecs(6);
    n.h.publish(account, t0, vec![beat(20.0, true)]).await?;
    let stopping = t0 + Duration::seconds(1);
    n.h.publish(account, stopping, vec![beat(20.0, false)])
        .await?;
    n.h.publish(account, t0 + Duration::seconds(2), vec![beat(20.0, true)])
        .await?;
    let rows = n.rows_reach(account, 2).await?;
    assert_eq!(rows[0].rule_id, Some(offline));
    assert_eq!(rows[0].event_type, "server.offline");
    let at = |t: chrono::DateTime<Utc>| json!(t);
    assert_eq!(
        rows[0].payload,
        json!({"rule_id": offline, "rule_name": null, "account_id": account,
               "server_id": server, "server_name": "Lobby",
               "last_heartbeat_at": at(stopping)})
    );
    assert_eq!(rows[1].rule_id, Some(online), "{rows:#?}");
    assert_eq!(rows[1].event_type, "server.online");
    assert_eq!(rows[1].payload["offline_since"], at(stopping));

    // Low TPS for a minute of heartbeats, then back.
    let low = t0 + Duration::seconds(10);
    n.h.publish(account, low, vec![beat(9.5, true)]).await?;
    n.h.publish(account, low + Duration::seconds(30), vec![beat(8.0, true)])
        .await?;
    n.caught_up().await?;
    assert_eq!(n.rows(account).await?.len(), 2, "not low for a minute yet");
    n.h.publish(account, low + Duration::seconds(61), vec![beat(7.0, true)])
        .await?;
    n.h.publish(account, low + Duration::seconds(70), vec![beat(19.0, true)])
        .await?;
    let rows = n.rows_reach(account, 4).await?;
    assert_eq!(rows[2].event_type, "server.tps_low");
    assert_eq!(
        rows[2].payload,
        json!({"rule_id": tps, "rule_name": "Lag", "account_id": account,
               "server_id": server, "server_name": "Lobby", "tps": 7.0, "below": 15.0,
               "minutes": 1, "since": at(low)})
    );
    assert_eq!(rows[3].event_type, "server.tps_recovered");
    assert_eq!(
        rows[3].payload,
        json!({"rule_id": tps, "rule_name": "Lag", "account_id": account,
               "server_id": server, "server_name": "Lobby", "tps": 19.0, "below": 15.0,
               "since": at(low)})
    );
    Ok(())
}

#[tokio::test]
async fn a_banned_players_alt_joining_is_found_through_the_read_models() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    let rule = n
        .rule(
            account,
            None,
            json!({"kind": "banned_alt_joined"}),
            &[destination],
        )
        .await?;
    let (server, banned, alt, stranger) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let join = |who: Uuid, name: &str, hash: &str| {
        logged::<Session>(&format!(
            r#"{{"server_id":"{server}","player_uuid":"{who}","player_name":"{name}",
                "event":"join","ip_hash":"{hash}"}}"#
        ))
    };
    n.h.publish(account, Utc::now(), vec![join(banned, "Banned", "hash-a")])
        .await?;
    let ban = logged::<Punishment>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{banned}","type":"ban"}}"#
    ));
    let applied = n.h.publish(account, Utc::now(), vec![ban]).await?;
    // The rule reads the projector's read models: let them hold the ban first.
    n.h.caught_up_to(applied).await?;
    n.h.publish(
        account,
        Utc::now(),
        vec![join(stranger, "Stranger", "hash-b")],
    )
    .await?;
    n.h.publish(account, Utc::now(), vec![join(alt, "Alt", "hash-a")])
        .await?;
    let rows = n.rows_reach(account, 1).await?;
    assert_eq!(rows[0].event_type, "player.banned_alt_joined");
    assert_eq!(
        rows[0].payload,
        json!({"rule_id": rule, "rule_name": null, "account_id": account,
               "player_uuid": alt, "player_name": "Alt", "server_id": server,
               "banned_alts": [{"uuid": banned, "username": "Banned"}]})
    );
    Ok(())
}

#[tokio::test]
async fn rank_changes_across_the_staff_groups_and_custom_events() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    n.settings(account, &["Moderator"], 15).await?;
    let both = n
        .rule(
            account,
            None,
            json!({"kind": "staff_rank_change"}),
            &[destination],
        )
        .await?;
    let into = n
        .rule(
            account,
            None,
            json!({"kind": "staff_rank_change", "direction": "into"}),
            &[destination],
        )
        .await?;
    let votes = n
        .rule(
            account,
            Some("Votes"),
            json!({"kind": "custom_event", "event_name": "vote"}),
            &[destination],
        )
        .await?;
    let player = Uuid::now_v7();
    let change = |action: &str, group: &str, previous: &str| {
        logged::<RankChange>(&format!(
            r#"{{"player_uuid":"{player}","player_name":"Alex","action":"{action}",
                "group":"{group}","previous_group":"{previous}","staff_name":"Owner"}}"#
        ))
    };
    n.h.publish(
        account,
        Utc::now(),
        vec![
            change("set", "moderator", "default"),
            change("set", "vip", "default"),
            change("set", "default", "moderator"),
        ],
    )
    .await?;
    let event = |name: &str| {
        logged::<CustomEvent>(&crate::harness::custom_event(
            player,
            name,
            r#"{"site":"topg","streak":3}"#,
        ))
    };
    n.h.publish(account, Utc::now(), vec![event("vote")])
        .await?;
    n.h.publish(account, Utc::now(), vec![event("shop_buy")])
        .await?;

    let rows = n.rows_reach(account, 4).await?;
    let joined: Vec<&Row> = rows
        .iter()
        .filter(|r| r.event_type == "rank.staff_joined")
        .collect();
    assert_eq!(joined.len(), 2, "both rules see the way in");
    assert_eq!(
        joined[0].payload,
        json!({"rule_id": both, "rule_name": null, "account_id": account,
               "player_uuid": player, "player_name": "Alex", "group": "moderator",
               "previous_group": "default", "staff_name": "Owner"})
    );
    assert_eq!(joined[1].rule_id, Some(into));
    let left: Vec<&Row> = rows
        .iter()
        .filter(|r| r.event_type == "rank.staff_left")
        .collect();
    assert_eq!(
        left.len(),
        1,
        "only the rule for both ways sees the way out"
    );
    assert_eq!(left[0].rule_id, Some(both));
    assert_eq!(left[0].payload["group"], json!("default"));
    let custom = of_rule(&rows, votes);
    assert_eq!(custom.len(), 1);
    assert_eq!(custom[0].event_type, "event.custom");
    assert_eq!(
        custom[0].payload,
        json!({"rule_id": votes, "rule_name": "Votes", "account_id": account,
               "name": "vote", "player_uuid": player,
               "properties": {"site": "topg", "streak": 3},
               "occurred_at": "2025-03-01T11:00:00Z"})
    );
    Ok(())
}

#[tokio::test]
async fn odd_records_and_bad_rule_rows_never_stop_the_notifier() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    // A spec the API would never store (unknown kind, then a wrong type) is skipped.
    n.rule(account, None, json!({"kind": "nonsense"}), &[destination])
        .await?;
    n.rule(
        account,
        None,
        json!({"kind": "anticheat_threshold", "flags": "many", "window_seconds": 1}),
        &[destination],
    )
    .await?;
    let rule = n
        .rule(
            account,
            None,
            json!({"kind": "punishment_issued"}),
            &[destination],
        )
        .await?;
    // Bytes that are no log message, and a message of an unknown envelope version.
    let subject = n.h.config.common.event_log.subjects().for_records(
        account,
        shared::records::RecordKind::Punishment,
        None,
    );
    n.h.publish_raw(subject.clone(), b"\x00not json".to_vec())
        .await?;
    n.h.publish_raw(subject, br#"{"v":99,"account_id":"x"}"#.to_vec())
        .await?;
    let kick = logged::<Punishment>(&format!(
        r#"{{"server_id":"{}","player_uuid":"{}","type":"kick"}}"#,
        Uuid::now_v7(),
        Uuid::now_v7()
    ));
    n.h.publish(account, Utc::now(), vec![kick]).await?;
    let rows = n.rows_reach(account, 1).await?;
    assert_eq!(rows[0].rule_id, Some(rule));
    assert_eq!(rows[0].payload["punishment_type"], Value::from("kick"));
    Ok(())
}
