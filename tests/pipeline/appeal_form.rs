//! The public appeal form end to end: a link signed with the account's link key (as ingest
//! signs them for the kick screen) opens the punishment and the form with no sign-in; a sent
//! appeal goes through the event log to the `appeals` read model and shows as `new` at the same
//! link; a second one is not stored. Hostile links and bodies get the right 4xx and store
//! nothing; one client address gets 5 posts a minute.

use crate::dashboard::{Network, ago, get_as, items, now, post_as};
use async_nats::jetstream;
use chrono::Duration;
use pipeline_tests::{TestAccount, TestStack};
use reqwest::header::{CONTENT_TYPE, LOCATION, ORIGIN, RETRY_AFTER};
use serde_json::json;
use shared::appeal_link::AppealClaims;
use shared::privacy::PrivacyConfig;
use uuid::Uuid;

const SERVER: &str = "a9000000-0000-4000-8000-000000000001";
pub(crate) const PLAYER: &str = "a9000000-0000-4000-8000-0000000000a1";
const STAFF: &str = "a9000000-0000-4000-8000-0000000000b1";
const NOT_VALID: &str = "This appeal link is not valid";

/// A stack that believes the loopback proxy's `X-Forwarded-For`, so each case of a test can be
/// a client address of its own (the appeal quota is per address).
pub(crate) async fn start(name: &str) -> Network {
    let stack = TestStack::start_with(|vars| vars.set("TRUSTED_PROXIES", "127.0.0.1/32"))
        .await
        .expect("stack starts");
    let account = stack.create_account(name).await.expect("account");
    Network { stack, account }
}

/// Issues punishments of [`PLAYER`] for `account` through the plugin API (kind, external id,
/// expiry in seconds from now; one of each kind) and returns their ids, once projected.
pub(crate) async fn punish(
    stack: &TestStack,
    account: &TestAccount,
    issued: &[(&str, &str, Option<i64>)],
) -> Vec<String> {
    let now = now();
    let records: Vec<_> = issued
        .iter()
        .map(|(kind, external, expires)| {
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
                   "type": kind, "reason": format!("{kind}: x-ray <b>mining</b>"),
                   "staff_uuid": STAFF, "staff_name": "ModMike", "issued_at": ago(now, 120),
                   "expires_at": expires.map(|e| ago(now, -e)), "scope": "global",
                   "source_plugin": "litebans", "external_id": external})
        })
        .collect();
    post_as(stack, account, "/api/plugin/punishments", json!(records)).await;
    stack.projected().await.expect("projected");
    let (status, page) = get_as(
        stack,
        account,
        &format!("/api/players/{PLAYER}/punishments"),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let listed = items(&page);
    issued
        .iter()
        .map(|(kind, _, _)| {
            let item = listed
                .iter()
                .find(|p| p["type"] == *kind)
                .expect("the punishment is listed");
            item["id"].as_str().expect("an id").to_owned()
        })
        .collect()
}

/// The link of punishment `id` of `account`, signed at `at` with the key of `key_of` (the
/// stack's own key of that account, as ingest uses).
pub(crate) async fn link(
    stack: &TestStack,
    key_of: &str,
    account: &str,
    id: &str,
    at: i64,
) -> String {
    let nats = async_nats::connect(stack.nats.url()).await.expect("nats");
    let keyring = PrivacyConfig::from_vars(&stack.vars)
        .expect("privacy settings")
        .keyring(&jetstream::new(nats), &stack.event_log)
        .await
        .expect("a keyring");
    let key = keyring
        .link_key(key_of.parse().expect("uuid"))
        .await
        .expect("the link key");
    let signed_at = now() - Duration::seconds(at);
    let claims = AppealClaims::new(
        account.parse().expect("uuid"),
        id.parse().expect("uuid"),
        signed_at,
    );
    format!("/appeal/{}", claims.sign(&key))
}

/// A visitor's browser-less client: no redirects followed.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

struct Answer {
    status: u16,
    location: Option<String>,
    retry_after: Option<String>,
    body: String,
}

