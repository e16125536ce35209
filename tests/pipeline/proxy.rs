//! A proxy among the servers: its heartbeats say `role: proxy`; the Servers API and pages
//! list it as a proxy, and the Overview (API and page) and its players chart count the
//! network's players on the game servers only, so a player behind the proxy counts once.

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use serde_json::{Value, json};

const LOBBY: &str = "9c000000-0000-4000-8000-000000000001";
const SURVIVAL: &str = "9c000000-0000-4000-8000-000000000002";
const PROXY: &str = "9c000000-0000-4000-8000-0000000000f1";

/// The values of the first chart on a page (its `data-chart` attribute, unescaped).
fn chart_values(html: &str) -> Vec<Option<f64>> {
    let data = html
        .split("data-chart=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a chart")
        .replace("&#34;", "\"")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let chart: Value = serde_json::from_str(&data).expect("chart JSON");
    chart["series"][0]["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(Value::as_f64)
        .collect()
}

/// The table row of `name` on a page.
fn row_of<'a>(html: &'a str, name: &str) -> &'a str {
    html.split("<tr>")
        .find(|row| row.contains(&format!(">{name}</a>")))
        .unwrap_or_else(|| panic!("no row for {name}: {html}"))
}

#[tokio::test]
async fn a_proxy_is_listed_as_one_and_its_players_are_not_counted_twice() {
    let net = Network::start("Proxy Network").await;
    let now = now();
    // Five players: three on the lobby, two on survival, all five through the proxy.
    net.post(
        "/api/plugin/heartbeat",
        json!([
            {"server_id": LOBBY, "name": "Lobby", "tps": 20, "player_count": 3,
             "max_players": 100, "timestamp": ago(now, 1)},
            {"server_id": SURVIVAL, "name": "Survival", "tps": 19.5, "player_count": 2,
             "max_players": 100, "role": "server", "timestamp": ago(now, 1)},
            {"server_id": PROXY, "name": "Velocity", "tps": 20, "player_count": 5,
             "max_players": 500, "version": "Velocity 3.4.0", "role": "proxy",
             "timestamp": ago(now, 1)},
        ]),
    )
    .await;

    let body = net.wait_for("/api/servers", |b| items(b).len() == 3).await;
    let roles: Vec<Value> = items(&body)
        .iter()
        .map(|s| json!([s["name"], s["role"]]))
        .collect();
    assert_eq!(
        roles,
        [
            json!(["Lobby", "server"]),
            json!(["Survival", "server"]),
            json!(["Velocity", "proxy"])
        ]
    );
    assert_eq!(
        items(&body)[2]["player_count"],
        5,
        "the proxy's own count is shown"
    );

    let (status, overview) = net.get("/api/overview").await;
    assert_eq!(status, 200, "{overview}");
    assert_eq!(
        overview["players_online"], 5,
        "each player once: {overview}"
    );
    assert_eq!(
        overview["servers_online"], 3,
        "the proxy is a server that is up"
    );
    let network: Vec<f64> = overview["network"]
        .as_array()
        .expect("network")
        .iter()
        .filter_map(|p| p["players"].as_f64())
        .collect();
    assert_eq!(network, [5.0], "the chart counts each player once");
    let role_in_overview = overview["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["id"] == PROXY)
        .map(|s| s["role"].clone());
    assert_eq!(role_in_overview, Some(json!("proxy")));

    net.stack
        .create_member(&net.account.id, "mod@proxy.test", "Member", "moderator")
        .await
        .expect("member");
    let member = Member::sign_in(&net.stack.base, "mod@proxy.test").await;
    let (status, page) = member.page("/").await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<dt>Players online</dt><dd>5</dd>"),
        "the Overview counts each player once: {page}"
    );
    let values: Vec<f64> = chart_values(&page).into_iter().flatten().collect();
    assert_eq!(
        values,
        [5.0],
        "the Overview's chart counts each player once"
    );
    assert!(row_of(&page, "Velocity").contains(r#"<span class="tag">Proxy</span>"#));
    assert!(!row_of(&page, "Lobby").contains("Proxy"));

    let (status, page) = member.page("/servers").await;
    assert_eq!(status, 200, "{page}");
    assert!(
        row_of(&page, "Velocity").contains(r#"<span class="tag">Proxy</span>"#),
        "{page}"
    );
    for game_server in ["Lobby", "Survival"] {
        assert!(!row_of(&page, game_server).contains("Proxy"), "{page}");
    }

    let (status, page) = member.page(&format!("/servers/{PROXY}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains(r#"Velocity <span class="tag">Proxy</span></h2>"#),
        "{page}"
    );
    let players: Vec<f64> = page
        .split("data-chart=\"")
        .nth(2)
        .map(|rest| chart_values(&format!("data-chart=\"{rest}")))
        .expect("the players chart")
        .into_iter()
        .flatten()
        .collect();
    assert!(
        !players.is_empty() && players.iter().all(|&p| p == 5.0),
        "the proxy's own players chart: {players:?}"
    );
    let (status, history) = net.get(&format!("/api/servers/{PROXY}/history")).await;
    assert_eq!(status, 200, "{history}");
}
