//! Serving under abuse: slowloris heads, trickled bodies, the connection cap, and 5xx bodies
//! that say nothing about internals. Raw TCP clients, so nothing is hidden by a client library.

use crate::helpers::{SERVER, TestIngest};
use serde_json::json;
use shared::serve::ServeLimits;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedReadHalf;
use tokio::time::{Instant, timeout};

fn addr(ingest: &TestIngest) -> String {
    ingest.base.trim_start_matches("http://").to_owned()
}

/// Reads until the peer closes (or fails) and returns what arrived; `None` if it is still
/// open at `deadline`.
async fn read_until_closed(reader: &mut OwnedReadHalf, deadline: Duration) -> Option<Vec<u8>> {
    let until = Instant::now() + deadline;
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(until, reader.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(received),
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        }
    }
}

/// Reads until a whole response head has arrived; `None` if none came within `deadline`.
async fn read_response_head(stream: &mut TcpStream, deadline: Duration) -> Option<String> {
    let until = Instant::now() + deadline;
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    while !received.windows(4).any(|w| w == b"\r\n\r\n") {
        match tokio::time::timeout_at(until, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&received).into_owned())
}

/// Connects and sends `prefix` a byte every 100 ms, then `a`s forever; returns the read half.
async fn trickle(ingest: &TestIngest, prefix: &'static [u8]) -> OwnedReadHalf {
    let (reader, mut writer) = TcpStream::connect(addr(ingest))
        .await
        .expect("connect")
        .into_split();
    tokio::spawn(async move {
        for byte in prefix.iter().chain(std::iter::repeat(&b'a')) {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    reader
}

/// A fresh connection each time: an idle pooled one may have just been closed by the very
/// header-read timeout under test, and reusing it would fail for that reason alone.
async fn healthz_ok(base: &str) -> bool {
    let Ok(http) = reqwest::Client::builder().pool_max_idle_per_host(0).build() else {
        return false;
    };
    let request = http.get(format!("{base}/healthz")).send();
    matches!(timeout(Duration::from_secs(2), request).await, Ok(Ok(r)) if r.status() == 200)
}

#[tokio::test]
async fn slowloris_clients_are_cut_off_while_others_are_served() {
    let ingest = TestIngest::start_with(ServeLimits {
        header_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    })
    .await;
    // One connection never sends a byte; one sends a request head a byte at a time, forever;
    // one does the same with an HTTP/2 preface (before hyper knows which protocol it speaks).
    let (mut silent, _silent_writer) = TcpStream::connect(addr(&ingest))
        .await
        .expect("connect")
        .into_split();
    let mut slow = trickle(
        &ingest,
        b"GET /healthz HTTP/1.1\r\nHost: warden\r\nX-Padding: ",
    )
    .await;
    let mut slow_h2 = trickle(&ingest, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await;

    // Meanwhile a normal client is served.
    assert!(healthz_ok(&ingest.base).await);

    let started = Instant::now();
    let silent_end = read_until_closed(&mut silent, Duration::from_secs(5)).await;
    assert!(silent_end.is_some(), "a silent connection stays open");
    let slow_end = read_until_closed(&mut slow, Duration::from_secs(5)).await;
    let slow_end = slow_end.expect("a slowloris connection stays open");
    assert!(
        !String::from_utf8_lossy(&slow_end).starts_with("HTTP/1.1 2"),
        "a slowloris request was answered"
    );
    let h2_end = read_until_closed(&mut slow_h2, Duration::from_secs(5)).await;
    assert!(h2_end.is_some(), "a slow HTTP/2 preface stays open");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(healthz_ok(&ingest.base).await);
}

#[tokio::test]
async fn a_body_trickled_in_too_slowly_gets_a_408() {
    let ingest = TestIngest::start_with(ServeLimits {
        body_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    })
    .await;
    let stream = TcpStream::connect(addr(&ingest)).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "POST /api/plugin/heartbeat HTTP/1.1\r\nHost: warden\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{{",
        ingest.plugin_key
    );
    writer.write_all(head.as_bytes()).await.expect("head sent");
    let trickle = tokio::spawn(async move {
        while writer.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let response = read_until_closed(&mut reader, Duration::from_secs(10))
        .await
        .expect("the slow body was not cut off");
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(
        response.contains("\"code\":\"request_timeout\""),
        "{response}"
    );
    trickle.abort();

    // A body sent at once is still fine.
    let heartbeat = json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10});
    assert_eq!(ingest.post("/api/plugin/heartbeat", heartbeat).await.0, 202);
}

#[tokio::test]
async fn the_connection_cap_holds_and_service_resumes_when_one_closes() {
    let mut ingest = TestIngest::start_with(ServeLimits {
        max_connections: 2,
        ..ServeLimits::default()
    })
    .await;
    // Let go of the set-up client's pooled connection, and never pool again.
    ingest.http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let request = b"GET /healthz HTTP/1.1\r\nHost: warden\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(addr(&ingest)).await.expect("connect");
        stream.write_all(request).await.expect("sent");
        let head = read_response_head(&mut stream, Duration::from_secs(5)).await;
        assert!(head.expect("served").starts_with("HTTP/1.1 200"));
        held.push(stream); // kept open (keep-alive): it holds its slot
    }

    // The third connection is not served while two are open.
    let mut third = TcpStream::connect(addr(&ingest))
        .await
        .expect("the kernel backlog takes it");
    third.write_all(request).await.expect("sent");
    assert!(
        read_response_head(&mut third, Duration::from_millis(700))
            .await
            .is_none(),
        "a third connection was served over the cap"
    );

    // One closes: the waiting connection is served, then everyone else.
    drop(held.remove(0));
    let head = read_response_head(&mut third, Duration::from_secs(5)).await;
    assert!(
        head.expect("served after a slot freed")
            .starts_with("HTTP/1.1 200")
    );
    drop(third);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !healthz_ok(&ingest.base).await {
        assert!(Instant::now() < deadline, "service did not resume");
    }
}

#[tokio::test]
async fn a_503_says_nothing_about_the_broker() {
    let mut ingest = TestIngest::start().await;
    ingest.nats.kill();
    let heartbeat = json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10});
    let response = ingest
        .post_raw(
            "/api/plugin/heartbeat",
            &ingest.plugin_key,
            "application/json",
            heartbeat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(response.status(), 503);
    let body = response.text().await.expect("body").to_lowercase();
    for internal in [
        "nats",
        "stream",
        "jetstream",
        "broker",
        "timed out",
        "error:",
    ] {
        assert!(!body.contains(internal), "'{internal}' in {body}");
    }
    assert!(body.contains("\"code\":\"unavailable\""), "{body}");
}

/// `in_flight` of the `ingest_writes` readiness probe.
async fn writes_in_flight(ingest: &TestIngest) -> u64 {
    let ready: serde_json::Value = ingest
        .http
        .get(format!("{}/readyz", ingest.base))
        .send()
        .await
        .expect("readyz answers")
        .json()
        .await
        .expect("readyz is JSON");
    ready["checks"]["ingest_writes"]["detail"]["in_flight"]
        .as_u64()
        .unwrap_or_else(|| panic!("no in_flight in {ready}"))
}

#[tokio::test]
async fn writes_beyond_the_in_flight_limit_wait_for_a_slot() {
    let ingest = TestIngest::start_configured(|config| {
        config.max_writes_in_flight = 1;
        config.common.serve.body_read_timeout = Duration::from_secs(2);
    })
    .await;
    // Write A takes the only slot and stalls in its body until the body timeout.
    let (mut reader, mut writer) = TcpStream::connect(addr(&ingest))
        .await
        .expect("connect")
        .into_split();
    let head = format!(
        "POST /api/plugin/heartbeat HTTP/1.1\r\nHost: warden\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{{",
        ingest.plugin_key
    );
    writer.write_all(head.as_bytes()).await.expect("head sent");
    let deadline = Instant::now() + Duration::from_secs(10);
    while writes_in_flight(&ingest).await != 1 {
        assert!(
            Instant::now() < deadline,
            "the stalled write never took its slot"
        );
        tokio::task::yield_now().await;
    }
    // Write B, complete at once, waits until A gives the slot back.
    let (done, mut order) = tokio::sync::mpsc::unbounded_channel();
    let b_done = done.clone();
    let (http, base, key) = (
        ingest.http.clone(),
        ingest.base.clone(),
        ingest.plugin_key.clone(),
    );
    let b = tokio::spawn(async move {
        let heartbeat =
            json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10});
        let status = http
            .post(format!("{base}/api/plugin/heartbeat"))
            .bearer_auth(key)
            .json(&heartbeat)
            .send()
            .await
            .expect("B answered")
            .status();
        let _ = b_done.send("B");
        status
    });
    // A's answer counts as soon as its head arrives (the connection closes a little later).
    let mut a = Vec::new();
    let mut buf = [0u8; 4096];
    while !a.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = timeout(Duration::from_secs(10), reader.read(&mut buf)).await;
        let n = read.expect("A was cut off").expect("A's connection reads");
        assert!(n > 0, "A's connection closed without an answer");
        a.extend_from_slice(&buf[..n]);
    }
    let _ = done.send("A");
    assert!(String::from_utf8_lossy(&a).starts_with("HTTP/1.1 408"));
    assert_eq!(b.await.expect("B ran"), 202);
    assert_eq!(
        order.recv().await,
        Some("A"),
        "B was served while A held the only slot"
    );
    assert_eq!(writes_in_flight(&ingest).await, 0);
}