async fn answer(response: reqwest::Response) -> Answer {
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let (status, location, retry_after) = (
        response.status().as_u16(),
        header(LOCATION),
        header(RETRY_AFTER),
    );
    Answer {
        status,
        location,
        retry_after,
        body: response.text().await.unwrap_or_default(),
    }
}

/// `GET path` as a visitor.
async fn open(net: &Network, path: &str) -> Answer {
    let response = client()
        .get(format!("{}{path}", net.stack.base))
        .send()
        .await
        .expect("the page answers");
    answer(response).await
}

/// Posts `body` as `content_type` to `path` from client address `ip`, same-origin.
async fn send(net: &Network, path: &str, ip: &str, content_type: &str, body: String) -> Answer {
    let response = client()
        .post(format!("{}{path}", net.stack.base))
        .header(ORIGIN, &net.stack.base)
        .header("x-forwarded-for", ip)
        .header(CONTENT_TYPE, content_type)
        .body(body)
        .send()
        .await
        .expect("the form answers");
    answer(response).await
}

/// Posts the form fields from client address `ip`.
async fn post_form(net: &Network, path: &str, ip: &str, fields: &[(&str, &str)]) -> Answer {
    let body = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    send(net, path, ip, "application/x-www-form-urlencoded", body).await
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// How many messages the event log holds.
async fn log_length(net: &Network) -> u64 {
    let client = async_nats::connect(net.stack.nats.url())
        .await
        .expect("nats");
    let mut stream = jetstream::new(client)
        .get_stream(&net.stack.event_log.stream)
        .await
        .expect("the stream");
    stream.info().await.expect("stream info").state.messages
}

/// How many appeals the read model holds.
async fn appeals(net: &Network) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM appeals")
        .fetch_one(&net.stack.db.pool)
        .await
        .expect("appeals counted")
}

