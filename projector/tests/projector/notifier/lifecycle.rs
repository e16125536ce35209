//! The notifier over time: its first start, restarts, a rebuild of the read models, and the
//! clock's sweep.

use super::{Notifying, checkpoint};
use crate::harness::logged;
use chrono::{DateTime, Duration, SubsecRound, Utc};
use projector::rebuild::{RebuildOptions, rebuild};
use serde_json::json;
use shared::envelope::Logged;
use shared::records::{Heartbeat, Punishment};
use std::collections::BTreeSet;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

fn ban() -> Logged<Punishment> {
    logged(&format!(
        r#"{{"server_id":"{}","player_uuid":"{}","type":"ban"}}"#,
        Uuid::now_v7(),
        Uuid::now_v7()
    ))
}

#[tokio::test]
async fn the_first_start_begins_at_the_end_of_the_log_and_rules_never_see_the_past()
-> anyhow::Result<()> {
    let mut n = Notifying::prepare().await?;
    let (account, destination) = n.account().await?;
    let rule = n
        .rule(
            account,
            None,
            json!({"kind": "punishment_issued"}),
            &[destination],
        )
        .await?;
    // Logged before the notifier ever ran: never notified.
    n.h.publish(account, Utc::now(), vec![ban(), ban()]).await?;
    n.h.publish(account, Utc::now(), vec![ban()]).await?;
    n.h.caught_up().await?;
    n.start_notifier().await?;
    let start = n.caught_up().await?;
    let stream = &n.h.config.common.event_log.stream;
    assert_eq!(checkpoint(n.pool(), stream).await?, Some(start as i64));

    // A rule sees only what was received from its creation on.
    let created_at: DateTime<Utc> =
        sqlx::query_scalar("SELECT created_at FROM alert_rules WHERE id = $1")
            .bind(rule)
            .fetch_one(n.pool())
            .await?;
    n.h.publish(account, created_at - Duration::seconds(1), vec![ban()])
        .await?;
    let seen = n.h.publish(account, Utc::now(), vec![ban()]).await?;
    let rows = n.rows_reach(account, 1).await?;
    assert_eq!(rows[0].source_sequence, Some(seen as i64));
    n.caught_up().await?;
    assert_eq!(n.rows(account).await?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_restart_resumes_at_the_checkpoint_without_repeats() -> anyhow::Result<()> {
    let mut n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    n.rule(
        account,
        None,
        json!({"kind": "punishment_issued"}),
        &[destination],
    )
    .await?;
    n.h.publish(account, Utc::now(), vec![ban(), ban()]).await?;
    n.rows_reach(account, 2).await?;
    n.stop_notifier().await?;
    // Logged while the notifier is down: evaluated after its restart, once each.
    for _ in 0..3 {
        n.h.publish(account, Utc::now(), vec![ban()]).await?;
    }
    n.start_notifier().await?;
    let rows = n.rows_reach(account, 5).await?;
    n.caught_up().await?;
    assert_eq!(n.rows(account).await?.len(), 5);
    let sequences: BTreeSet<Option<i64>> = rows.iter().map(|r| r.source_sequence).collect();
    assert_eq!(
        sequences.len(),
        4,
        "one message of two bans, three of one: {rows:#?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_rebuild_of_the_read_models_sends_nothing_again() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    n.rule(
        account,
        None,
        json!({"kind": "punishment_issued"}),
        &[destination],
    )
    .await?;
    for _ in 0..3 {
        n.h.publish(account, Utc::now(), vec![ban()]).await?;
    }
    n.rows_reach(account, 3).await?;
    let stream = n.h.config.common.event_log.stream.clone();
    let before = checkpoint(n.pool(), &stream).await?;
    rebuild(
        &n.h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    n.h.caught_up().await?;
    assert_eq!(checkpoint(n.pool(), &stream).await?, before);
    assert_eq!(n.rows(account).await?.len(), 3);
    // And it keeps notifying what is new.
    n.h.publish(account, Utc::now(), vec![ban()]).await?;
    n.rows_reach(account, 4).await?;
    Ok(())
}

#[tokio::test]
async fn the_clock_marks_silent_servers_offline_and_long_low_tps() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    // Offline after 3 s of silence.
    n.settings(account, &[], 1).await?;
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
    let server = Uuid::now_v7();
    let beat = |tps: f64| {
        logged::<Heartbeat>(&format!(
            r#"{{"server_id":"{server}","name":"Survival","tps":{tps},"player_count":0,
                "max_players":10}}"#
        ))
    };
    let last = Utc::now().trunc_subsecs(6);
    n.h.publish(account, last, vec![beat(20.0)]).await?;
    let rows = n.rows_reach(account, 1).await?;
    assert_eq!(rows[0].rule_id, Some(offline));
    assert_eq!(rows[0].source_sequence, None, "the clock's notification");
    assert_eq!(
        rows[0].payload,
        json!({"rule_id": offline, "rule_name": null, "account_id": account,
               "server_id": server, "server_name": "Survival", "last_heartbeat_at": last})
    );
    let since: Option<DateTime<Utc>> = sqlx::query_scalar(
        "SELECT offline_since FROM alert_servers WHERE account_id = $1 AND server_id = $2",
    )
    .bind(account)
    .bind(server)
    .fetch_one(n.pool())
    .await?;
    let since = since.expect("marked offline");
    assert!(
        since >= last + Duration::seconds(3),
        "silent for 3 intervals first"
    );
    // Back online for good: 3 s after this heartbeat the clock would mark the server offline
    // again, a third row a slow poll could see beside the second.
    sqlx::query("UPDATE account_settings SET sync_interval_seconds = 3600 WHERE account_id = $1")
        .bind(account)
        .execute(n.pool())
        .await?;
    n.h.publish(account, Utc::now(), vec![beat(20.0)]).await?;
    let rows = n.rows_reach(account, 2).await?;
    assert_eq!(rows[1].rule_id, Some(online));
    assert_eq!(rows[1].payload["offline_since"], json!(since));

    // Low TPS: the sweep fires once the spell has lasted the rule's minutes, without waiting
    // for another heartbeat. (The rule is made older than the heartbeat it must see.)
    let (other, other_destination) = n.account().await?;
    n.settings(other, &[], 3600).await?;
    let tps = n
        .rule(
            other,
            None,
            json!({"kind": "tps_low", "below": 18, "minutes": 1}),
            &[other_destination],
        )
        .await?;
    sqlx::query("UPDATE alert_rules SET created_at = now() - interval '5 minutes' WHERE id = $1")
        .bind(tps)
        .execute(n.pool())
        .await?;
    let low_since = (Utc::now() - Duration::seconds(90)).trunc_subsecs(6);
    n.h.publish(other, low_since, vec![beat(5.0)]).await?;
    let rows = n.rows_reach(other, 1).await?;
    assert_eq!(rows[0].event_type, "server.tps_low");
    assert_eq!(rows[0].source_sequence, None);
    assert_eq!(
        rows[0].payload,
        json!({"rule_id": tps, "rule_name": null, "account_id": other,
               "server_id": server, "server_name": "Survival", "tps": 5.0, "below": 18.0,
               "minutes": 1, "since": low_since})
    );
    // Once fired, never again for the same spell: the state says so, and another low
    // heartbeat adds nothing.
    let fired: Option<DateTime<Utc>> =
        sqlx::query_scalar("SELECT fired_at FROM alert_rule_state WHERE rule_id = $1")
            .bind(tps)
            .fetch_one(n.pool())
            .await?;
    assert!(fired.is_some());
    n.h.publish(other, Utc::now(), vec![beat(4.0)]).await?;
    n.caught_up().await?;
    assert_eq!(n.rows(other).await?.len(), 1);
    Ok(())
}
