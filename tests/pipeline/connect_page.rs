//! The "Connect a server" page: an admin creates a plugin key there and gets a `config.yml`
//! whose address and key work: a heartbeat sent with exactly what the page gave shows the
//! server on the dashboard. Below admin the page is refused; the jar is offered only when the
//! deployment has one (`PLUGIN_JAR`).

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use pipeline_tests::TestStack;
use serde_json::json;

const SERVER: &str = "7d000000-0000-4000-8000-00000000d001";

/// The value of `key: "..."` in the page's config.yml (HTML-escaped as the page shows it).
fn config_value(page: &str, key: &str) -> String {
    let start = page
        .find(r#"id="plugin-config""#)
        .expect("the config is shown");
    let config = &page[start..];
    let line = config
        .lines()
        .find_map(|line| line.trim_start().strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in {config}"));
    let line = line
        .trim()
        .replace("&#x2f;", "/")
        .replace("&#47;", "/")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"");
    line.trim_matches('"').to_owned()
}

#[tokio::test]
async fn the_connect_page_gives_a_config_that_connects_a_server() {
    let net = Network::start("Connect Network").await;
    for (login, role) in [
        ("admin@connect.test", "admin"),
        ("mod@connect.test", "moderator"),
    ] {
        net.stack
            .create_member(&net.account.id, login, "Member", role)
            .await
            .expect("member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@connect.test").await;
    assert_eq!(moderator.page("/connect").await.0, 403);
    let (status, _, _) = moderator
        .post_form("/connect/key", &[("label", "Sneaky")], None)
        .await;
    assert_eq!(status, 403, "a moderator creates no key");

    let admin = Member::sign_in(&net.stack.base, "admin@connect.test").await;
    let (status, page) = admin.page("/connect").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(r#"action="/connect/key""#), "{page}");
    assert!(page.contains("./deploy/plugin.sh"), "no jar here: {page}");
    assert_eq!(admin.page("/connect/warden-plugin.jar").await.0, 404);

    let (status, _, page) = admin
        .post_form("/connect/key", &[("label", "Lobby \"1\"")], None)
        .await;
    assert_eq!(status, 200, "{page}");
    let base_url = config_value(&page, "base-url");
    let key = config_value(&page, "plugin-key");
    assert_eq!(
        base_url, net.stack.base,
        "the address the page was opened at"
    );
    assert!(key.starts_with("wdn_plugin_"), "{key}");
    assert!(page.contains("sync-interval-seconds: 15"), "{page}");
    let audited: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'key_created' AND detail->>'label' = $1",
    )
    .bind("Lobby \"1\"")
    .fetch_one(&net.stack.db.pool)
    .await
    .expect("audit rows");
    assert_eq!(audited, 1);

    // Exactly what the page gave: its address and its key (new keys work within seconds).
    let heartbeat = json!({"server_id": SERVER, "name": "Lobby", "tps": 20.0, "player_count": 1,
                           "max_players": 50, "timestamp": ago(now(), 1)});
    let accepted = pipeline_tests::eventually(pipeline_tests::WAIT, || async {
        let answer = net
            .stack
            .http
            .post(format!("{base_url}/api/plugin/heartbeat"))
            .bearer_auth(&key)
            .json(&heartbeat)
            .send()
            .await
            .ok()?;
        (answer.status() == 202).then_some(())
    })
    .await;
    assert!(accepted.is_some(), "the config's key and address are taken");
    let servers = net
        .wait_for("/api/servers", |body| !items(body).is_empty())
        .await;
    assert_eq!(items(&servers)[0]["id"], json!(SERVER));

    // The page lists the key, never its secret again.
    let (_, page) = admin.page("/connect").await;
    assert!(page.contains("Lobby &quot;1&quot;") || page.contains("Lobby &#34;1&#34;"));
    assert!(!page.contains(&key), "the secret is shown once");
}

#[tokio::test]
async fn the_jar_is_offered_when_the_deployment_has_one() {
    let jar = std::env::temp_dir().join(format!("warden-test-{}.jar", uuid::Uuid::new_v4()));
    std::fs::write(&jar, b"PK\x03\x04 not really a jar").expect("jar written");
    let path = jar.to_string_lossy().into_owned();
    let stack = TestStack::start_with(|vars| {
        vars.set("PLUGIN_JAR", &path)
            .set("PLUGIN_BASE_URL", "https://warden.example.net/")
    })
    .await
    .expect("stack");
    let account = stack.create_account("Jar Network").await.expect("account");
    stack
        .create_member(&account.id, "owner@jar.test", "Owner", "owner")
        .await
        .expect("member");
    let owner = Member::sign_in(&stack.base, "owner@jar.test").await;
    let (status, page) = owner.page("/connect").await;
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"href="/connect/warden-plugin.jar""#),
        "{page}"
    );
    let answer = owner.get("/connect/warden-plugin.jar").await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/java-archive");
    let bytes = answer.bytes().await.expect("body");
    assert_eq!(&bytes[..], b"PK\x03\x04 not really a jar");

    let (_, _, page) = owner
        .post_form("/connect/key", &[("label", "Survival")], None)
        .await;
    assert_eq!(
        config_value(&page, "base-url"),
        "https://warden.example.net",
        "PLUGIN_BASE_URL wins over the page's own address"
    );
    std::fs::remove_file(&jar).ok();
}
