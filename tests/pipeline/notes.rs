//! Staff notes end to end: a moderator writes a note through the dashboard form
//! (signed in, same-origin POST), query-api logs it to JetStream, the projector stores it, and
//! `GET /api/players/{uuid}/notes` returns it; it survives `projector rebuild`; another
//! account's key never sees it; a viewer cannot write one; bad input writes nothing; with
//! NATS down the page says so and nothing is written; and a note the log did not confirm in
//! time is stored once, however often its form is sent again.

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use pipeline_tests::{TestAccount, TestStack};
use projector::rebuild::{RebuildOptions, rebuild};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const SERVER: &str = "7d000000-0000-4000-8000-00000000c001";
const PLAYER: &str = "7d000000-0000-4000-8000-00000000c0a2";
const STAFF: &str = "7d000000-0000-4000-8000-00000000c0a1";

/// The note form's path.
fn notes_path() -> String {
    format!("/players/{PLAYER}/notes")
}

/// The notes the API returns for the player, with `key`.
async fn notes(stack: &TestStack, account: &TestAccount) -> (u16, Value) {
    stack
        .call(
            reqwest::Method::GET,
            &format!("/api/players/{PLAYER}/notes"),
            &account.dashboard_key,
            None,
        )
        .await
}

/// The rows of `notes` and `note_added` audit rows, however the API answers.
async fn stored(stack: &TestStack) -> (i64, i64) {
    let notes = sqlx::query_scalar("SELECT count(*) FROM notes")
        .fetch_one(&stack.db.pool)
        .await
        .expect("count notes");
    let audited = sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'note_added'")
        .fetch_one(&stack.db.pool)
        .await
        .expect("count audit rows");
    (notes, audited)
}

/// A network named `name` that has seen the player, and a moderator of it, signed in.
async fn with_a_moderator(name: &str) -> (Network, Member) {
    let net = Network::start(name).await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
               "event": "join", "at": ago(now(), 60)}),
    )
    .await;
    net.stack.projected().await.expect("projected");
    net.stack
        .create_member(&net.account.id, "mod@notes.test", "Mo", "moderator")
        .await
        .expect("a member");
    let moderator = Member::sign_in(&net.stack.base, "mod@notes.test").await;
    (net, moderator)
}

/// Waits until query-api's connection to NATS is known to be down (its readiness says so).
async fn query_api_sees_nats_down(stack: &TestStack) {
    let down = pipeline_tests::eventually(pipeline_tests::WAIT, || async {
        let answer = stack.http.get(format!("{}/readyz", stack.base)).send();
        let body: Value = answer.await.ok()?.json().await.ok()?;
        (body["checks"]["query_nats"]["ok"] == json!(false)).then_some(())
    })
    .await;
    assert!(down.is_some(), "query-api never saw NATS go down");
}

/// The note id of the form on `page` (its hidden field).
fn form_note_id(page: &str) -> String {
    let field = r#"name="note_id" value=""#;
    let start = page.find(field).expect("the form has a note id") + field.len();
    page[start..start + 36].to_owned()
}

