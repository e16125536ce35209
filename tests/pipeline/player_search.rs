//! `GET /api/players?search=` through the whole pipeline: a player is found by a name they
//! had before a rename (with `matched_past_name` saying which), by prefix and by substring,
//! whatever the case, by UUID; another account's players never appear.

use crate::dashboard::{Network, ago, get_as, items, now, post_as};
use serde_json::{Value, json};

const SERVER: &str = "5c000000-0000-4000-8000-000000000001";
const RENAMED: &str = "5c000000-0000-4000-8000-0000000000a1";
const BYSTANDER: &str = "5c000000-0000-4000-8000-0000000000a2";
/// A player of another account who once had the very same name.
const OUTSIDER: &str = "5c000000-0000-4000-8000-0000000000b1";

fn join(player: &str, name: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "event": "join",
           "at": at})
}

/// The UUIDs found by `search`, with the past name that matched.
async fn found(net: &Network, search: &str) -> Vec<(String, Value)> {
    let (status, body) = net.get(&format!("/api/players?search={search}")).await;
    assert_eq!(status, 200, "{search}: {body}");
    items(&body)
        .iter()
        .map(|p| {
            (
                p["uuid"].as_str().unwrap_or_default().to_owned(),
                p["matched_past_name"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn players_are_found_by_past_names_prefix_substring_and_uuid_within_their_account() {
    let net = Network::start("Search Network").await;
    let other = net.other_account("Search Elsewhere").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!([
            join(RENAMED, "GrumpyOldMiner", ago(now, 5000)),
            join(BYSTANDER, "Bystander", ago(now, 4000)),
        ]),
    )
    .await;
    // The rename: a later chat line under the new name.
    net.post(
        "/api/plugin/chat",
        json!({"server_id": SERVER, "player_uuid": RENAMED, "player_name": "ShinyNewName",
               "entry_type": "chat", "message": "hi", "sent_at": ago(now, 100)}),
    )
    .await;
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!([join(OUTSIDER, "GrumpyOldMiner", ago(now, 50))]),
    )
    .await;
    net.wait_for("/api/players?search=shinynew", |b| items(b).len() == 1)
        .await;

    let renamed = |past: Value| vec![(RENAMED.to_owned(), past)];
    // Old name: substring, prefix (2 characters), whole, any case.
    assert_eq!(
        found(&net, "oldmin").await,
        renamed(json!("GrumpyOldMiner"))
    );
    assert_eq!(found(&net, "gR").await, renamed(json!("GrumpyOldMiner")));
    assert_eq!(
        found(&net, "GRUMPYOLDMINER").await,
        renamed(json!("GrumpyOldMiner"))
    );
    // Current name: no past name to report.
    assert_eq!(found(&net, "NEWNAME").await, renamed(Value::Null));
    assert_eq!(found(&net, "sh").await, renamed(Value::Null));
    // 2 characters match the start of a name only ("in" is inside both names).
    assert_eq!(found(&net, "in").await, vec![]);
    // From 3 characters on, anywhere in a name.
    assert_eq!(
        found(&net, "NDE").await,
        vec![(BYSTANDER.to_owned(), Value::Null)]
    );
    // The full body of one result: the current name, and the past name that matched.
    let (_, body) = net.get("/api/players?search=grumpy").await;
    assert_eq!(body["items"][0]["username"], "ShinyNewName");
    assert_eq!(body["items"][0]["matched_past_name"], "GrumpyOldMiner");
    assert_eq!(body["items"][0]["last_seen"], ago(now, 100));
    // By UUID, exact.
    assert_eq!(found(&net, RENAMED).await, renamed(Value::Null));

    // Tenancy: the other account's player with the same old name is never found here, and
    // this account's renamed player is never found there.
    assert!(
        found(&net, "grumpyold")
            .await
            .iter()
            .all(|p| p.0 != OUTSIDER)
    );
    assert_eq!(found(&net, OUTSIDER).await, vec![]);
    let theirs = crate::dashboard::wait_as(&net.stack, &other, "/api/players?search=grumpy", |b| {
        !items(b).is_empty()
    })
    .await;
    let uuids: Vec<String> = items(&theirs)
        .iter()
        .filter_map(|p| p["uuid"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(uuids, [OUTSIDER]);
    assert_eq!(theirs["items"][0]["matched_past_name"], Value::Null);
    let (_, body) = get_as(&net.stack, &other, "/api/players?search=shiny").await;
    assert_eq!(body, json!({"items": [], "next_cursor": null}));

    // A refused search: problem details naming the parameter.
    for bad in ["x", "%00ab"] {
        let (status, body) = net.get(&format!("/api/players?search={bad}")).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["errors"][0]["field"], "search", "{body}");
    }
}
