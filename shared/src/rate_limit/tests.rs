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

/// One request through [`admit_batch`], with all the time in the world.
async fn admit_one(store: &MemoryStore, quota: Quota, client: &str, now: u64) -> Decision {
    let far = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
    let decisions = admit_batch(store, quota, client, 1, || now, far)
        .await
        .expect("store")
        .expect("decided");
    decisions[0]
}

#[tokio::test]
async fn admit_counts_in_the_store_and_refusals_write_nothing() {
    let store = MemoryStore::default();
    for _ in 0..30 {
        assert!(
            admit_one(&store, Quota::Public, "1.2.3.4", 5_000)
                .await
                .allowed
        );
    }
    let before = store.0.lock().expect("lock").get("public.1_2_3_4").cloned();
    let refused = admit_one(&store, Quota::Public, "1.2.3.4", 5_000).await;
    assert!(!refused.allowed);
    assert_eq!(
        store.0.lock().expect("lock").get("public.1_2_3_4").cloned(),
        before
    );
    assert!(
        admit_one(&store, Quota::Public, "5.6.7.8", 5_000)
            .await
            .allowed
    );
}

#[tokio::test]
async fn a_batch_is_decided_in_one_write_up_to_the_room_left() {
    let store = MemoryStore::default();
    let far = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
    for _ in 0..25 {
        assert!(
            admit_one(&store, Quota::Public, "batch", 1_000)
                .await
                .allowed
        );
    }
    let decisions = admit_batch(&store, Quota::Public, "batch", 8, || 2_000, far)
        .await
        .expect("store")
        .expect("decided");
    let admitted: Vec<u32> = decisions
        .iter()
        .filter(|d| d.allowed)
        .map(|d| d.remaining)
        .collect();
    assert_eq!(admitted, [4, 3, 2, 1, 0]);
    assert!(
        decisions[5..]
            .iter()
            .all(|d| !d.allowed && d.retry_after_secs == Some(59))
    );
    let (bytes, revision) = store
        .0
        .lock()
        .expect("lock")
        .get("public.batch")
        .cloned()
        .expect("a log");
    assert_eq!(WindowLog::decode(&bytes).0.len(), 30);
    assert_eq!(revision, 26, "one write for the whole batch");
}

/// A store where every write first lets the other tasks run, so concurrent writers of one
/// log conflict as replicas do.
#[derive(Default)]
struct ContendedStore(MemoryStore);

impl WindowStore for ContendedStore {
    type Error = String;
    async fn load(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, String> {
        self.0.load(key).await
    }
    async fn create(&self, key: &str, value: Vec<u8>) -> Result<bool, String> {
        tokio::task::yield_now().await;
        self.0.create(key, value).await
    }
    async fn update(&self, key: &str, value: Vec<u8>, revision: u64) -> Result<bool, String> {
        tokio::task::yield_now().await;
        self.0.update(key, value, revision).await
    }
}

#[tokio::test]
async fn contention_never_refuses_while_the_quota_has_room() {
    // 400 single-request writers on one log, all at once: each round of conflicts lets one
    // through, so the last admitted ones retry dozens of times. Exactly the quota is admitted,
    // and no refusal comes early.
    let store = ContendedStore::default();
    let far = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
    let writers =
        (0..400).map(|_| admit_batch(&store, Quota::Dashboard, "burst", 1, || 7_000, far));
    let decisions: Vec<Decision> = futures::future::join_all(writers)
        .await
        .into_iter()
        .map(|d| d.expect("store").expect("decided")[0])
        .collect();
    assert_eq!(decisions.iter().filter(|d| d.allowed).count(), 60);
    for refused in decisions.iter().filter(|d| !d.allowed) {
        assert_eq!(refused.retry_after_secs, Some(60), "the true wait, not 1");
    }
}

#[tokio::test]
async fn a_log_contended_past_the_deadline_gives_no_decision() {
    /// A log some other replica always changes first.
    struct AlwaysConflicting;
    impl WindowStore for AlwaysConflicting {
        type Error = String;
        async fn load(&self, _: &str) -> Result<Option<(Vec<u8>, u64)>, String> {
            Ok(Some((Vec::new(), 1)))
        }
        async fn create(&self, _: &str, _: Vec<u8>) -> Result<bool, String> {
            Ok(false)
        }
        async fn update(&self, _: &str, _: Vec<u8>, _: u64) -> Result<bool, String> {
            Ok(false)
        }
    }
    let give_up_at = tokio::time::Instant::now() + std::time::Duration::from_millis(100);
    let outcome = admit_batch(&AlwaysConflicting, Quota::Plugin, "k", 3, || 1, give_up_at)
        .await
        .expect("store");
    assert_eq!(outcome, None, "undecided, not refused");
    assert!(tokio::time::Instant::now() >= give_up_at);
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
