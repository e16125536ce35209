//! The player search in the header of every page (`/players/find`, `/players/suggestions`):
//! an exact match by current name, past name or UUID opens the Investigate page, several go to
//! the Players page's results, the suggestions partial lists matches with their past name,
//! another account's players never appear, hostile text gets the validation answer (never a
//! 5xx), and only roles that may open Players have the search.

use crate::dashboard::{Network, ago, now, post_as};
use crate::member::Member;
use serde_json::{Value, json};

const SERVER: &str = "5e000000-0000-4000-8000-000000000001";
/// Renamed from OldGrumpyMiner to ShinyNewName.
const RENAMED: &str = "5e000000-0000-4000-8000-0000000000a1";
const BUILDER_A: &str = "5e000000-0000-4000-8000-0000000000a2";
const BUILDER_B: &str = "5e000000-0000-4000-8000-0000000000a3";
/// Another account's players: one with the same old name, one with a name only it has.
const OUTSIDER: &str = "5e000000-0000-4000-8000-0000000000b1";
const ELSEWHERE: &str = "5e000000-0000-4000-8000-0000000000b2";

fn session(player: &str, name: &str, event: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "event": event,
           "at": at})
}

/// `q=<text>`, form-encoded as a browser sends it.
fn query(q: &str) -> String {
    let mut url = reqwest::Url::parse("http://localhost/").expect("url");
    url.query_pairs_mut().append_pair("q", q);
    url.query().unwrap_or_default().to_owned()
}

/// Where `/players/find?q=` sends the member (it always redirects).
async fn find(member: &Member, q: &str) -> String {
    let query = query(q);
    let answer = member.get(&format!("/players/find?{query}")).await;
    assert_eq!(answer.status().as_u16(), 303, "/players/find?{query}");
    answer.headers()["location"]
        .to_str()
        .expect("location")
        .to_owned()
}

/// `/players/suggestions?q=`: status and body.
async fn suggest(member: &Member, q: &str) -> (u16, String) {
    let query = query(q);
    member.page(&format!("/players/suggestions?{query}")).await
}

