//! The `/chat` page in a real browser: `tests/browser/chat_page.mjs` signs in as an admin on a
//! stack whose chat came through ingest, filters by keyword, server, player (name and UUID)
//! and type, pages, opens the staff-commands view, downloads the CSV of a filter and checks
//! its rows are the page's, sees hostile lines and a hostile name escaped on the page and neutralised in the CSV,
//! and scans with axe-core; then a moderator gets no link, a 403 page and a 403 export.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::{Value, json};

const LOBBY: &str = "c4000000-0000-4000-8000-000000000001";
const SURVIVAL: &str = "c4000000-0000-4000-8000-000000000002";
const ALICE: &str = "c4000000-0000-4000-8000-0000000000a1";
const MIA: &str = "c4000000-0000-4000-8000-0000000000a2";
const HACKER: &str = "c4000000-0000-4000-8000-0000000000a3";
const BOB: &str = "c4000000-0000-4000-8000-0000000000a4";
/// A name that is markup, and a formula in a spreadsheet.
const HOSTILE_NAME: &str = "=Hacker<img src=x onerror=\"window.pwned=3\">";

fn line(
    server: &str,
    player: (&str, &str),
    kind: &str,
    channel: Option<&str>,
    message: &str,
    at: String,
) -> Value {
    let mut line = json!({"server_id": server, "player_uuid": player.0, "player_name": player.1,
                          "entry_type": kind, "message": message, "sent_at": at});
    if let Some(channel) = channel {
        line["channel"] = json!(channel);
    }
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_searches_pages_and_exports_chat_and_a_moderator_cannot_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Chat Page Network").await;
    net.settings(&["Moderator"], 30).await;
    let now = now();
    for (server, name) in [(LOBBY, "Lobby"), (SURVIVAL, "Survival")] {
        net.post(
            "/api/plugin/heartbeat",
            json!({"server_id": server, "name": name, "tps": 20.0, "player_count": 3,
                   "max_players": 50, "version": "1.21.4"}),
        )
        .await;
    }
    net.post(
        "/api/plugin/rank-changes",
        json!([{"player_uuid": MIA, "player_name": "Mia", "action": "set",
                "group": "Moderator", "changed_at": ago(now, 600)}]),
    )
    .await;
    let (alice, mia, hacker, bob) = (
        (ALICE, "Alice"),
        (MIA, "Mia"),
        (HACKER, HOSTILE_NAME),
        (BOB, "Bob"),
    );
    let mut lines = vec![
        line(
            LOBBY,
            alice,
            "chat",
            Some("global"),
            "hello everyone",
            ago(now, 100),
        ),
        line(
            SURVIVAL,
            alice,
            "chat",
            Some("global"),
            "diamonds over here",
            ago(now, 95),
        ),
        line(SURVIVAL, alice, "command", None, "/home", ago(now, 90)),
        line(
            LOBBY,
            bob,
            "chat",
            Some("global"),
            "hello from bob",
            ago(now, 85),
        ),
        line(
            LOBBY,
            mia,
            "command",
            None,
            "/ban Griefer cheating",
            ago(now, 80),
        ),
        line(
            LOBBY,
            mia,
            "chat",
            Some("staff"),
            "please stop",
            ago(now, 75),
        ),
        line(
            LOBBY,
            hacker,
            "chat",
            Some("global"),
            "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">",
            ago(now, 70),
        ),
        line(
            LOBBY,
            hacker,
            "chat",
            Some("global"),
            "=HYPERLINK(\"http://evil.example\",\"click me\")",
            ago(now, 65),
        ),
    ];
    // More than one page (50) of one keyword.
    lines.extend((0..60).map(|i| {
        line(
            SURVIVAL,
            bob,
            "chat",
            Some("trade"),
            &format!("filler line {i}"),
            ago(now, 200 + i),
        )
    }));
    net.post("/api/plugin/chat", Value::Array(lines)).await;
    net.stack.projected().await.expect("the chat is projected");
    let (admin, moderator) = ("admin@chat.test", "moderator@chat.test");
    net.stack
        .create_members(
            &net.account.id,
            &[
                (admin, "Ada Admin", "admin"),
                (moderator, "Mo Moderator", "moderator"),
            ],
        )
        .await
        .expect("the members");

    run_browser_script(
        &root,
        "chat_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("ADMIN_LOGIN", admin),
            ("MODERATOR_LOGIN", moderator),
            ("PASSWORD", MEMBER_PASSWORD),
            ("ALICE_UUID", ALICE),
            ("MIA_UUID", MIA),
            ("HACKER_UUID", HACKER),
            ("HOSTILE_NAME", HOSTILE_NAME),
            ("SURVIVAL_ID", SURVIVAL),
        ],
    )
    .await;
}

/// A keyword search the time budget stops (`CHAT_SEARCH_BUDGET_MS=0`: one day per page) says
/// how far back it searched, and its "Search older lines" link finds the older line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyword_search_stopped_by_its_budget_says_how_far_back_it_searched() {
    use crate::member::Member;
    let stack =
        pipeline_tests::TestStack::start_with(|vars| vars.set("CHAT_SEARCH_BUDGET_MS", "0"))
            .await
            .expect("stack starts");
    let account = stack
        .create_account("Budget Network")
        .await
        .expect("account");
    let net = Network { stack, account };
    let now = now();
    net.post(
        "/api/plugin/chat",
        json!([
            line(
                LOBBY,
                (ALICE, "Alice"),
                "chat",
                None,
                "a zebra crossing",
                ago(now, 3600)
            ),
            line(
                LOBBY,
                (ALICE, "Alice"),
                "chat",
                None,
                "two zebras at dawn",
                ago(now, 30 * 3600)
            ),
        ]),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let admin = "admin@budget.test";
    net.stack
        .create_member(&net.account.id, admin, admin, "admin")
        .await
        .expect("member");
    let member = Member::sign_in(&net.stack.base, admin).await;

    let (status, first) = member.page("/chat?q=zebra").await;
    assert_eq!(status, 200, "{first}");
    assert!(first.contains("a zebra crossing"), "{first}");
    assert!(!first.contains("two zebras at dawn"), "{first}");
    assert!(
        first.contains("data-testid=\"searched-back-to\""),
        "{first}"
    );
    assert!(first.contains("Search older lines"), "{first}");
    let older = first
        .split("<tr class=\"older\">")
        .nth(1)
        .and_then(|row| row.split("href=\"/chat?").nth(1))
        .and_then(|rest| rest.split('"').next())
        .expect("a link to older lines")
        .replace("&#38;", "&")
        .replace("&amp;", "&");

    let (status, second) = member.page(&format!("/chat?{older}")).await;
    assert_eq!(status, 200, "{second}");
    assert!(second.contains("two zebras at dawn"), "{second}");
    assert!(!second.contains("a zebra crossing"), "{second}");
    // No line of the account is older: the search is done.
    assert!(!second.contains("searched-back-to"), "{second}");
    assert!(!second.contains("Search older lines"), "{second}");

    // A page the budget cut before it found anything says so, not that nothing matches.
    let (status, empty) = member.page("/chat?q=dawn").await;
    assert_eq!(status, 200, "{empty}");
    assert!(!empty.contains("two zebras at dawn"), "{empty}");
    assert!(
        empty.contains("data-testid=\"searched-back-to\""),
        "{empty}"
    );
    assert!(!empty.contains("No lines match"), "{empty}");
}
