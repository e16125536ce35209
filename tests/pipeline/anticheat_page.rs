//! The Anti-cheat page: its summaries of the last 24 hours (most-flagged players, flags per
//! check) over real pipeline data, and `tests/browser/anticheat_page.mjs` driving Debian's
//! headless Chromium through the page as a moderator (filters, paging, a flag ingested while
//! the page is open appearing live, hostile text shown as text, axe-core) and as a viewer (no
//! link, 403). The live feed itself, over HTTP: only this account's flags that match, resumed
//! by `Last-Event-ID`, and capped per member.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now, post_as};
use crate::punishments_page::HOSTILE_NAME;
use pipeline_tests::sse::SseStream;
use pipeline_tests::{MEMBER_PASSWORD, eventually};
use query_api::queries::anticheat::{counts_per_check, most_flagged};
use reqwest::Response;
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};
use std::time::Duration;
use uuid::Uuid;

const LOBBY: &str = "6e000000-0000-4000-8000-000000000001";
const ARENA: &str = "6e000000-0000-4000-8000-000000000002";
const HACKER: &str = "6e000000-0000-4000-8000-0000000000b1";
const SPEEDY: &str = "6e000000-0000-4000-8000-0000000000b2";
const HOSTILE: &str = "6e000000-0000-4000-8000-0000000000b3";
const VETERAN: &str = "6e000000-0000-4000-8000-0000000000b4";
/// A check name and a detail that would run script if a page put them in as markup.
const HOSTILE_CHECK: &str = "<svg id=pwned-check onload=alert(1)>";
const HOSTILE_DETAIL: &str = "<script>document.title='pwned'</script>";
/// The veteran's old flags: past the 24 hours, and with the others more than a page (50).
const OLD_FLAGS: i64 = 50;

fn flag(server: &str, player: &str, name: &str, check: &str, vl: f64, at: String) -> Value {
    json!({"server_id": server, "player_uuid": player, "player_name": name,
           "check_name": check, "check_type": "A", "violation_level": vl,
           "detail": "seeded", "source_plugin": "grim", "flagged_at": at})
}

/// 58 flags: the hacker's (Reach ×3, Timer) and the hostile player's on Lobby, the speedy
/// player's (Speed ×2, an older lower-case "reach") on Arena, all in the last hours; and the
/// veteran's 50 Fly flags of 30 hours ago. Another account flags the same UUIDs often: none of
/// it may count.
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
    let mut batch = vec![
        flag(LOBBY, HACKER, "Hacker", "Reach", 12.0, ago(now, 600)),
        flag(LOBBY, HACKER, "Hacker", "Reach", 8.0, ago(now, 700)),
        flag(LOBBY, HACKER, "Hacker", "Reach", 15.0, ago(now, 800)),
        flag(LOBBY, HACKER, "Hacker", "Timer", 3.0, ago(now, 900)),
        flag(ARENA, SPEEDY, "Speedy", "Speed", 6.0, ago(now, 1000)),
        flag(ARENA, SPEEDY, "Speedy", "Speed", 5.0, ago(now, 1100)),
        flag(ARENA, SPEEDY, "Speedy", "reach", 2.0, ago(now, 5000)),
    ];
    let mut hostile = flag(
        LOBBY,
        HOSTILE,
        HOSTILE_NAME,
        HOSTILE_CHECK,
        4.0,
        ago(now, 300),
    );
    hostile["detail"] = json!(HOSTILE_DETAIL);
    batch.push(hostile);
    batch.extend((0..OLD_FLAGS).map(|i| {
        flag(
            ARENA,
            VETERAN,
            "Veteran",
            "Fly",
            1.0,
            ago(now, 108_000 + i * 60),
        )
    }));
    net.post("/api/plugin/anticheat-flags", json!(batch)).await;
    let other = net.other_account("Elsewhere").await;
    let theirs: Vec<Value> = (0..20)
        .map(|i| flag(LOBBY, SPEEDY, "Speedy", "Reach", 50.0, ago(now, 60 + i)))
        .collect();
    post_as(
        &net.stack,
        &other,
        "/api/plugin/anticheat-flags",
        json!(theirs),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the seeded flags are projected");
}

fn uuid(text: &str) -> Uuid {
    Uuid::parse_str(text).expect("a UUID")
}

