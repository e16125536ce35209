//! The dashboard quota (60 per rolling minute per key) and the public quota (30 per client IP),
//! with exact headers, across replicas, and the trusted-proxy rule for `X-Forwarded-For`.

use crate::helpers::{TestApp, start, text};
use reqwest::{Response, StatusCode};

fn header(response: &Response, name: &str) -> u64 {
    response.headers()[name]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number")
}

/// Spends `key`'s quota at `base` until the next request is refused; returns that refusal.
async fn exhaust(client: &reqwest::Client, url: &str, key: Option<&str>) -> Response {
    for _ in 0..100 {
        let mut request = client.get(url);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.expect("sent");
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            return response;
        }
        assert_eq!(response.status(), StatusCode::OK);
    }
    panic!("no 429 within 100 requests");
}

#[tokio::test]
async fn a_dashboard_key_gets_exactly_60_requests_per_rolling_minute() {
    let app = TestApp::spawn().await.expect("app");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = text(&key["key"]);
    let url = app.url("/api/v1/events");
    let first = app
        .client
        .get(&url)
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(header(&first, "ratelimit-limit"), 60);
    let mut remaining = header(&first, "ratelimit-remaining");
    assert!(header(&first, "ratelimit-reset") <= 60);
    while remaining > 0 {
        let response = app
            .client
            .get(&url)
            .bearer_auth(&key)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, "ratelimit-remaining"), remaining - 1);
        remaining -= 1;
    }
    let refused = app
        .client
        .get(&url)
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait = header(&refused, "retry-after");
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    // Refusals do not count; admin calls are not limited; a bad key is still a 401.
    assert_eq!(
        app.client
            .get(&url)
            .bearer_auth(&key)
            .send()
            .await
            .expect("sent")
            .status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        app.admin(reqwest::Method::GET, "/api/admin/accounts")
            .send()
            .await
            .expect("sent")
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.client
            .get(&url)
            .bearer_auth("wdn_dash_nope")
            .send()
            .await
            .expect("sent")
            .status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn the_dashboard_quota_holds_across_two_replicas() {
    let app = TestApp::spawn().await.expect("app");
    let second = app.second_instance().await.expect("second replica");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = text(&key["key"]);
    let urls = [
        app.url("/api/servers"),
        format!("http://{}/api/servers", second.addr),
    ];
    let mut admitted = 0;
    for i in 0..80 {
        let response = app
            .client
            .get(&urls[i % 2])
            .bearer_auth(&key)
            .send()
            .await
            .expect("sent");
        if response.status() == StatusCode::OK {
            admitted += 1;
        }
    }
    // account_with_dashboard_key spent one request proving the key works.
    assert_eq!(admitted, 59, "one shared window across both replicas");
}

#[tokio::test]
async fn public_reads_get_30_per_client_ip_and_a_spoofed_header_gains_nothing() {
    let app = TestApp::spawn().await.expect("app");
    let url = app.url("/api/public/exchange-rates");
    let refused = exhaust(&app.client, &url, None).await;
    assert_eq!(header(&refused, "ratelimit-limit"), 30);
    assert!(header(&refused, "retry-after") >= 1);
    // The peer is not a trusted proxy, so X-Forwarded-For is ignored.
    let spoofed = app
        .client
        .get(&url)
        .header("x-forwarded-for", "198.51.100.1")
        .send()
        .await
        .expect("sent");
    assert_eq!(spoofed.status(), StatusCode::TOO_MANY_REQUESTS);
    let reviews = app
        .client
        .get(app.url("/api/public/reviews"))
        .send()
        .await
        .expect("sent");
    assert_eq!(
        reviews.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "one quota for every public endpoint"
    );
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_quota() {
    let app = TestApp::spawn().await.expect("app");
    let mut config = app.config.clone();
    config.trusted_proxies = vec!["127.0.0.0/8".parse().expect("cidr")];
    let (addr, shutdown) = start(config, &app.client).await.expect("proxied instance");
    let url = format!("http://{addr}/api/public/reviews");
    let mut refused = None;
    for _ in 0..31 {
        let response = app
            .client
            .get(&url)
            .header("x-forwarded-for", "198.51.100.1, 127.0.0.1")
            .send()
            .await
            .expect("sent");
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            refused = Some(response);
        }
    }
    assert!(refused.is_some(), "the forwarded client has 30");
    let other = app
        .client
        .get(&url)
        .header("x-forwarded-for", "198.51.100.2")
        .send()
        .await
        .expect("sent");
    assert_eq!(
        other.status(),
        StatusCode::OK,
        "another forwarded client has its own quota"
    );
    shutdown.cancel();
}

#[tokio::test]
async fn an_open_stream_counts_once() {
    let app = TestApp::spawn().await.expect("app");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = text(&key["key"]);
    let stream = app
        .client
        .get(app.url("/api/v1/events/stream"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("open");
    assert_eq!(stream.status(), StatusCode::OK);
    let before = header(&stream, "ratelimit-remaining");
    let next = app
        .client
        .get(app.url("/api/v1/events"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(
        header(&next, "ratelimit-remaining"),
        before - 1,
        "the open stream spent one request"
    );
    drop(stream);
}

#[tokio::test]
async fn a_concurrent_burst_of_the_whole_quota_gets_through() {
    let app = TestApp::spawn().await.expect("app");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = text(&key["key"]);
    let url = app.url("/api/servers");
    // account_with_dashboard_key spent one request; the other 59 go at once.
    let burst = (0..59).map(|_| app.client.get(&url).bearer_auth(&key).send());
    let statuses: Vec<StatusCode> = futures::future::join_all(burst)
        .await
        .into_iter()
        .map(|response| response.expect("sent").status())
        .collect();
    assert!(
        statuses.iter().all(|s| *s == StatusCode::OK),
        "{statuses:?}"
    );
    let next = app
        .client
        .get(&url)
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(next.status(), StatusCode::TOO_MANY_REQUESTS);
}
