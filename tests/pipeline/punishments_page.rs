//! The Punishments page: its log query (the one `GET /api/punishments` uses) filtered by name
//! and paged over real pipeline data, and `tests/browser/punishments_page.mjs` driving Debian's
//! headless Chromium through the page as a moderator (filters, paging, a revoked punishment, a
//! hostile name and reason shown as text, axe-core) and as a viewer (no link, 403).

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
// Re-exported for the wrappers that still import it from here (retention, trends).
use pipeline_tests::MEMBER_PASSWORD;
use query_api::routes::account_reads::params::PlayerRef;
use query_api::routes::account_reads::punishments::{PunishmentFilter, read_page};
use query_api::routes::history::{HistoryCursor, PageRequest};
use serde_json::{Value, json};
use uuid::Uuid;

const LOBBY: &str = "5e000000-0000-4000-8000-000000000001";
const ARENA: &str = "5e000000-0000-4000-8000-000000000002";
const MIA: &str = "5e000000-0000-4000-8000-0000000000a1";
const BOB: &str = "5e000000-0000-4000-8000-0000000000a2";
const GRIEFER: &str = "5e000000-0000-4000-8000-0000000000b1";
const SPAMMER: &str = "5e000000-0000-4000-8000-0000000000b2";
const HOSTILE: &str = "5e000000-0000-4000-8000-0000000000b3";
/// A player name and a reason that would run script if a page put them in as markup.
pub(crate) const HOSTILE_NAME: &str = "<img src=x id=pwned>";
const HOSTILE_REASON: &str = "<script>document.title='pwned'</script>";
/// Warnings of the spammer: with the three others, more than one page (50) of the log.
const WARNINGS: i64 = 52;

