use super::*;
use std::collections::HashMap;
use std::sync::Mutex;

#[test]
fn the_whole_quota_may_be_spent_at_once_then_the_true_wait_is_given() {
    let mut log = WindowLog::default();
    for i in 0..60 {
        let d = log.admit(60, 1_000_000 + i);
        assert!(d.allowed);
        assert_eq!(d.remaining, 59 - i as u32);
    }
    let refused = log.admit(60, 1_000_500);
    assert!(!refused.allowed);
    // The first request (at 1_000_000) leaves the window at 1_060_000: 59.5 s away.
    assert_eq!(refused.retry_after_secs, Some(60));
    // A retry after the advertised wait succeeds.
    assert!(log.admit(60, 1_000_500 + 60_000).allowed);
}

#[test]
fn never_more_than_n_in_any_rolling_window() {
    let mut log = WindowLog::default();
    let mut accepted = Vec::new();
    // A client hammering every 100 ms for 5 minutes.
    for step in 0..3000u64 {
        let now = step * 100;
        if log.admit(30, now).allowed {
            accepted.push(now);
        }
    }
    for (i, &start) in accepted.iter().enumerate() {
        let in_window = accepted[i..]
            .iter()
            .take_while(|&&t| t < start + WINDOW_MS)
            .count();
        assert!(
            in_window <= 30,
            "{in_window} requests in the window starting at {start}"
        );
    }
    // And the quota is actually usable: 30 per minute over 5 minutes.
    assert_eq!(accepted.len(), 150);
}

#[test]
fn retry_after_is_rounded_up_and_never_zero() {
    let mut log = WindowLog::default();
    assert!(log.admit(1, 10_000).allowed);
    assert_eq!(log.admit(1, 69_999).retry_after_secs, Some(1));
    assert_eq!(log.admit(1, 10_001).retry_after_secs, Some(60));
    assert_eq!(log.admit(1, 68_800).retry_after_secs, Some(2));
}

#[test]
fn the_log_round_trips() {
    let mut log = WindowLog::default();
    log.admit(5, 7);
    log.admit(5, 9);
    assert_eq!(WindowLog::decode(&log.encode()), log);
    assert_eq!(WindowLog::decode(b"junk"), WindowLog::default());
}

#[test]
fn store_keys_are_kv_safe() {
    assert_eq!(Quota::Public.store_key("2001:db8::1"), "public.2001_db8__1");
    assert_eq!(Quota::Plugin.store_key("0190-ab"), "plugin.0190-ab");
}

/// An in-memory store with compare-and-set, to check the retry loop.
#[derive(Default)]
struct MemoryStore(Mutex<HashMap<String, (Vec<u8>, u64)>>);

