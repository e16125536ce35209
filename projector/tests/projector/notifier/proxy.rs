//! A proxy's heartbeats (`role: proxy`) drive the server rules like a game server's: a proxy
//! going down takes every player off the network, so it is worth the same alert.

use super::Notifying;
use crate::harness::logged;
use chrono::{Duration, SubsecRound, Utc};
use serde_json::json;
use shared::records::Heartbeat;
use uuid::Uuid;

#[tokio::test]
async fn a_proxy_going_offline_and_back_fires_the_server_rules() -> anyhow::Result<()> {
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
    let proxy = Uuid::now_v7();
    let beat = |online: bool| {
        logged::<Heartbeat>(&format!(
            r#"{{"server_id":"{proxy}","name":"Velocity","tps":20,"player_count":40,
                "max_players":500,"online":{online},"role":"proxy"}}"#
        ))
    };
    let t0 = Utc::now().trunc_subsecs(6);
    n.h.publish(account, t0, vec![beat(true)]).await?;
    let stopping = t0 + Duration::seconds(1);
    n.h.publish(account, stopping, vec![beat(false)]).await?;
    n.h.publish(account, t0 + Duration::seconds(2), vec![beat(true)])
        .await?;
    let rows = n.rows_reach(account, 2).await?;
    assert_eq!(rows[0].rule_id, Some(offline), "{rows:#?}");
    assert_eq!(rows[0].event_type, "server.offline");
    assert_eq!(rows[0].payload["server_id"], json!(proxy));
    assert_eq!(rows[0].payload["server_name"], "Velocity");
    assert_eq!(rows[1].rule_id, Some(online), "{rows:#?}");
    assert_eq!(rows[1].event_type, "server.online");
    assert_eq!(rows[1].payload["offline_since"], json!(stopping));
    Ok(())
}
