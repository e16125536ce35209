//! SSRF: with the default policy (no `WEBHOOK_ALLOW_NETWORKS`), destinations on loopback,
//! private, link-local and other internal addresses are refused when added, and a hostname
//! that resolves to one of them is refused when delivering: nothing reaches the address.

use super::punishment;
use pipeline_tests::TestStack;
use reqwest::Method;
use serde_json::json;
use std::net::IpAddr;
use std::time::Duration;
use test_support::WebhookReceiver;

#[tokio::test]
async fn internal_addresses_are_refused_unless_the_operator_allows_them() -> anyhow::Result<()> {
    let receiver = WebhookReceiver::start().await?;
    // test_vars allows loopback for the other tests; empty is unset: the default policy.
    let stack =
        TestStack::start_with(|vars| super::alert_vars(vars).set("WEBHOOK_ALLOW_NETWORKS", ""))
            .await?;
    let account = stack.create_account("SSRF Network").await?;
    let path = format!("/api/admin/accounts/{}/destinations", account.id);
    let port = receiver.port();
    for url in [
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/hook".to_owned(),
        "http://192.168.1.1/hook".to_owned(),
        "http://100.64.0.1/hook".to_owned(),
        "http://0.0.0.0/hook".to_owned(),
        "http://[fd00::1]/hook".to_owned(),
        "http://[::ffff:169.254.169.254]/hook".to_owned(),
        // IPv6 forms that carry a private IPv4 (6to4, Teredo, IPv4-translated) or route
        // nowhere public (ORCHID, documentation).
        "http://[2002:a00:1::]/hook".to_owned(),
        "http://[2002:a9fe:a9fe::]/hook".to_owned(),
        "http://[2001::1]/hook".to_owned(),
        "http://[2001:10::1]/hook".to_owned(),
        "http://[2001:20::1]/hook".to_owned(),
        "http://[::ffff:0:a00:1]/hook".to_owned(),
        "http://[3fff::1]/hook".to_owned(),
        format!("http://127.0.0.1:{port}/hook"),
        format!("http://localhost:{port}/hook"),
        format!("http://[::1]:{port}/hook"),
    ] {
        let body = json!({"kind": "webhook", "url": url});
        let (status, problem) = stack
            .call(Method::POST, &path, &stack.admin_key, Some(body))
            .await;
        assert_eq!(
            (status, &problem["code"]),
            (422, &json!("forbidden_address")),
            "{url}: {problem}"
        );
    }
    let (status, list) = stack.call(Method::GET, &path, &stack.admin_key, None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["items"], json!([]), "a refused destination was stored");

    // A name the policy cannot see in the URL: this machine's host name, when it resolves to
    // loopback only (it does on the test machines: /etc/hosts). Refused at the latest when the
    // notifier resolves it, so the receiver on loopback never hears from it.
    let Some(host) = loopback_host_name().await else {
        eprintln!("skipped the resolved-name check: the host name does not resolve to loopback");
        return Ok(());
    };
    let url = format!("http://{host}:{port}/hook");
    let (status, created) = stack
        .call(
            Method::POST,
            &path,
            &stack.admin_key,
            Some(json!({"kind": "webhook", "url": url})),
        )
        .await;
    if status == 422 {
        // Refused when added already (the API resolved it): as good.
        assert_eq!(created["code"], "forbidden_address", "{created}");
        eprintln!("{host} was refused when added: {created}");
        return Ok(());
    }
    assert_eq!(status, 201, "{created}");
    let destination = created["id"].as_str().unwrap_or_default().to_owned();
    let rules = format!("/api/admin/accounts/{}/alert-rules", account.id);
    let rule = json!({"kind": "punishment_issued", "destinations": [destination]});
    let (status, body) = stack
        .call(Method::POST, &rules, &stack.admin_key, Some(rule))
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = stack
        .call(
            Method::POST,
            "/api/plugin/punishments",
            &account.plugin_key,
            Some(punishment("ban", "ssrf", "s-1")),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let log_path = format!("{path}/{destination}/deliveries");
    let attempted = pipeline_tests::eventually(Duration::from_secs(20), || async {
        let (_, log) = stack
            .call(Method::GET, &log_path, &stack.admin_key, None)
            .await;
        let entry = log["deliveries"].get(0)?.clone();
        (entry["attempts"].as_i64().unwrap_or(0) >= 1 && !entry["last_error"].is_null())
            .then_some(entry)
    })
    .await;
    let entry = attempted.ok_or_else(|| anyhow::anyhow!("no refused attempt within 20 s"))?;
    assert_eq!(entry["status"], "pending", "{entry}");
    assert!(entry["last_status_code"].is_null(), "{entry}");
    // The attempt is recorded after it was made: had it connected, the receiver would have
    // recorded the request by now.
    assert_eq!(
        receiver.received().await?.len(),
        0,
        "the request reached loopback"
    );
    eprintln!(
        "{host} was refused when delivering: {}",
        entry["last_error"]
    );
    Ok(())
}

/// This machine's host name, if every address it resolves to is loopback.
async fn loopback_host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim().to_owned();
    if name.is_empty() || name == "localhost" || name.ends_with(".localhost") {
        return None;
    }
    let addresses: Vec<IpAddr> = tokio::net::lookup_host((name.as_str(), 80))
        .await
        .ok()?
        .map(|a| a.ip())
        .collect();
    (!addresses.is_empty() && addresses.iter().all(IpAddr::is_loopback)).then_some(name)
}