/// 55 punishments on two servers by two staff members: a ban in force, an expired ban, a
/// revoked mute of a player with a hostile name, and the spammer's warnings. Another account
/// punishes the same UUIDs by the same staff names: none of that may show.
async fn seed(net: &Network) {
    let now = now();
    for (server, name) in [(LOBBY, "Lobby"), (ARENA, "Arena")] {
        net.post(
            "/api/plugin/heartbeat",
            json!({"server_id": server, "name": name, "tps": 20.0, "player_count": 1,
                   "max_players": 50, "version": "1.21.4"}),
        )
        .await;
    }
    for (player, name) in [
        (GRIEFER, "Griefer"),
        (SPAMMER, "Spammer"),
        (HOSTILE, HOSTILE_NAME),
        (MIA, "Mia"),
        (BOB, "Bob"),
    ] {
        net.post(
            "/api/plugin/sessions",
            json!({"server_id": LOBBY, "player_uuid": player, "player_name": name,
                   "event": "join", "at": ago(now, 7200)}),
        )
        .await;
    }
    let mut batch: Vec<Value> = (0..WARNINGS)
        .map(|i| {
            json!({"server_id": ARENA, "player_uuid": SPAMMER, "player_name": "Spammer",
                   "type": "warning", "reason": format!("spam #{i}"), "staff_uuid": BOB,
                   "staff_name": "Bob", "issued_at": ago(now, 3000 + i * 10)})
        })
        .collect();
    batch.push(
        json!({"server_id": LOBBY, "player_uuid": GRIEFER, "player_name": "Griefer",
        "type": "ban", "reason": "x-ray", "staff_uuid": MIA, "staff_name": "Mia",
        "issued_at": ago(now, 600)}),
    );
    batch.push(
        json!({"server_id": LOBBY, "player_uuid": HOSTILE, "player_name": HOSTILE_NAME,
        "type": "mute", "reason": HOSTILE_REASON, "staff_uuid": MIA, "staff_name": "Mia",
        "source_plugin": "litebans", "external_id": "m1", "issued_at": ago(now, 500)}),
    );
    batch.push(
        json!({"server_id": ARENA, "player_uuid": GRIEFER, "player_name": "Griefer",
        "type": "ban", "reason": "griefing", "staff_uuid": MIA, "staff_name": "Mia",
        "issued_at": ago(now, 90_000), "expires_at": ago(now, 80_000)}),
    );
    net.post("/api/plugin/punishments", json!(batch)).await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": LOBBY, "player_uuid": HOSTILE, "type": "mute", "action": "revoke",
               "source_plugin": "litebans", "external_id": "m1", "staff_uuid": BOB,
               "staff_name": "Bob", "issued_at": ago(now, 400),
               "revoke_reason": "appeal accepted"}),
    )
    .await;
    let other = net.other_account("Elsewhere").await;
    crate::dashboard::post_as(
        &net.stack,
        &other,
        "/api/plugin/punishments",
        json!([{"server_id": LOBBY, "player_uuid": GRIEFER, "player_name": "Griefer",
                "type": "ban", "reason": "other network", "staff_uuid": MIA,
                "staff_name": "Mia", "issued_at": ago(now, 100)}]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the seeded log is projected");
}

fn account_id(net: &Network) -> Uuid {
    Uuid::parse_str(&net.account.id).expect("the account id is a UUID")
}

/// Every punishment matching `filter`, read page by page (`limit` rows each) to the end.
async fn read_all(net: &Network, filter: &PunishmentFilter, limit: i64) -> Vec<(Uuid, String)> {
    let mut page = PageRequest {
        limit,
        cursor: None,
    };
    let mut rows = Vec::new();
    loop {
        let found = read_page(&net.stack.db.pool, account_id(net), filter, &page)
            .await
            .expect("the log reads");
        assert!(found.items.len() <= usize::try_from(limit).unwrap_or(0));
        rows.extend(found.items.into_iter().map(|p| {
            let reason = p.punishment.reason.unwrap_or_default();
            (p.player_uuid, reason)
        }));
        match found.next_cursor {
            Some(cursor) => page.cursor = HistoryCursor::parse(&cursor),
            None => return rows,
        }
        assert!(rows.len() < 1000, "paging does not end");
    }
}

fn uuid(text: &str) -> Uuid {
    Uuid::parse_str(text).expect("a UUID")
}

#[tokio::test]
async fn the_punishment_log_filters_by_names_servers_status_and_time_and_pages() {
    let net = Network::start("Punishment Log").await;
    seed(&net).await;
    let all = read_all(&net, &PunishmentFilter::default(), 500).await;
    assert_eq!(all.len(), 55, "only this account's punishments: {all:?}");
    assert!(all.iter().all(|(_, reason)| reason != "other network"));
    // Newest first: the revoked mute (500 s ago), then the ban in force (600 s ago).
    assert_eq!(all[0], (uuid(HOSTILE), HOSTILE_REASON.to_owned()));
    assert_eq!(all[1], (uuid(GRIEFER), "x-ray".to_owned()));
    assert_eq!(read_all(&net, &PunishmentFilter::default(), 50).await, all);

    let count = |filter: PunishmentFilter| {
        let net = &net;
        async move { read_all(net, &filter, 20).await.len() }
    };
    let named = |name: &str| Some(PlayerRef::Name(name.to_owned()));
    assert_eq!(
        count(PunishmentFilter {
            player: named("gRIEFER"),
            ..Default::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(PunishmentFilter {
            player: named(HOSTILE_NAME),
            ..Default::default()
        })
        .await,
        1
    );
    assert_eq!(
        count(PunishmentFilter {
            player: named("Nobody"),
            ..Default::default()
        })
        .await,
        0
    );
    assert_eq!(
        count(PunishmentFilter {
            staff: named("mia"),
            ..Default::default()
        })
        .await,
        3
    );
    let bob = Some(PlayerRef::Uuid(uuid(BOB)));
    assert_eq!(
        count(PunishmentFilter {
            staff: bob,
            ..Default::default()
        })
        .await,
        52
    );
    assert_eq!(
        count(PunishmentFilter {
            server: Some(uuid(LOBBY)),
            ..Default::default()
        })
        .await,
        2
    );
    let bans_in_force = PunishmentFilter {
        kind: Some("ban".into()),
        active: Some(true),
        ..Default::default()
    };
    assert_eq!(count(bans_in_force).await, 1);
    assert_eq!(
        count(PunishmentFilter {
            active: Some(false),
            ..Default::default()
        })
        .await,
        54
    );
    let now = chrono::Utc::now();
    let window = PunishmentFilter {
        from: Some(now - chrono::Duration::seconds(2000)),
        to: Some(now - chrono::Duration::seconds(450)),
        ..Default::default()
    };
    assert_eq!(count(window).await, 2);

    // The revoked mute says who revoked it, when and why.
    let filter = PunishmentFilter {
        player: Some(PlayerRef::Uuid(uuid(HOSTILE))),
        ..Default::default()
    };
    let page = PageRequest::default();
    let found = read_page(&net.stack.db.pool, account_id(&net), &filter, &page)
        .await
        .expect("the log reads");
    let mute = &found.items[0].punishment;
    assert!(!mute.is_active);
    assert_eq!(mute.revoked_by, Some(uuid(BOB)));
    assert_eq!(mute.revoked_by_username.as_deref(), Some("Bob"));
    assert_eq!(mute.revoke_reason.as_deref(), Some("appeal accepted"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_punishments_page_filters_and_pages_the_log_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Punishments Page").await;
    seed(&net).await;
    let moderator = "moderator@punishments.test";
    let viewer = "viewer@punishments.test";
    net.stack
        .create_members(
            &net.account.id,
            &[
                (moderator, "Max Moderator", "moderator"),
                (viewer, "Vic Viewer", "viewer"),
            ],
        )
        .await
        .expect("the members");
    run_browser_script(
        &root,
        "punishments_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("LOBBY_ID", LOBBY),
            ("GRIEFER_UUID", GRIEFER),
            ("HOSTILE_UUID", HOSTILE),
            ("HOSTILE_NAME", HOSTILE_NAME),
            ("HOSTILE_REASON", HOSTILE_REASON),
            ("TOTAL", "55"),
        ],
    )
    .await;
}
