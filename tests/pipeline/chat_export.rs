//! The `/chat` page's CSV export through the whole pipeline: 2 500 chat lines of one filter
//! (among others that do not match, and another account's that do) come out of
//! `/chat/export.csv` exactly, newest first, across three internal chunks of 1 000 (ties on
//! `sent_at` straddling a chunk's end), with the audit entry written before the body; a
//! moderator and a bad filter get no export and leave no entry.

use crate::dashboard::{Network, ago, now};
use crate::member::Member;
use query_api::pages::chat::EXPORT_CHUNK;
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use serde_json::{Value, json};
use uuid::Uuid;

const SERVER: &str = "ce000000-0000-4000-8000-000000000001";
const TRADER: &str = "ce000000-0000-4000-8000-0000000000a1";
const CHATTER: &str = "ce000000-0000-4000-8000-0000000000a2";
const MATCHING: usize = 2500;

/// The account's `chat_exported` audit entries, oldest first: (actor, detail).
async fn exports(net: &Network) -> Vec<(String, Value)> {
    sqlx::query_as(
        "SELECT actor, detail FROM audit_log WHERE account_id = $1::uuid \
         AND action = 'chat_exported' ORDER BY at, id",
    )
    .bind(&net.account.id)
    .fetch_all(&net.stack.db.pool)
    .await
    .expect("audit rows")
}

/// `(sent_at, message, id)` of each data record of an export with no quoted fields.
fn records(csv: &str) -> Vec<(String, String, Uuid)> {
    let mut lines = csv.split("\r\n");
    assert_eq!(
        lines.next(),
        Some("sent_at,server_id,server_name,player_uuid,player_name,entry_type,channel,message,id")
    );
    lines
        .filter(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 9, "{line}");
            assert_eq!(
                (fields[1], fields[3], fields[4], fields[5], fields[6]),
                (SERVER, TRADER, "Trader", "chat", "trade"),
                "{line}"
            );
            let id = Uuid::parse_str(fields[8]).expect("an id");
            (fields[0].to_owned(), fields[7].to_owned(), id)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_holds_exactly_the_filtered_lines_in_order_across_chunks_and_is_audited() {
    assert_eq!(EXPORT_CHUNK, 1000, "the test straddles chunks of 1 000");
    let net = Network::start("Export Network").await;
    let other = net.other_account("Export Other").await;
    let now = now();
    // Three matching lines per second, so equal times straddle each chunk's end (lines 999
    // and 1000 share a second) and the keyset's id tie-break is what keeps them apart.
    let matching: Vec<Value> = (0..MATCHING)
        .map(|i| {
            json!({"server_id": SERVER, "player_uuid": TRADER, "player_name": "Trader",
                   "entry_type": "chat", "channel": "trade", "message": format!("wts item {i}"),
                   "sent_at": ago(now, 10 + i as i64 / 3)})
        })
        .collect();
    for batch in matching.chunks(1000) {
        net.post("/api/plugin/chat", Value::Array(batch.to_vec()))
            .await;
    }
    // Lines the filter leaves out: another channel, another keyword, a command.
    let others = json!([
        {"server_id": SERVER, "player_uuid": CHATTER, "player_name": "Chatter",
         "entry_type": "chat", "channel": "global", "message": "wts in global", "sent_at": ago(now, 20)},
        {"server_id": SERVER, "player_uuid": TRADER, "player_name": "Trader",
         "entry_type": "chat", "channel": "trade", "message": "wtb item", "sent_at": ago(now, 30)},
        {"server_id": SERVER, "player_uuid": TRADER, "player_name": "Trader",
         "entry_type": "command", "channel": "trade", "message": "/wts item", "sent_at": ago(now, 40)},
    ]);
    net.post("/api/plugin/chat", others).await;
    let theirs = json!([{"server_id": SERVER, "player_uuid": TRADER, "player_name": "Trader",
        "entry_type": "chat", "channel": "trade", "message": "wts item elsewhere",
        "sent_at": ago(now, 15)}]);
    crate::dashboard::post_as(&net.stack, &other, "/api/plugin/chat", theirs).await;
    net.stack.projected().await.expect("projected");

    let (admin, moderator) = ("admin@export.test", "mod@export.test");
    for (login, role) in [(admin, "admin"), (moderator, "moderator")] {
        net.stack
            .create_member(&net.account.id, login, login, role)
            .await
            .expect("member");
    }
    let filter = "channel=trade&type=chat&q=WTS+item";

    // A moderator gets no export and leaves no entry; neither does a filter the page refuses.
    let refused = Member::sign_in(&net.stack.base, moderator).await;
    let answer = refused.get(&format!("/chat/export.csv?{filter}")).await;
    assert_eq!(answer.status(), 403);
    let member = Member::sign_in(&net.stack.base, admin).await;
    let answer = member.get("/chat/export.csv?from=yesterday").await;
    assert_eq!(answer.status(), 422);
    let page = answer.text().await.expect("page");
    assert!(page.contains("From"), "{page}");
    assert!(exports(&net).await.is_empty());

    let answer = member.get(&format!("/chat/export.csv?{filter}")).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()[CONTENT_TYPE], "text/csv; charset=utf-8");
    let disposition = answer.headers()[CONTENT_DISPOSITION]
        .to_str()
        .expect("text");
    assert!(
        disposition.starts_with("attachment; filename=\"chat-") && disposition.ends_with(".csv\""),
        "{disposition}"
    );
    // The headers are here, the body not yet read: the entry is already written.
    let entries = exports(&net).await;
    assert_eq!(
        entries,
        [(
            admin.to_owned(),
            json!({"channel": "trade", "type": "chat", "q": "WTS item"})
        )]
    );
    let body = answer.text().await.expect("body");
    let rows = records(&body);
    assert_eq!(rows.len(), MATCHING);
    let mut messages: Vec<&str> = rows.iter().map(|(_, m, _)| m.as_str()).collect();
    messages.sort_unstable();
    let mut expected: Vec<String> = (0..MATCHING).map(|i| format!("wts item {i}")).collect();
    expected.sort_unstable();
    assert_eq!(messages, expected, "exactly the filtered lines, each once");
    // Newest first: (sent_at, id) strictly descending, as the API and the page order them.
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!((&a.0, a.2) > (&b.0, b.2), "{a:?} then {b:?}");
    }
    let (newest, oldest) = (&rows[0], &rows[MATCHING - 1]);
    assert_eq!(newest.0.get(..19), ago(now, 10).get(..19), "{newest:?}");
    let last_second = ago(now, 10 + (MATCHING as i64 - 1) / 3);
    assert_eq!(oldest.0.get(..19), last_second.get(..19), "{oldest:?}");
}