fn suggested(body: &str) -> Vec<String> {
    body.split(r#"data-uuid=""#)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_header_search_opens_one_player_suggests_matches_and_keeps_accounts_apart() {
    let net = Network::start("Header Search Network").await;
    let other = net.other_account("Header Search Elsewhere").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!([
            session(RENAMED, "OldGrumpyMiner", "join", ago(now, 9000)),
            session(RENAMED, "OldGrumpyMiner", "quit", ago(now, 8000)),
            session(RENAMED, "ShinyNewName", "join", ago(now, 300)),
            session(BUILDER_A, "Builder_A", "join", ago(now, 200)),
            session(BUILDER_B, "Builder_B", "join", ago(now, 100)),
        ]),
    )
    .await;
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!([
            session(OUTSIDER, "OldGrumpyMiner", "join", ago(now, 100)),
            session(ELSEWHERE, "OnlyElsewhere", "join", ago(now, 100)),
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    for (login, role) in [
        ("mod@search.test", "moderator"),
        ("viewer@search.test", "viewer"),
    ] {
        net.stack
            .create_member(&net.account.id, login, "Member", role)
            .await
            .expect("member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@search.test").await;
    let investigate = format!("/players/{RENAMED}");

    // One match opens the player: current name, past name (another account has it too), UUID.
    assert_eq!(find(&moderator, "ShinyNewName").await, investigate);
    assert_eq!(find(&moderator, " oldgrumpy ").await, investigate);
    assert_eq!(find(&moderator, RENAMED).await, investigate);
    assert_eq!(find(&moderator, &RENAMED.to_uppercase()).await, investigate);
    // Several, none, another account's player or an empty text: the Players page.
    assert_eq!(find(&moderator, "Builder").await, "/players?q=Builder");
    assert_eq!(
        find(&moderator, "OnlyElsewhere").await,
        "/players?q=OnlyElsewhere"
    );
    assert_eq!(
        find(&moderator, OUTSIDER).await,
        format!("/players?q={OUTSIDER}")
    );
    assert_eq!(find(&moderator, "").await, "/players");

    // Suggestions: the matches, a past name said, nothing of the other account.
    let (status, body) = suggest(&moderator, "grumpy").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(suggested(&body), vec![RENAMED.to_owned()], "{body}");
    assert!(body.contains(r#"role="listbox""#), "{body}");
    assert!(body.contains(r#"role="option""#), "{body}");
    assert!(body.contains("ShinyNewName"), "{body}");
    assert!(
        body.contains("was <span class=\"past-name\">OldGrumpyMiner"),
        "{body}"
    );
    let (_, body) = suggest(&moderator, "builder").await;
    assert_eq!(
        suggested(&body),
        vec![BUILDER_B.to_owned(), BUILDER_A.to_owned()],
        "newest seen first: {body}"
    );
    let (_, body) = suggest(&moderator, "OnlyElsewhere").await;
    assert!(suggested(&body).is_empty(), "{body}");
    assert!(
        body.contains("No player has or had a name matching"),
        "{body}"
    );
    let (_, body) = suggest(&moderator, OUTSIDER).await;
    assert!(suggested(&body).is_empty(), "{body}");
    let (_, body) = suggest(&moderator, RENAMED).await;
    assert_eq!(suggested(&body), vec![RENAMED.to_owned()], "{body}");
    // One character is still typing: nothing suggested, no error.
    let (status, body) = suggest(&moderator, "b").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        suggested(&body).is_empty() && !body.contains("error"),
        "{body}"
    );
}

#[tokio::test]
async fn hostile_search_text_gets_the_validation_answer_and_viewers_no_search() {
    let net = Network::start("Hostile Search Network").await;
    for (login, role) in [
        ("mod@hostile-search.test", "moderator"),
        ("viewer@hostile-search.test", "viewer"),
    ] {
        net.stack
            .create_member(&net.account.id, login, "Member", role)
            .await
            .expect("member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@hostile-search.test").await;
    let long = "x".repeat(101);
    let (status, body) = suggest(&moderator, &long).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("2 to 100 characters"), "{body}");
    // The form sends a refused text to the Players page, which says why (422).
    let to = find(&moderator, &long).await;
    assert_eq!(to, format!("/players?q={long}"));
    let (status, page) = moderator.page(&to).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("2 to 100 characters"), "{page}");
    let (status, body) = suggest(&moderator, "ab\0cd").await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(find(&moderator, "ab\0cd").await, "/players?q=ab%00cd");
    // Other control characters, markup, LIKE wildcards, broken escapes: answered, never 5xx.
    for q in [
        "\u{1}\u{7}\u{1b}[31m",
        "<script>alert(1)</script>",
        "%_\\",
        "é".repeat(100).as_str(),
    ] {
        let (status, body) = suggest(&moderator, q).await;
        assert_eq!(status, 200, "{q:?}: {body}");
        assert!(!body.contains("<script>"), "markup is escaped: {body}");
        find(&moderator, q).await;
    }
    for raw in ["q=%ZZ", "q=%FF%FE", "q", "q=a&q=b", "q=%00"] {
        for route in ["/players/suggestions", "/players/find"] {
            let (status, body) = moderator.page(&format!("{route}?{raw}")).await;
            assert!(
                (200..500).contains(&status),
                "{route}?{raw}: {status} {body}"
            );
        }
    }

    // The header has the search for a moderator, not for a viewer (who may not open Players).
    let (_, page) = moderator.page("/").await;
    assert!(page.contains(r#"id="player-find-q""#), "{page}");
    assert!(page.contains(r#"role="combobox""#), "{page}");
    let viewer = Member::sign_in(&net.stack.base, "viewer@hostile-search.test").await;
    let (status, page) = viewer.page("/").await;
    assert_eq!(status, 200);
    assert!(!page.contains(r#"id="player-find-q""#), "{page}");
    assert_eq!(viewer.page("/players/find?q=abc").await.0, 403);
    assert_eq!(viewer.page("/players/suggestions?q=abc").await.0, 403);
}
