//! The Rust SDK end to end: every record kind written with `PluginClient`, custom events
//! through the `EventTracker`, and everything read back with `DashboardClient`.
//! Dashboard keys allow 60 requests a minute, so the reads are few and made once, after
//! `projected()`.

use chrono::{Duration as Span, Utc};
use pipeline_tests::TestStack;
use serde_json::json;
use std::time::Duration;
use uuid::Uuid;
use warden_sdk::{
    AccountLink, AnticheatFlag, ChatEntry, ChatEntryType, CustomEvent, DashboardClient, EventQuery,
    EventTracker, FunnelRequest, Heartbeat, LinkAction, PageRequest, PluginClient, Punishment,
    PunishmentType, RankAction, RankChange, ServerRole, Session, SessionEvent, TrackerConfig,
};

#[tokio::test]
async fn the_sdk_writes_every_kind_tracks_events_and_reads_them_back() -> anyhow::Result<()> {
    let stack = TestStack::start().await?;
    let account = stack.create_account("SDK Network").await?;
    let plugin = PluginClient::new(&stack.base, &account.plugin_key)?;
    let (server, player, staff) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let at = Utc::now() - Span::seconds(30);

    let heartbeat = Heartbeat {
        name: Some("Lobby".into()),
        online: Some(true),
        ..Heartbeat::new(server, 19.8, 1, 50)
    };
    assert_eq!(plugin.send(heartbeat).await?.accepted, 1);
    let join = Session {
        at: Some(at),
        ip: Some("203.0.113.9".into()),
        ..Session::new(server, player, "Notch", SessionEvent::Join)
    };
    plugin.send(join).await?;
    let chat = vec![
        ChatEntry {
            id: Some(Uuid::now_v7()),
            sent_at: Some(at + Span::seconds(1)),
            ..ChatEntry::new(server, player, ChatEntryType::Chat, "hello")
        },
        ChatEntry {
            id: Some(Uuid::now_v7()),
            sent_at: Some(at + Span::seconds(2)),
            ..ChatEntry::new(server, player, ChatEntryType::Command, "/spawn")
        },
    ];
    assert_eq!(plugin.send_batch(chat.clone()).await?.accepted, 2);
    // The same records again (same ids): acknowledged as duplicates, stored once.
    let again = plugin.send_batch(chat).await?;
    assert_eq!((again.accepted, again.duplicates), (0, 2));

    let ban = Punishment {
        staff_uuid: Some(staff),
        staff_name: Some("Mod".into()),
        reason: Some("x-ray".into()),
        source_plugin: Some("litebans".into()),
        external_id: Some("77".into()),
        issued_at: Some(at + Span::seconds(3)),
        ..Punishment::issue(server, player, PunishmentType::Ban)
    };
    plugin.send(ban).await?;
    let unban = Punishment {
        issued_at: Some(at + Span::seconds(4)),
        revoke_reason: Some("appeal".into()),
        ..Punishment::revoke(server, player, PunishmentType::Ban, "litebans", "77")
    };
    plugin.send(unban).await?;
    let flag = AnticheatFlag {
        flagged_at: Some(at + Span::seconds(5)),
        source_plugin: Some("grim".into()),
        ..AnticheatFlag::new(server, player, "Reach", 2.5)
    };
    plugin.send(flag).await?;
    let rank = RankChange {
        changed_at: Some(at + Span::seconds(6)),
        ..RankChange::new(player, RankAction::Set, "admin")
    };
    plugin.send(rank).await?;
    let link = AccountLink {
        at: Some(at + Span::seconds(7)),
        ..AccountLink::new(player, "discord", "1234", LinkAction::Link)
    };
    plugin.send(link).await?;
    let opened = CustomEvent::new(player, "crate_opened").with_properties(json!({"tier": "gold"}));
    let accepted = plugin.send_event(opened).await?;
    assert_eq!(accepted.name, "crate_opened");
    let quests = (0..2)
        .map(|n| CustomEvent::new(player, "quest_done").with_properties(json!({"n": n})))
        .collect();
    assert_eq!(plugin.send_batch(quests).await?.accepted, 2);

    // Tracked events: queued without HTTP, sent by the background task on shutdown.
    let config = TrackerConfig {
        sync_interval: Duration::from_secs(3600),
        ..TrackerConfig::default()
    };
    let tracker = EventTracker::spawn(plugin.clone(), config);
    let mut tracked = Vec::new();
    for n in 0..3 {
        let mut event = CustomEvent::new(player, "shop_click").with_properties(json!({"n": n}));
        event.id = Some(Uuid::now_v7());
        tracked.push(event.id);
        tracker.track(event).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let stats = tracker.shutdown().await;
    assert_eq!((stats.accepted, stats.dropped, stats.lost), (3, 0, 0));

    stack.projected().await?;
    let dashboard = DashboardClient::new(&stack.base, &account.dashboard_key)?;
    let profile = dashboard
        .player(player)
        .await?
        .expect("the player is known");
    assert_eq!(profile.username.as_deref(), Some("Notch"));
    assert!(profile.is_online && profile.is_staff);
    assert_eq!(profile.rank.as_deref(), Some("admin"));
    let linked = profile.linked_account.expect("linked");
    assert_eq!(
        (linked.platform.as_str(), linked.external_id.as_deref()),
        ("discord", Some("1234"))
    );
    assert!(dashboard.player(Uuid::now_v7()).await?.is_none());

    let punishments = dashboard
        .punishments(player, &PageRequest::default())
        .await?;
    assert_eq!(punishments.items.len(), 1);
    let ban = &punishments.items[0];
    assert!(!ban.is_active && ban.revoked_at.is_some());
    assert_eq!(ban.revoke_reason.as_deref(), Some("appeal"));
    let flags = dashboard.flags(player, &PageRequest::default()).await?;
    assert_eq!(flags.items[0].check_name, "Reach");

    let first = PageRequest {
        limit: Some(1),
        cursor: None,
    };
    let page = dashboard.chatlog(player, &first).await?;
    assert_eq!(page.items[0].message, "/spawn");
    let next = PageRequest {
        limit: Some(1),
        cursor: page.next_cursor.clone(),
    };
    assert!(next.cursor.is_some(), "a second page");
    let page = dashboard.chatlog(player, &next).await?;
    assert_eq!(page.items[0].message, "hello");

    let servers = dashboard.servers().await?;
    let lobby = servers.iter().find(|s| s.id == server).expect("the server");
    assert!(lobby.is_online);
    assert_eq!(lobby.name.as_deref(), Some("Lobby"));
    assert_eq!(
        lobby.role,
        Some(ServerRole::Server),
        "no role sent: a game server"
    );
    assert!(dashboard.staff().await?.iter().any(|s| s.uuid == player));

    let query = EventQuery {
        names: vec![
            "crate_opened".into(),
            "quest_done".into(),
            "shop_click".into(),
        ],
        player_uuid: Some(player),
        ..EventQuery::default()
    };
    let events = dashboard.events(&query).await?;
    assert_eq!(events.items.len(), 6);
    for id in tracked.iter().flatten() {
        assert!(events.items.iter().any(|e| e.id == *id), "tracked {id}");
    }
    let crate_event = events.items.iter().find(|e| e.name == "crate_opened");
    assert_eq!(
        crate_event.expect("crate").properties,
        json!({"tier": "gold"})
    );

    let funnel = FunnelRequest {
        steps: vec!["crate_opened".into(), "shop_click".into()],
        window_seconds: None,
        from: None,
        to: None,
        order: Default::default(),
    };
    let result = dashboard.funnel(&funnel).await?;
    assert_eq!(result.steps.len(), 2);
    assert_eq!((result.steps[0].players, result.steps[1].players), (1, 1));
    Ok(())
}
