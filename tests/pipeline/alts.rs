//! Alts through the whole pipeline: ingest hashes each join's IP with the keyed hash, the
//! sessions model stores the hash, and `GET /api/players/{uuid}/alts` links players behind
//! the same hash, within one account only, with their shared joins and whether each is
//! banned now (following a ban and its revoke).

use crate::dashboard::{Network, ago, get_as, items, now, post_as, wait_as};
use serde_json::{Value, json};

const SERVER: &str = "a1700000-0000-4000-8000-000000000001";
const MAIN: &str = "a1700000-0000-4000-8000-0000000000a1";
const ALT: &str = "a1700000-0000-4000-8000-0000000000a2";
const STRANGER: &str = "a1700000-0000-4000-8000-0000000000a3";
/// A player of the other account, joining from the very same IP.
const NEIGHBOUR: &str = "a1700000-0000-4000-8000-0000000000b1";
const HOME_IP: &str = "203.0.113.7";

fn join(player: &str, name: &str, ip: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "event": "join",
           "ip": ip, "at": at})
}

#[tokio::test]
async fn alts_link_players_behind_one_ip_within_an_account_and_never_across() {
    let net = Network::start("Alts Network").await;
    let other = net.other_account("Alts Elsewhere").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!([
            join(MAIN, "Main", HOME_IP, ago(now, 5000)),
            join(ALT, "Alty", HOME_IP, ago(now, 4000)),
            join(ALT, "Alty", HOME_IP, ago(now, 3000)),
            join(ALT, "Alty", "198.51.100.9", ago(now, 2500)),
            join(STRANGER, "Stranger", "192.0.2.44", ago(now, 2000)),
        ]),
    )
    .await;
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!([join(NEIGHBOUR, "Neighbour", HOME_IP, ago(now, 1000))]),
    )
    .await;

    // Within the account: two shared joins of the alt (the third came from another IP).
    let path = format!("/api/players/{MAIN}/alts");
    let body = net.wait_for(&path, |b| items(b).len() == 1).await;
    assert_eq!(
        body,
        json!({"items": [{"uuid": ALT, "username": "Alty", "shared_joins": 2,
            "first_shared_join": ago(now, 4000), "last_shared_join": ago(now, 3000),
            "is_banned": false, "is_muted": false}]})
    );
    assert!(
        !body.to_string().contains(HOME_IP),
        "the IP is never returned"
    );
    let (status, body) = net.get(&format!("/api/players/{ALT}/alts")).await;
    assert_eq!(status, 200);
    assert_eq!(items(&body).len(), 1, "{body}");
    assert_eq!(body["items"][0]["uuid"], MAIN);
    assert_eq!(body["items"][0]["shared_joins"], 1);
    let (_, body) = net.get(&format!("/api/players/{STRANGER}/alts")).await;
    assert_eq!(body, json!({"items": []}));

    // Across accounts: the same IP links nothing, either way.
    let theirs = wait_as(
        &net.stack,
        &other,
        &format!("/api/players/{NEIGHBOUR}/alts"),
        |_| true,
    )
    .await;
    assert_eq!(theirs, json!({"items": []}));
    let (status, _) = get_as(&net.stack, &other, &path).await;
    assert_eq!(status, 404, "another account's player is not found");
    assert!(
        !items(&net.get(&path).await.1)
            .iter()
            .any(|alt| alt["uuid"] == NEIGHBOUR)
    );
    // Not even in the database: each account hashes with its own key, so the neighbour's
    // join from HOME_IP stored a hash no join of this account has.
    let stored: Vec<(String, String)> = sqlx::query_as(
        "SELECT player_uuid::text, ip_hash FROM sessions \
         WHERE player_uuid IN ($1::uuid, $2::uuid, $3::uuid) AND ip_hash IS NOT NULL",
    )
    .bind(MAIN)
    .bind(ALT)
    .bind(NEIGHBOUR)
    .fetch_all(&net.stack.db.pool)
    .await
    .expect("session rows");
    let of = |player: &str| -> Vec<&str> {
        stored
            .iter()
            .filter(|(uuid, _)| uuid == player)
            .map(|(_, hash)| hash.as_str())
            .collect()
    };
    let neighbour = of(NEIGHBOUR);
    assert_eq!(neighbour.len(), 1, "{stored:?}");
    assert!(
        of(ALT).iter().any(|hash| of(MAIN).contains(hash)),
        "within the account the same IP hashes alike: {stored:?}"
    );
    assert!(
        !of(MAIN).contains(&neighbour[0]) && !of(ALT).contains(&neighbour[0]),
        "the same IP hashed alike in two accounts: {stored:?}"
    );

    // A ban marks the alt, its revoke clears the mark.
    let ban = json!({"server_id": SERVER, "player_uuid": ALT, "player_name": "Alty",
        "type": "ban", "reason": "cheating", "issued_at": ago(now, 100),
        "source_plugin": "litebans", "external_id": "alt-ban"});
    net.post("/api/plugin/punishments", json!([ban])).await;
    let body = net
        .wait_for(&path, |b| b["items"][0]["is_banned"] == true)
        .await;
    assert_eq!(body["items"][0]["is_muted"], false);
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": ALT, "type": "ban", "action": "revoke",
               "source_plugin": "litebans", "external_id": "alt-ban",
               "issued_at": ago(now, 50), "revoke_reason": "appeal"}),
    )
    .await;
    let body = net
        .wait_for(&path, |b| b["items"][0]["is_banned"] == false)
        .await;
    assert_eq!(body["items"][0]["shared_joins"], 2);
}