const GOOD: &str = "I was not using x-ray: <script>alert(1)</script> <b>honest</b>, see my clip.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_punished_player_appeals_once_through_a_signed_link_and_hostile_input_stores_nothing() {
    let net = start("Appeal Form Network").await;
    let other = net.other_account("Other Appeal Network").await;
    let (a, b) = (net.account.id.clone(), other.id.clone());
    let ids = punish(
        &net.stack,
        &net.account,
        &[
            ("ban", "1", Some(86_400)),
            ("kick", "2", None),
            ("mute", "3", Some(3_600)),
        ],
    )
    .await;
    let (ban, kick, mute) = (&ids[0], &ids[1], &ids[2]);
    let theirs = punish(&net.stack, &other, &[("ban", "9", None)]).await;
    let ban_link = link(&net.stack, &a, &a, ban, 0).await;

    // The link opens the punishment and the form, with no sign-in.
    let response = client()
        .get(format!("{}{ban_link}", net.stack.base))
        .send()
        .await
        .expect("answers");
    let headers = response.headers().clone();
    let page = answer(response).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for wanted in [
        "ban: x-ray &#60;b&#62;mining&#60;/b&#62;",
        "In force",
        r#"data-testid="appeal-form""#,
        r#"name="website""#,
        r#"tabindex="-1""#,
        r#"aria-hidden="true""#,
        r#"<meta name="robots" content="noindex, nofollow">"#,
    ] {
        assert!(
            page.body.contains(wanted),
            "the page shows {wanted}: {}",
            page.body
        );
    }
    assert!(!page.body.contains("<b>mining"), "the reason is escaped");
    assert!(
        !page.body.contains(r#"aria-label="Dashboard""#),
        "no dashboard bar"
    );
    assert_eq!(headers["x-robots-tag"], "noindex, nofollow");
    assert_eq!(headers["cache-control"], "no-store");
    assert!(
        headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    let kick_page = open(&net, &link(&net.stack, &a, &a, kick, 0).await).await;
    assert_eq!(kick_page.status, 200);
    assert!(
        kick_page.body.contains("nothing to lift"),
        "{}",
        kick_page.body
    );

    // Hostile links: each the right status, the same words for every kind of bad link.
    let good_token = ban_link.trim_start_matches("/appeal/").to_owned();
    let mut changed = good_token.clone().into_bytes();
    changed[40] = if changed[40] == b'A' { b'B' } else { b'A' };
    let changed = format!("/appeal/{}", String::from_utf8(changed).expect("text"));
    let forged = link(&net.stack, &a, &b, &theirs[0], 0).await;
    let crossed = link(&net.stack, &a, &a, &theirs[0], 0).await;
    let expired = link(&net.stack, &a, &a, ban, 31 * 86_400).await;
    let garbage = format!("/appeal/{}", "Zm9v".repeat(2_500));
    let links = [
        (forged.as_str(), 404, NOT_VALID),
        (crossed.as_str(), 404, "not on record"),
        (changed.as_str(), 404, NOT_VALID),
        (expired.as_str(), 410, "join the server again for a new one"),
        (garbage.as_str(), 404, NOT_VALID),
        ("/appeal/%00", 404, NOT_VALID),
        ("/appeal/%FF%FE", 404, NOT_VALID),
        ("/appeal/..%2F..%2Fetc%2Fpasswd", 404, NOT_VALID),
        ("/appeal/....%2F%2E%2E%5Cwindows", 404, NOT_VALID),
    ];
    let before = log_length(&net).await;
    for (index, (path, status, says)) in links.iter().enumerate() {
        let shown = open(&net, path).await;
        assert_eq!(shown.status, *status, "GET {path}: {}", shown.body);
        assert!(
            shown.body.contains(says),
            "GET {path} says {says}: {}",
            shown.body
        );
        let ip = format!("10.1.0.{index}");
        let sent = post_form(&net, path, &ip, &[("message", GOOD), ("website", "")]).await;
        assert_eq!(sent.status, *status, "POST {path}: {}", sent.body);
    }

    // Hostile bodies: refused with the page (text kept where there is a form), never a 5xx.
    let long = "é".repeat(2_001);
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[("message", "a\0b and more words here")], "NUL"),
        (&[("message", &long)], "2000"),
        (&[("message", "")], "write the appeal"),
        (&[("message", " \n\t  ")], "write the appeal"),
        (&[("message", "sorry")], "at least 10"),
        (&[("website", "x")], "write the appeal"),
    ];
    for (index, (fields, says)) in cases.iter().enumerate() {
        let ip = format!("10.2.0.{index}");
        let sent = post_form(&net, &ban_link, &ip, fields).await;
        assert_eq!(sent.status, 400, "{fields:?}: {}", sent.body);
        assert!(
            sent.body.contains(says),
            "{fields:?} says {says}: {}",
            sent.body
        );
        assert!(
            sent.body.contains("appeal-message-error"),
            "the error sits by the field"
        );
    }
    let kept = post_form(&net, &ban_link, "10.3.0.1", &[("message", &long)]).await;
    assert!(kept.body.contains(&long), "the text is kept");
    let honeypot = [("message", GOOD), ("website", "http://spam.example")];
    let trapped = post_form(&net, &ban_link, "10.3.0.2", &honeypot).await;
    assert_eq!(trapped.status, 303, "a bot is answered as if accepted");
    assert_eq!(trapped.location.as_deref(), Some(ban_link.as_str()));
    let huge = format!("message={}", "a".repeat(17 * 1024));
    let too_big = send(
        &net,
        &ban_link,
        "10.3.0.3",
        "application/x-www-form-urlencoded",
        huge,
    )
    .await;
    assert_eq!(too_big.status, 413, "{}", too_big.body);
    let json = json!({"message": GOOD}).to_string();
    let as_json = send(&net, &ban_link, "10.3.0.4", "application/json", json).await;
    assert_eq!(as_json.status, 415, "{}", as_json.body);
    let not_form = send(
        &net,
        &ban_link,
        "10.3.0.5",
        "application/x-www-form-urlencoded",
        "%%%=&=%zz".into(),
    )
    .await;
    assert!(not_form.status < 500, "{}", not_form.status);
    let cross = client()
        .post(format!("{}{ban_link}", net.stack.base))
        .header(ORIGIN, "https://evil.example")
        .form(&[("message", GOOD)])
        .send()
        .await
        .expect("answers");
    assert_eq!(cross.status(), 403, "another site cannot send an appeal");
    assert_eq!(log_length(&net).await, before, "nothing refused is logged");
    assert_eq!(appeals(&net).await, 0, "nothing refused is stored");

    // The appeal: logged, stored as new, shown (escaped) at the same link.
    let sent = post_form(
        &net,
        &ban_link,
        "10.4.0.1",
        &[("message", GOOD), ("website", "")],
    )
    .await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    assert_eq!(sent.location.as_deref(), Some(ban_link.as_str()));
    let status = open(&net, &ban_link).await;
    assert!(
        status.body.contains(r#"data-appeal-status="new""#),
        "{}",
        status.body
    );
    assert!(
        status
            .body
            .contains("&#60;script&#62;alert(1)&#60;/script&#62;")
    );
    assert!(!status.body.contains("<script>alert") && !status.body.contains("appeal-form"));
    let player: String = sqlx::query_scalar("SELECT player_uuid::text FROM appeals")
        .fetch_one(&net.stack.db.pool)
        .await
        .expect("the appeal");
    assert_eq!(player, PLAYER, "the player is the punishment's");

    // A second appeal of the same punishment only leads to the first.
    let logged = log_length(&net).await;
    let again = [("message", "Another try, with different words.")];
    let second = post_form(&net, &ban_link, "10.4.0.2", &again).await;
    assert_eq!(second.status, 303);
    assert_eq!(log_length(&net).await, logged, "not logged again");
    assert_eq!(appeals(&net).await, 1);

    // Two posts racing for another punishment are one appeal.
    let mute_link = link(&net.stack, &a, &a, mute, 0).await;
    let (one, two) = tokio::join!(
        post_form(
            &net,
            &mute_link,
            "10.5.0.1",
            &[("message", "First of two racing appeals.")]
        ),
        post_form(
            &net,
            &mute_link,
            "10.5.0.2",
            &[("message", "Second of two racing appeals.")]
        ),
    );
    assert_eq!((one.status, two.status), (303, 303));
    net.stack.projected().await.expect("projected");
    assert_eq!(appeals(&net).await, 2, "one appeal per punishment");

    // A decision shows staff's reply, never who decided.
    sqlx::query(
        "UPDATE appeals SET status = 'denied', member_name = 'Mia Moderator',
                reply = 'The clip shows <i>x-ray</i>.', updated_at = now()
         WHERE punishment_id = $1",
    )
    .bind(Uuid::parse_str(ban).expect("uuid"))
    .execute(&net.stack.db.pool)
    .await
    .expect("decided");
    let decided = open(&net, &ban_link).await;
    assert!(decided.body.contains(r#"data-appeal-status="denied""#));
    assert!(
        decided
            .body
            .contains("The clip shows &#60;i&#62;x-ray&#60;/i&#62;.")
    );
    assert!(
        !decided.body.contains("Mia Moderator"),
        "the member is not named"
    );

    // One address: five posts a minute, then a 429 page with Retry-After.
    for attempt in 0..5 {
        let sent = post_form(&net, &ban_link, "10.9.9.9", &[("message", "")]).await;
        assert_ne!(sent.status, 429, "attempt {attempt}");
    }
    let throttled = post_form(&net, &ban_link, "10.9.9.9", &[("message", GOOD)]).await;
    assert_eq!(throttled.status, 429, "{}", throttled.body);
    assert!(throttled.retry_after.is_some(), "Retry-After is sent");
    assert!(throttled.body.contains("Too many"));
    let elsewhere = post_form(&net, &ban_link, "10.9.9.10", &[("message", "")]).await;
    assert_ne!(elsewhere.status, 429, "another address has its own quota");
}
