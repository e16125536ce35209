//! Records land on the timeline with the right names, columns and exact properties text.

use crate::harness::{Harness, custom_event, logged};
use chrono::{DateTime, Utc};
use shared::envelope::event_seq;
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session,
};
use uuid::Uuid;

type Row = (
    Uuid,
    i64,
    String,
    bool,
    Option<Uuid>,
    Option<Uuid>,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
);

async fn rows(h: &Harness, account: Uuid) -> anyhow::Result<Vec<Row>> {
    Ok(sqlx::query_as(
        "SELECT id, seq, name, is_internal, player_uuid, server_id, properties::text,
                occurred_at, received_at
         FROM events WHERE account_id = $1 ORDER BY seq",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

#[tokio::test]
async fn custom_and_internal_events_land_with_exact_properties() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player, server) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let received: DateTime<Utc> = "2025-03-01T12:00:00.123456Z".parse()?;
    // Number formats jsonb would rewrite, key order, duplicates-free nesting, unicode escapes.
    let properties = r#"{"z":1.10,"a":[1,null,{"deep":{"x":1e3}}],"big":123456789012345678901234567890,"s":"\u00e9\n"}"#;

    let custom = logged::<CustomEvent>(&custom_event(player, "crate_opened", properties));
    let s1 = h.publish(account, received, vec![custom.clone()]).await?;
    let join = logged::<Session>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"Notch","event":"join",
            "client_version":"1.21.4","ip_hash":"secret-hash","at":"2025-03-01T11:58:00Z"}}"#
    ));
    let s2 = h.publish(account, received, vec![join.clone()]).await?;
    let chat = logged::<ChatEntry>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","entry_type":"command","message":"/spawn",
            "sent_at":"2025-03-01T11:59:00Z"}}"#
    ));
    let s3 = h.publish(account, received, vec![chat]).await?;
    let ban = logged::<Punishment>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","type":"mute","reason":"spam",
            "issued_at":"2025-03-01T11:59:30Z"}}"#
    ));
    let revoke = logged::<Punishment>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","type":"mute","action":"revoke",
            "punishment_id":"{}","issued_at":"2025-03-01T11:59:40Z"}}"#,
        ban.id
    ));
    let s4 = h.publish(account, received, vec![ban, revoke]).await?;
    let rank = logged::<RankChange>(&format!(
        r#"{{"player_uuid":"{player}","action":"add","group":"vip","changed_at":"2025-03-01T11:59:50Z"}}"#
    ));
    let s5 = h.publish(account, received, vec![rank]).await?;
    // No timeline rows for these, but they move the checkpoint.
    h.publish(
        account,
        received,
        vec![logged::<Heartbeat>(&format!(
            r#"{{"server_id":"{server}","tps":19.9,"player_count":1,"max_players":20}}"#
        ))],
    )
    .await?;
    h.publish(account, received, vec![logged::<AnticheatFlag>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","check_name":"Reach","violation_level":1.5}}"#
    ))])
    .await?;
    h.publish(
        account,
        received,
        vec![logged::<AccountLink>(&format!(
            r#"{{"player_uuid":"{player}","platform":"discord","external_id":"1","action":"link"}}"#
        ))],
    )
    .await?;
    h.caught_up().await?;

    let rows = rows(&h, account).await?;
    let names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        names,
        [
            "crate_opened",
            "session_join",
            "chat_command",
            "punish_mute",
            "punish_revoke",
            "rank_change"
        ]
    );
    let seqs: Vec<i64> = rows.iter().map(|r| r.1).collect();
    assert_eq!(
        seqs,
        [
            event_seq(s1, 0),
            event_seq(s2, 0),
            event_seq(s3, 0),
            event_seq(s4, 0),
            event_seq(s4, 1),
            event_seq(s5, 0)
        ]
    );

    let (id, _, _, internal, player_uuid, server_id, props, occurred_at, received_at) = &rows[0];
    assert_eq!(*id, custom.id);
    assert!(!internal);
    assert_eq!(*player_uuid, Some(player));
    assert_eq!(*server_id, None);
    assert_eq!(
        props, properties,
        "custom properties come back byte for byte"
    );
    assert_eq!(occurred_at.to_rfc3339(), "2025-03-01T11:00:00+00:00");
    assert_eq!(*received_at, received);

    let join_row = &rows[1];
    assert_eq!(join_row.0, join.id);
    assert!(join_row.3);
    assert_eq!(join_row.5, Some(server));
    assert_eq!(
        join_row.6,
        r#"{"client_version":"1.21.4","player_name":"Notch"}"#
    );
    assert_eq!(join_row.7.to_rfc3339(), "2025-03-01T11:58:00+00:00");

    assert_eq!(
        rows[2].6,
        r#"{"channel":null,"message":"/spawn","player_name":null}"#
    );
    let mute: serde_json::Value = serde_json::from_str(&rows[3].6)?;
    assert_eq!(mute["type"], "mute");
    assert_eq!(mute["reason"], "spam");
    assert!(mute.get("player_uuid").is_none() && mute.get("server_id").is_none());
    assert_eq!(rows[5].5, None, "a network-wide rank change has no server");
    Ok(())
}

#[tokio::test]
async fn two_accounts_events_stay_separated() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (first, second, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    // The same client id under two accounts is two events.
    let shared_id = Uuid::now_v7();
    let event = |name: &str| {
        crate::harness::logged_as::<CustomEvent>(shared_id, &custom_event(player, name, "{}"))
    };
    h.publish(first, Utc::now(), vec![event("first_only")])
        .await?;
    h.publish(second, Utc::now(), vec![event("second_only")])
        .await?;
    h.caught_up().await?;

    let first_rows = rows(&h, first).await?;
    let second_rows = rows(&h, second).await?;
    assert_eq!(first_rows.len(), 1);
    assert_eq!(first_rows[0].2, "first_only");
    assert_eq!(second_rows.len(), 1);
    assert_eq!(second_rows[0].2, "second_only");
    Ok(())
}