/// How many messages the event log holds.
async fn log_length(stack: &TestStack) -> u64 {
    let client = async_nats::connect(stack.nats.url()).await.expect("nats");
    let mut stream = async_nats::jetstream::new(client)
        .get_stream(&stack.event_log.stream)
        .await
        .expect("the stream");
    stream.info().await.expect("stream info").state.messages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderators_note_is_logged_projected_served_and_survives_a_rebuild() {
    let net = Network::start("Notes Network").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
               "event": "join", "at": ago(now, 120)}),
    )
    .await;
    let (status, punishment) = net
        .stack
        .call(
            reqwest::Method::POST,
            "/api/plugin/punishments",
            &net.account.plugin_key,
            Some(
                json!([{"server_id": SERVER, "player_uuid": PLAYER, "type": "mute",
                         "reason": "spam", "staff_uuid": STAFF, "staff_name": "Mia",
                         "issued_at": ago(now, 60)}]),
            ),
        )
        .await;
    assert_eq!(status, 202, "{punishment}");
    net.stack.projected().await.expect("projected");
    let (_, page) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    let punishment_id = items(&page)[0]["id"].as_str().expect("an id").to_owned();
    for (login, name, role) in [
        ("mod@notes.test", "Mia Moderator", "moderator"),
        ("viewer@notes.test", "Vic Viewer", "viewer"),
    ] {
        net.stack
            .create_member(&net.account.id, login, name, role)
            .await
            .expect("a member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@notes.test").await;
    let viewer = Member::sign_in(&net.stack.base, "viewer@notes.test").await;

    // A viewer may not write notes; a page from another site may not either.
    let hostile = "<script>alert(1)</script> & \u{202e}evil";
    let form = [
        ("text", hostile),
        (
            "evidence",
            "https://clips.example/1?a=b&c='d'\n\n  http://imgur.example/x  ",
        ),
        ("punishment_id", punishment_id.as_str()),
    ];
    let (status, _, _) = viewer.post_form(&notes_path(), &form, None).await;
    assert_eq!(status, 403, "a viewer writes no note");
    let (status, _, _) = moderator
        .post_form(&notes_path(), &form, Some("https://evil.example"))
        .await;
    assert_eq!(status, 403, "a cross-origin form writes no note");

    // Bad input: the form again with the reason (4xx), and nothing written anywhere.
    let before = log_length(&net.stack).await;
    // Plugins cannot write notes: ingest has no route for them (a note is not a plugin record).
    let forged = json!([{"player_uuid": PLAYER, "text": "forged", "written_at": ago(now, 1),
                         "author": {"member_id": STAFF, "name": "Mia"}}]);
    for path in ["/api/plugin/notes", "/api/plugin/note"] {
        let (status, _) = net
            .stack
            .call(
                reqwest::Method::POST,
                path,
                &net.account.plugin_key,
                Some(forged.clone()),
            )
            .await;
        assert_eq!(status, 404, "POST {path}");
    }
    for (bad, says) in [
        (vec![("text", "   ")], "Note: write the note"),
        (vec![("text", "a\0b")], "Note: must not contain the NUL"),
        (
            vec![("text", "x"), ("evidence", "javascript:alert(1)")],
            "Evidence link 1",
        ),
        (
            vec![
                ("text", "x"),
                ("punishment_id", "7d000000-0000-4000-8000-000000000bad"),
            ],
            "About: choose one of this player",
        ),
    ] {
        let (status, _, body) = moderator.post_form(&notes_path(), &bad, None).await;
        assert_eq!(status, 422, "{bad:?}: {body}");
        assert!(body.contains(says), "{bad:?} says {says:?}: {body}");
    }
    let long = "x".repeat(2001);
    let (status, _, _) = moderator
        .post_form(&notes_path(), &[("text", &long)], None)
        .await;
    assert_eq!(status, 422);
    let six = "https://a.example\n".repeat(6);
    let (status, _, _) = moderator
        .post_form(&notes_path(), &[("text", "x"), ("evidence", &six)], None)
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        log_length(&net.stack).await,
        before,
        "a refused note is not logged"
    );
    assert_eq!(stored(&net.stack).await, (0, 0));

    // The moderator's note: durable once redirected, then in the API, newest first.
    let (status, location, body) = moderator.post_form(&notes_path(), &form, None).await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(&*format!("/players/{PLAYER}#notes"))
    );
    let (status, location, _) = moderator
        .post_form(
            &notes_path(),
            &[("text", "second note, on the player")],
            None,
        )
        .await;
    assert_eq!((status, location.is_some()), (303, true));
    let body = net
        .wait_for(&format!("/api/players/{PLAYER}/notes"), |body| {
            items(body).len() == 2
        })
        .await;
    let [second, first] = &items(&body)[..] else {
        panic!("two notes: {body}")
    };
    assert_eq!(second["text"], "second note, on the player");
    assert_eq!(second["punishment_id"], Value::Null);
    assert_eq!(first["text"], hostile);
    assert_eq!(first["punishment_id"], json!(punishment_id));
    assert_eq!(first["punishment_type"], "mute");
    assert_eq!(
        first["evidence"],
        json!([
            "https://clips.example/1?a=b&c='d'",
            "http://imgur.example/x"
        ])
    );
    assert_eq!(first["author_name"], "Mia Moderator");
    assert_eq!(first["player_uuid"], PLAYER);
    assert_eq!(stored(&net.stack).await, (2, 2), "each note audited once");
    // The Investigate page shows them to the moderator, escaped, links without a referrer;
    // a viewer may not open the page (nor any of its notes).
    let (status, html) = moderator.page(&format!("/players/{PLAYER}")).await;
    assert_eq!(status, 200);
    assert!(html.contains(r#"id="notes""#), "{html}");
    assert!(
        html.contains("&#60;script&#62;alert(1)&#60;/script&#62; &#38; \u{202e}evil"),
        "the note is shown escaped: {html}"
    );
    assert!(!html.contains("<script>alert(1)"));
    assert!(html.contains(
        r#"<a href="https://clips.example/1?a=b&#38;c=&#39;d&#39;" rel="noopener noreferrer nofollow""#
    ), "{html}");
    assert!(html.contains("about the mute"), "{html}");
    let (status, html) = viewer.page(&format!("/players/{PLAYER}")).await;
    assert_eq!(status, 403);
    assert!(!html.contains(r#"id="notes""#) && !html.contains("second note"));
    // Keyset paging walks the same order.
    let (_, one) = net
        .get(&format!("/api/players/{PLAYER}/notes?limit=1"))
        .await;
    assert_eq!(items(&one)[0]["id"], second["id"]);
    let cursor = one["next_cursor"].as_str().expect("a next page").to_owned();
    let (_, two) = net
        .get(&format!(
            "/api/players/{PLAYER}/notes?limit=1&cursor={cursor}"
        ))
        .await;
    assert_eq!(items(&two)[0]["id"], first["id"]);
    assert_eq!(two["next_cursor"], Value::Null);

    // Tenancy: another account's key sees no note, and the player is unknown there.
    let other = net.other_account("Other Network").await;
    let (status, _) = notes(&net.stack, &other).await;
    assert_eq!(status, 404);
    crate::dashboard::post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
               "event": "join", "at": ago(now, 30)}),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let (status, theirs) = notes(&net.stack, &other).await;
    assert_eq!((status, theirs["items"].clone()), (200, json!([])));
    // An unknown player is a 404 here too.
    let (status, _) = net
        .get("/api/players/7d000000-0000-4000-8000-00000000dead/notes")
        .await;
    assert_eq!(status, 404);

    // A rebuild replays the log into fresh tables: the notes come back the same.
    // The stack's own settings: the same log, database and master key (the notes are sealed).
    let config = projector::Config::from_vars(&net.stack.vars).expect("projector config");
    let notes_model = projector::projections::by_name("notes").expect("the notes model");
    let options = RebuildOptions {
        models: vec![notes_model],
        progress_bar: false,
        progress: None,
    };
    rebuild(&config, &options, CancellationToken::new())
        .await
        .expect("the rebuild finishes");
    let (status, rebuilt) = notes(&net.stack, &net.account).await;
    assert_eq!(status, 200);
    assert_eq!(rebuilt["items"], body["items"], "notes survive a rebuild");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_event_log_down_a_note_is_refused_and_nothing_is_written() {
    let (mut net, moderator) = with_a_moderator("Notes Outage").await;

    net.stack.nats.kill();
    // Once query-api knows (before, a publish may be buffered by its client and delivered on
    // the reconnect: the next test's case).
    query_api_sees_nats_down(&net.stack).await;
    let (status, _, body) = moderator
        .post_form(
            &notes_path(),
            &[("text", "written while NATS is down")],
            None,
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("event log is unavailable"), "{body}");
    // The draft is kept for the retry.
    assert!(body.contains("written while NATS is down"), "{body}");
    net.stack.nats.restart().await.expect("NATS restarts");
    assert_eq!(stored(&net.stack).await, (0, 0));
    // Back up: nothing from the outage was logged, and a new note goes through.
    let written = pipeline_tests::eventually(std::time::Duration::from_secs(20), || async {
        let (status, _, _) = moderator
            .post_form(&notes_path(), &[("text", "after the outage")], None)
            .await;
        (status == 303).then_some(())
    })
    .await;
    assert!(written.is_some(), "a note is written once NATS is back");
    let body = net
        .wait_for(&format!("/api/players/{PLAYER}/notes"), |body| {
            !items(body).is_empty()
        })
        .await;
    let texts: Vec<Value> = items(&body).iter().map(|n| n["text"].clone()).collect();
    assert!(
        texts.contains(&json!("after the outage"))
            && !texts.contains(&json!("written while NATS is down")),
        "{texts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_the_log_did_not_confirm_is_stored_once_when_its_form_is_sent_again() {
    let (net, moderator) = with_a_moderator("Notes Frozen Log").await;
    // A first note, so query-api holds the player's key (sealing needs no NATS below).
    let (status, _, body) = moderator
        .post_form(&notes_path(), &[("text", "before the freeze")], None)
        .await;
    assert_eq!(status, 303, "{body}");

    // NATS hangs: the connection stays up, the note is sent, and no ack comes in time.
    net.stack.nats.pause().expect("NATS pauses");
    let text = "sent while the log hangs";
    let (status, _, page) = moderator
        .post_form(&notes_path(), &[("text", text)], None)
        .await;
    net.stack.nats.resume().expect("NATS resumes");
    assert_eq!(status, 503, "{page}");
    assert!(page.contains("may or may not have been saved"), "{page}");
    assert!(page.contains(text), "the draft is kept: {page}");
    let note_id = form_note_id(&page);

    // What was sent lands once NATS goes on; the form sent again (as a browser would, with
    // its note id) is the same note, not a second one.
    let resent = pipeline_tests::eventually(std::time::Duration::from_secs(20), || async {
        let form = [("text", text), ("note_id", note_id.as_str())];
        let (status, _, _) = moderator.post_form(&notes_path(), &form, None).await;
        (status == 303).then_some(())
    })
    .await;
    assert!(
        resent.is_some(),
        "the form sent again is taken once NATS is back"
    );
    net.stack.projected().await.expect("projected");
    let (status, body) = notes(&net.stack, &net.account).await;
    assert_eq!(status, 200);
    let all = items(&body);
    let ids: Vec<&Value> = all
        .iter()
        .filter(|n| n["text"] == json!(text))
        .map(|n| &n["id"])
        .collect();
    assert_eq!(
        ids,
        [&json!(note_id)],
        "stored once, under the form's id: {body}"
    );
    assert_eq!(stored(&net.stack).await.0, 2, "the first note and this one");
}