#[tokio::test]
async fn the_last_day_counts_per_check_and_most_flagged_players_of_one_account_only() {
    let net = Network::start("Anti-cheat Summaries").await;
    seed(&net).await;
    let account = uuid(&net.account.id);
    let since = chrono::Utc::now() - chrono::Duration::hours(24);
    let pool = &net.stack.db.pool;

    let players = most_flagged(pool, account, since).await.expect("reads");
    let got: Vec<(Uuid, Option<&str>, i64, i64, f64)> = players
        .iter()
        .map(|p| {
            (
                p.uuid,
                p.username.as_deref(),
                p.flags,
                p.checks,
                p.max_violation_level,
            )
        })
        .collect();
    // The veteran's flags are older than a day; the other account's 20 flags of the speedy
    // player count for nobody here.
    assert_eq!(
        got,
        [
            (uuid(HACKER), Some("Hacker"), 4, 2, 15.0),
            (uuid(SPEEDY), Some("Speedy"), 3, 2, 6.0),
            (uuid(HOSTILE), Some(HOSTILE_NAME), 1, 1, 4.0),
        ]
    );

    let checks = counts_per_check(pool, account, since).await.expect("reads");
    let got: Vec<(&str, i64, i64)> = checks
        .iter()
        .map(|c| (c.check_name.as_str(), c.flags, c.players))
        .collect();
    // "reach" and "Reach" are one check, named as most recently reported.
    assert_eq!(
        got,
        [
            ("Reach", 4, 2),
            ("Speed", 2, 1),
            (HOSTILE_CHECK, 1, 1),
            ("Timer", 1, 1)
        ]
    );

    // A window that starts after every flag: nothing.
    let later = chrono::Utc::now() + chrono::Duration::minutes(1);
    assert!(
        most_flagged(pool, account, later)
            .await
            .expect("reads")
            .is_empty()
    );
    assert!(
        counts_per_check(pool, account, later)
            .await
            .expect("reads")
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anticheat_page_filters_pages_and_streams_flags_live_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Anti-cheat Page").await;
    seed(&net).await;
    let moderator = "moderator@anticheat.test";
    let viewer = "viewer@anticheat.test";
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
        "anticheat_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("PLUGIN_KEY", &net.account.plugin_key),
            ("LOBBY_ID", LOBBY),
            ("HACKER_UUID", HACKER),
            ("SPEEDY_UUID", SPEEDY),
            ("HOSTILE_NAME", HOSTILE_NAME),
            ("HOSTILE_CHECK", HOSTILE_CHECK),
            ("HOSTILE_DETAIL", HOSTILE_DETAIL),
            ("TOTAL", "58"),
        ],
    )
    .await;
}

/// Signs `login` in through the form; returns the session cookie (`name=value`).
async fn session_cookie(net: &Network, login: &str) -> String {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let answer = http
        .post(format!("{}/login", net.stack.base))
        .header(ORIGIN, &net.stack.base)
        .form(&[("login", login), ("password", MEMBER_PASSWORD)])
        .send()
        .await
        .expect("sign-in answers");
    assert_eq!(answer.status(), 303, "sign-in of {login}");
    let cookie = answer.headers()[SET_COOKIE].to_str().expect("cookie text");
    cookie.split(';').next().expect("cookie pair").to_owned()
}

/// Opens the page's live feed with a session cookie.
async fn open_feed(net: &Network, cookie: &str, query: &str, resume: Option<&str>) -> Response {
    let mut request = net
        .stack
        .http
        .get(format!("{}/anticheat/stream?{query}", net.stack.base))
        .header(COOKIE, cookie)
        .header("accept", "text/event-stream");
    if let Some(id) = resume {
        request = request.header("last-event-id", id);
    }
    request.send().await.expect("the feed answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flag_feed_sends_only_this_accounts_matching_flags_resumes_and_is_capped() {
    let net = Network::start("Flag Feed").await;
    let other = net.other_account("Other Feed").await;
    let login = "moderator@feed.test";
    net.stack
        .create_member(&net.account.id, login, "Max Moderator", "moderator")
        .await
        .expect("a member");
    let cookie = session_cookie(&net, login).await;
    let query = "check=reach&min_vl=5";
    let answer = open_feed(&net, &cookie, query, None).await;
    let mut feed = SseStream::from_response(answer).expect("the feed opens");

    // Another account's matching flag first, then this account's three, of which only the
    // last matches: the log keeps that order, so the first event sent is the one that may be.
    let now = now();
    post_as(
        &net.stack,
        &other,
        "/api/plugin/anticheat-flags",
        json!([flag(LOBBY, SPEEDY, "Speedy", "Reach", 50.0, ago(now, 5))]),
    )
    .await;
    net.post(
        "/api/plugin/anticheat-flags",
        json!([
            flag(LOBBY, HACKER, "Hacker", "Timer", 50.0, ago(now, 4)),
            flag(LOBBY, HACKER, "Hacker", "Reach", 4.0, ago(now, 3)),
            flag(LOBBY, HACKER, "Hacker", "REACH", 7.0, ago(now, 2)),
        ]),
    )
    .await;
    let event = feed.next(Duration::from_secs(15)).await.expect("a flag");
    assert_eq!(event.event, "flag");
    assert!(
        event.data.contains(&format!("data-player=\"{HACKER}\""))
            && event.data.contains(r#"data-testid="vl">7<"#),
        "{}",
        event.data
    );
    let id = event.id.expect("the flag's position");

    // A reconnect with Last-Event-ID sends what came after it, and nothing again.
    drop(feed);
    let answer = open_feed(&net, &cookie, query, Some(&id)).await;
    let mut feed = SseStream::from_response(answer).expect("the feed reopens");
    net.post(
        "/api/plugin/anticheat-flags",
        json!([flag(LOBBY, HACKER, "Hacker", "Reach", 8.0, ago(now, 1))]),
    )
    .await;
    let event = feed.next(Duration::from_secs(15)).await.expect("a flag");
    assert!(
        event.data.contains(r#"data-testid="vl">8<"#),
        "{}",
        event.data
    );

    // A member holds at most MAX_STREAMS_PER_KEY (20 by default) feeds; one more is refused
    // with 429 until one of them closes.
    let mut held = vec![feed];
    while held.len() < 20 {
        let answer = open_feed(&net, &cookie, query, None).await;
        held.push(SseStream::from_response(answer).expect("a feed under the cap"));
    }
    let refused = open_feed(&net, &cookie, query, None).await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    held.pop();
    let reopened = eventually(Duration::from_secs(10), || async {
        let answer = open_feed(&net, &cookie, query, None).await;
        (answer.status() == 200).then_some(answer)
    })
    .await;
    assert!(reopened.is_some(), "a closed feed frees its place");
}
