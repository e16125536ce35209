//! Request heads a careful client never sends: two keys, heads hyper refuses (too big, too many
//! fields, not HTTP). Each gets problem details, nothing is written, and every answer says
//! `nosniff`.

use crate::helpers::{SERVER, TestIngest};
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` as raw bytes and reads the answer until the server closes the connection.
async fn raw_exchange(ingest: &TestIngest, request: &[u8]) -> String {
    let addr = ingest.base.trim_start_matches("http://");
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

fn assert_problem(answer: &str, status: u16, code: &str) {
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

#[tokio::test]
async fn two_authorization_headers_are_a_400_and_nothing_is_written() {
    let ingest = TestIngest::start().await;
    let heartbeat = json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10});
    let event = json!({"name": "vote_cast", "properties": {}});
    for (path, body) in [
        ("/api/plugin/heartbeat", &heartbeat),
        ("/api/v1/plugin/events", &event),
    ] {
        for second in [ingest.plugin_key.as_str(), "wdn_plugin_nope"] {
            let response = ingest
                .http
                .post(format!("{}{path}", ingest.base))
                .header(AUTHORIZATION, format!("Bearer {}", ingest.plugin_key))
                .header(AUTHORIZATION, format!("Bearer {second}"))
                .json(body)
                .send()
                .await
                .expect("sent");
            assert_eq!(response.status(), 400, "{path}");
            assert_eq!(response.headers()["x-content-type-options"], "nosniff");
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
            let problem: Value = response.json().await.expect("json");
            assert_eq!(problem["code"], "duplicate_credentials", "{path}");
        }
    }
    assert!(
        ingest.log_messages().await.is_empty(),
        "a write got through"
    );
    // One key is still fine, and its answer says nosniff too.
    let response = ingest
        .post_raw(
            "/api/plugin/heartbeat",
            &ingest.plugin_key,
            "application/json",
            heartbeat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(response.status(), 202);
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn heads_hyper_refuses_are_answered_with_problem_details() {
    let ingest = TestIngest::start().await;
    let big = format!(
        "POST /api/plugin/heartbeat HTTP/1.1\r\nHost: warden\r\nX-Big: {}\r\n\r\n",
        "a".repeat(70 * 1024)
    );
    assert_problem(
        &raw_exchange(&ingest, big.as_bytes()).await,
        431,
        "header_fields_too_large",
    );
    let many: String = (0..120).map(|i| format!("X-Field-{i}: {i}\r\n")).collect();
    let many = format!("GET /healthz HTTP/1.1\r\nHost: warden\r\n{many}\r\n");
    assert_problem(
        &raw_exchange(&ingest, many.as_bytes()).await,
        431,
        "header_fields_too_large",
    );
    assert_problem(
        &raw_exchange(&ingest, b"\x16\x03\x01 not http\r\n\r\n").await,
        400,
        "malformed_request",
    );
    assert_problem(
        &raw_exchange(&ingest, b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n").await,
        400,
        "malformed_request",
    );
    // A keep-alive connection whose second head is broken: the first answer is untouched.
    let two = b"GET /healthz HTTP/1.1\r\nHost: warden\r\n\r\nGET /x HTTP/1.1\r\n: nope\r\n\r\n";
    let answers = raw_exchange(&ingest, two).await;
    assert!(answers.starts_with("HTTP/1.1 200"), "{answers}");
    let second = &answers[answers.find("HTTP/1.1 400").expect("a 400 second")..];
    assert_problem(second, 400, "malformed_request");
    let fine = raw_exchange(
        &ingest,
        b"GET /healthz HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(fine.starts_with("HTTP/1.1 200"), "{fine}");
}
