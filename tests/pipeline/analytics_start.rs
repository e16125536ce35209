//! Pages that open on an answer: Trends with no query shows joins per UTC day over the last
//! 30 days (from the hourly rollup), Funnels offers the account's own event names (never
//! another account's) and opens on an example funnel built from them, run. Through the real
//! stack: plugin writes through ingest, the projector, then the pages as a signed-in member.

use crate::dashboard::{Network, ago, now, post_as};
use crate::member::Member;
use serde_json::json;

const SERVER: &str = "a5000000-0000-4000-8000-000000000001";
const P1: &str = "a5000000-0000-4000-8000-0000000000a1";
const P2: &str = "a5000000-0000-4000-8000-0000000000a2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trends_opens_on_joins_per_day_of_the_last_30_days() {
    let net = Network::start("Trends Start").await;
    let now = now();
    let join = |player: &str, at: String| json!({"server_id": SERVER, "player_uuid": player, "player_name": "p", "event": "join", "at": at});
    // Three joins two days ago (one player twice), one 40 days ago: outside the 30 days.
    let two_days = now - chrono::Duration::days(2);
    let at = |hour: u32| {
        two_days
            .date_naive()
            .and_hms_opt(hour, 0, 0)
            .map(|t| t.and_utc().to_rfc3339())
            .unwrap_or_default()
    };
    net.post(
        "/api/plugin/sessions",
        json!([
            join(P1, at(1)),
            join(P1, at(5)),
            join(P2, at(9)),
            join(P2, ago(now, 40 * 86_400)),
        ]),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let login = "viewer@trends-start.test";
    net.stack
        .create_member(&net.account.id, login, "Vic Viewer", "viewer")
        .await
        .expect("a viewer");
    let member = Member::sign_in(&net.stack.base, login).await;

    let (status, page) = member.page("/analytics/trends").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("id=\"trends-default\""), "{page}");
    assert!(page.contains("<option value=\"joins\" selected>"), "{page}");
    let day = two_days.format("%Y-%m-%d 00:00").to_string();
    let row = format!("<tr><th scope=\"row\">{day}</th><td class=\"num\">3</td></tr>");
    assert!(page.contains(&row), "no row {row} in {page}");
    // 30 buckets of days (31 when the range's start falls inside a day), and the old join
    // is in none of them: the whole period totals the three.
    let rows = page.matches("<tr><th scope=\"row\">20").count();
    assert!((30..=31).contains(&rows), "{rows} rows");
    assert!(
        page.contains("<th scope=\"row\">Whole period</th><td class=\"num\">3</td>"),
        "{page}"
    );

    // A question asked is answered as before; bad input keeps its 422 and message.
    let (status, page) = member
        .page("/analytics/trends?kind=event&event=Not%20A%20Name")
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("id=\"trends-error\""), "{page}");
    assert!(!page.contains("id=\"trends-default\""), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn funnels_suggests_only_the_account_s_event_names_and_opens_on_an_example() {
    let net = Network::start("Funnels Start").await;
    let other = net.other_account("Someone Else").await;
    let login = "mod@funnels-start.test";
    net.stack
        .create_member(&net.account.id, login, "Mo Moderator", "moderator")
        .await
        .expect("a moderator");
    let member = Member::sign_in(&net.stack.base, login).await;

    // No events yet: empty steps, nothing offered, no example.
    let (status, page) = member.page("/funnels").await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("id=\"funnel-example\""), "{page}");
    assert!(!page.contains("<option value=\"quest"), "{page}");

    let now = now();
    let event = |player: &str, name: &str, seconds: i64| json!({"player_uuid": player, "name": name, "occurred_at": ago(now, seconds)});
    net.post(
        "/api/v1/plugin/events",
        json!([
            event(P1, "quest_started", 600),
            event(P1, "quest_completed", 300),
            event(P2, "quest_started", 500),
        ]),
    )
    .await;
    post_as(
        &net.stack,
        &other,
        "/api/v1/plugin/events",
        json!([event(P1, "secret_ritual", 100)]),
    )
    .await;
    net.stack.projected().await.expect("projected");

    let (status, page) = member.page("/funnels").await;
    assert_eq!(status, 200, "{page}");
    for name in ["quest_completed", "quest_started"] {
        assert!(
            page.contains(&format!("<option value=\"{name}\"></option>")),
            "{name} not offered: {page}"
        );
    }
    assert!(
        !page.contains("secret_ritual"),
        "another account's name: {page}"
    );
    assert!(page.contains("list=\"event-names\""), "{page}");
    // The example: the first custom name, then the next, run (P1 completed, P2 did not
    // start it: quest_completed -> quest_started has one starter, who did not go on).
    assert!(page.contains("id=\"funnel-example\""), "{page}");
    assert!(
        page.contains("value=\"quest_completed\" required"),
        "step 1: {page}"
    );
    assert!(
        page.contains("value=\"quest_started\" required"),
        "step 2: {page}"
    );
    assert!(
        page.contains("data-name=\"quest_completed\" data-players=\"1\""),
        "{page}"
    );
    // Opening the page again shows the same answer without running it again: 60 more opens
    // (more than the member's dashboard quota of 60 reads a minute) all show it.
    for open in 0..60 {
        let (status, again) = member.page("/funnels").await;
        assert_eq!(status, 200, "open {open}: {again}");
        assert!(
            again.contains("data-name=\"quest_completed\" data-players=\"1\""),
            "open {open} has no answer: {again}"
        );
    }

    // The names are a skip scan of the hourly rollup's primary key, never a scan of the
    // table: checked on a month of hours of 40 names for 5 servers of a third account.
    let pool = &net.stack.db.pool;
    let busy = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO event_hours (account_id, name, hour, server_id, events) \
         SELECT $1, 'event_' || n, date_trunc('hour', now()) - h * interval '1 hour', \
                ('00000000-0000-4000-8000-00000000000' || s)::uuid, 1 \
         FROM generate_series(1, 40) n, generate_series(0, 719) h, generate_series(1, 5) s",
    )
    .bind(busy)
    .execute(pool)
    .await
    .expect("rollup rows");
    sqlx::query("ANALYZE event_hours")
        .execute(pool)
        .await
        .expect("analyze");
    let plan: Vec<String> = sqlx::query_scalar(&format!(
        "EXPLAIN {}",
        query_api::queries::event_names::STATEMENT
    ))
    .bind(busy)
    .bind(query_api::queries::event_names::MAX_NAMES)
    .fetch_all(pool)
    .await
    .expect("plan");
    let plan = plan.join("\n");
    assert!(plan.contains("event_hours_pkey"), "{plan}");
    assert!(!plan.contains("Seq Scan"), "{plan}");

    // A funnel started from the Events page's link is the member's, not the example.
    let (status, page) = member.page("/funnels?step=quest_started").await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("id=\"funnel-example\""), "{page}");
}
