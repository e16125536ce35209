//! Requests a careful client never sends: two keys, request heads hyper refuses, forged
//! `X-Forwarded-For` entries; and the headers every response carries.

use crate::helpers::{TestApp, start, text};
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` as raw bytes and reads the answer until the server closes the connection.
pub(crate) async fn raw_exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // The server may answer (and close) before it has read everything; a reset is fine.
    let _ = stream.write_all(request).await;
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(until, stream.read(&mut buf)).await {
            Err(_) => panic!("the connection stayed open; received {received:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&received).into_owned()
}

/// Asserts a raw answer is `status` with a problem-details body of `code`.
pub(crate) fn assert_problem(answer: &str, status: u16, code: &str) {
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole response");
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with(&format!("http/1.1 {status} ")), "{answer}");
    assert!(
        head.contains("content-type: application/problem+json"),
        "{answer}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{answer}");
    let problem: Value = serde_json::from_str(body).expect("a JSON body");
    assert_eq!(problem["status"], status, "{answer}");
    assert_eq!(problem["code"], code, "{answer}");
}

/// An oversized head, a head of too many fields, an unparsable request line and an
/// unparsable header: each a problem-details answer, and the service goes on serving.
pub(crate) async fn assert_refused_heads_are_problems(addr: SocketAddr) {
    let big = format!(
        "GET /healthz HTTP/1.1\r\nHost: warden\r\nX-Big: {}\r\n\r\n",
        "a".repeat(70 * 1024)
    );
    let answer = raw_exchange(addr, big.as_bytes()).await;
    assert_problem(&answer, 431, "header_fields_too_large");
    let many: String = (0..120).map(|i| format!("X-Field-{i}: {i}\r\n")).collect();
    let many = format!("GET /healthz HTTP/1.1\r\nHost: warden\r\n{many}\r\n");
    let answer = raw_exchange(addr, many.as_bytes()).await;
    assert_problem(&answer, 431, "header_fields_too_large");
    let answer = raw_exchange(addr, b"GARBAGE\r\n\r\n").await;
    assert_problem(&answer, 400, "malformed_request");
    let answer = raw_exchange(addr, b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n").await;
    assert_problem(&answer, 400, "malformed_request");
    let fine = raw_exchange(
        addr,
        b"GET /healthz HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(fine.starts_with("HTTP/1.1 200"), "{fine}");
}

#[tokio::test]
async fn two_authorization_headers_are_a_400_on_every_kind_of_route() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let dashboard_key = text(&key["key"]);
    let twice = |path: &str, first: &str, second: &str| {
        app.client
            .get(app.url(path))
            .header(AUTHORIZATION, format!("Bearer {first}"))
            .header(AUTHORIZATION, format!("Bearer {second}"))
            .send()
    };
    for (path, key) in [
        ("/api/servers", &dashboard_key),
        ("/api/v1/events", &dashboard_key),
        ("/api/admin/accounts", &app.admin_key),
    ] {
        // The same valid key twice, and a valid key before a bad one: neither wins.
        for second in [key.as_str(), "wdn_dash_nope"] {
            let response = twice(path, key, second).await?;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
            let problem: Value = response.json().await?;
            assert_eq!(problem["code"], "duplicate_credentials", "{path}");
        }
        // One key is still fine.
        let one = app.get_with(path, Some(key)).await?;
        assert_eq!(one.status(), StatusCode::OK, "{path}");
    }
    Ok(())
}

#[tokio::test]
async fn heads_hyper_refuses_are_answered_with_problem_details() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    assert_refused_heads_are_problems(app.addr).await;
    Ok(())
}

#[tokio::test]
async fn every_response_says_nosniff_and_the_docs_carry_a_strict_policy() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let key = text(&key["key"]);
    for (path, key, status) in [
        ("/api/public/reviews", None, StatusCode::OK),
        ("/api/servers", Some(key.as_str()), StatusCode::OK),
        ("/api/servers", None, StatusCode::UNAUTHORIZED),
        ("/no/such/path", None, StatusCode::NOT_FOUND),
        ("/api/openapi.json", None, StatusCode::OK),
        ("/events", None, StatusCode::OK),
        ("/healthz", None, StatusCode::OK),
        ("/metrics", None, StatusCode::OK),
    ] {
        let response = app.get_with(path, key).await?;
        assert_eq!(response.status(), status, "{path}");
        assert_eq!(
            response.headers()["x-content-type-options"],
            "nosniff",
            "{path}"
        );
    }
    for path in ["/api/docs/", "/api/docs/swagger-ui.css"] {
        let response = app.get_with(path, None).await?;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let header = |name: &str| response.headers()[name].to_str().expect("ascii").to_owned();
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("x-frame-options"), "DENY");
        assert_eq!(header("referrer-policy"), "no-referrer");
        let csp = header("content-security-policy");
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(directive), "{directive} missing from {csp}");
        }
        assert!(!csp.contains("unsafe-eval"), "{csp}");
    }
    // The Swagger UI page loads only same-origin scripts (no inline script the policy blocks).
    let html = app.get_with("/api/docs/", None).await?.text().await?;
    let html = html.to_ascii_lowercase();
    assert_eq!(
        html.matches("<script").count(),
        html.matches("<script src=\"./").count(),
        "{html}"
    );
    Ok(())
}

/// Public `GET`s from one client, `X-Forwarded-For` as given; the first refusal's index.
async fn public_reads_until_refused(
    client: &reqwest::Client,
    addr: SocketAddr,
    forwarded_for: impl Fn(usize) -> String,
) -> Option<usize> {
    for i in 0..40 {
        let response = client
            .get(format!("http://{addr}/api/public/reviews"))
            .header("x-forwarded-for", forwarded_for(i))
            .send()
            .await
            .expect("sent");
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            return Some(i);
        }
        assert_eq!(response.status(), StatusCode::OK);
    }
    None
}

#[tokio::test]
async fn forged_entries_left_of_the_proxy_s_own_gain_no_quota() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let mut config = app.config.clone();
    config.trusted_proxies = vec!["127.0.0.0/8".parse().map_err(anyhow::Error::msg)?];
    let (addr, shutdown) = start(config, &app.client).await?;
    // An appending proxy at 127.0.0.1 saw 203.0.113.9; the client made up the rest.
    let refused = public_reads_until_refused(&app.client, addr, |i| {
        format!("198.51.100.{i}, 10.0.0.{i}, 203.0.113.9")
    })
    .await;
    assert_eq!(refused, Some(30), "one client, one quota of 30");
    // 203.0.113.11 names a victim, 203.0.113.10, to the left of itself: its own quota is spent.
    let refused =
        public_reads_until_refused(&app.client, addr, |_| "203.0.113.10, 203.0.113.11".into())
            .await;
    assert_eq!(refused, Some(30));
    let victim = app
        .client
        .get(format!("http://{addr}/api/public/reviews"))
        .header("x-forwarded-for", "203.0.113.10")
        .send()
        .await?;
    assert_eq!(
        victim.status(),
        StatusCode::OK,
        "the named address kept its quota"
    );
    shutdown.cancel();
    Ok(())
}