impl WindowStore for MemoryStore {
    type Error = String;
    async fn load(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, String> {
        Ok(self.0.lock().map_err(|e| e.to_string())?.get(key).cloned())
    }
    async fn create(&self, key: &str, value: Vec<u8>) -> Result<bool, String> {
        let mut map = self.0.lock().map_err(|e| e.to_string())?;
        if map.contains_key(key) {
            return Ok(false);
        }
        map.insert(key.to_owned(), (value, 1));
        Ok(true)
    }
    async fn update(&self, key: &str, value: Vec<u8>, revision: u64) -> Result<bool, String> {
        let mut map = self.0.lock().map_err(|e| e.to_string())?;
        match map.get(key) {
            Some((_, current)) if *current == revision => {
                map.insert(key.to_owned(), (value, revision + 1));
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[tokio::test]
async fn admit_counts_in_the_store_and_refusals_write_nothing() {
    let store = MemoryStore::default();
    for _ in 0..30 {
        assert!(
            admit(&store, Quota::Public, "1.2.3.4", || 5_000)
                .await
                .expect("store")
                .allowed
        );
    }
    let before = store.0.lock().expect("lock").get("public.1_2_3_4").cloned();
    let refused = admit(&store, Quota::Public, "1.2.3.4", || 5_000)
        .await
        .expect("store");
    assert!(!refused.allowed);
    assert_eq!(
        store.0.lock().expect("lock").get("public.1_2_3_4").cloned(),
        before
    );
    assert!(
        admit(&store, Quota::Public, "5.6.7.8", || 5_000)
            .await
            .expect("store")
            .allowed
    );
}

#[test]
fn forwarded_for_counts_only_behind_a_trusted_proxy() {
    let trusted: Vec<TrustedProxy> = vec![
        "10.0.0.0/8".parse().expect("cidr"),
        "::1".parse().expect("ip"),
    ];
    let proxy: std::net::IpAddr = "10.1.2.3".parse().expect("ip");
    let stranger: std::net::IpAddr = "203.0.113.9".parse().expect("ip");
    assert_eq!(
        client_ip(proxy, Some("198.51.100.7, 10.1.2.3"), &trusted).to_string(),
        "198.51.100.7"
    );
    assert_eq!(
        client_ip(stranger, Some("198.51.100.7"), &trusted),
        stranger,
        "spoofed header ignored"
    );
    assert_eq!(client_ip(proxy, None, &trusted), proxy);
    assert_eq!(client_ip(proxy, Some("garbage"), &trusted), proxy);
    assert_eq!(
        client_ip("::1".parse().expect("ip"), Some("192.0.2.1"), &trusted).to_string(),
        "192.0.2.1"
    );
    assert_eq!(
        client_ip(
            "::ffff:10.0.0.1".parse().expect("ip"),
            Some("192.0.2.2"),
            &trusted
        )
        .to_string(),
        "192.0.2.2"
    );
    assert!("10.0.0.0/33".parse::<TrustedProxy>().is_err());
    assert!("nope".parse::<TrustedProxy>().is_err());
    let everyone: TrustedProxy = "0.0.0.0/0".parse().expect("cidr");
    assert!(everyone.contains(stranger));
}

#[test]
fn forwarded_for_takes_the_right_most_address_no_trusted_proxy_wrote() {
    let trusted: Vec<TrustedProxy> = vec!["10.0.0.0/8".parse().expect("cidr")];
    let edge: std::net::IpAddr = "10.0.0.5".parse().expect("ip");
    let ip = |peer, lines: &[&str]| client_ip(peer, lines.iter().copied(), &trusted).to_string();
    // An appending edge: the client forged the left part; the edge added what it saw.
    assert_eq!(ip(edge, &["1.1.1.1, 203.0.113.7"]), "203.0.113.7");
    assert_eq!(ip(edge, &["victim, 9.9.9.9, 203.0.113.7"]), "203.0.113.7");
    // Two trusted hops (edge -> internal proxy -> service) are skipped.
    assert_eq!(ip(edge, &["1.1.1.1, 203.0.113.7, 10.2.3.4"]), "203.0.113.7");
    // Several header lines are one list, in order.
    assert_eq!(
        ip(edge, &["1.1.1.1", "203.0.113.7, 10.2.3.4"]),
        "203.0.113.7"
    );
    // Ports and blank entries.
    assert_eq!(ip(edge, &["203.0.113.7:4711, "]), "203.0.113.7");
    assert_eq!(ip(edge, &["[2001:db8::1]:443"]), "2001:db8::1");
    // Garbage stops the walk at the last address believed.
    assert_eq!(ip(edge, &["203.0.113.7, nonsense, 10.2.3.4"]), "10.2.3.4");
    assert_eq!(ip(edge, &["203.0.113.7, nonsense"]), "10.0.0.5");
    // Every hop trusted: the left-most one is the client (an internal caller).
    assert_eq!(ip(edge, &["10.9.9.9, 10.2.3.4"]), "10.9.9.9");
    // An untrusted peer's header counts for nothing, however it is written.
    let stranger: std::net::IpAddr = "198.51.100.1".parse().expect("ip");
    assert_eq!(ip(stranger, &["203.0.113.7"]), "198.51.100.1");
}
