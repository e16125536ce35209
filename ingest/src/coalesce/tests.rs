use super::*;
use chrono::{Duration, TimeZone};

fn waiting(received_at: DateTime<Utc>, records: usize, payload: &[u8]) -> Waiting {
    let (reply, _) = oneshot::channel();
    Waiting {
        records_start: splice::records_start(payload),
        part: Part {
            account_id: Uuid::nil(),
            kind: RecordKind::Chat,
            subject: "t.part.0.x.chat".into(),
            received_at,
            records,
            client_ids: None,
            payload: payload.to_vec(),
        },
        reply,
    }
}

const SPLICEABLE: &[u8] = br#"{"v":1,"batch":{"kind":"chat","records":[{"id":1}]}}"#;

fn lane(parts: Vec<Waiting>) -> VecDeque<Waiting> {
    parts.into_iter().collect()
}

fn sizes(batch: &[Waiting]) -> Vec<usize> {
    batch.iter().map(|w| w.part.records).collect()
}

#[test]
fn a_batch_takes_waiting_messages_in_order_up_to_the_record_limit() {
    let now = Utc::now();
    let config = CoalesceConfig {
        max_records: 10,
        ..CoalesceConfig::default()
    };
    let mut queue = lane((1..=5).map(|n| waiting(now, n, SPLICEABLE)).collect());
    assert_eq!(sizes(&take_batch(&mut queue, &config)), [1, 2, 3, 4]);
    assert_eq!(sizes(&take_batch(&mut queue, &config)), [5]);
    assert!(take_batch(&mut queue, &config).is_empty());
}

#[test]
fn a_batch_stops_at_the_byte_limit_but_always_takes_one() {
    let now = Utc::now();
    let config = CoalesceConfig {
        max_bytes: 2 * SPLICEABLE.len(),
        ..CoalesceConfig::default()
    };
    let mut queue = lane((0..3).map(|_| waiting(now, 1, SPLICEABLE)).collect());
    assert_eq!(take_batch(&mut queue, &config).len(), 2);
    let tiny = CoalesceConfig {
        max_bytes: 1,
        ..CoalesceConfig::default()
    };
    assert_eq!(take_batch(&mut queue, &tiny).len(), 1);
}

#[test]
fn messages_of_another_day_or_layout_are_not_merged() {
    let midnight = Utc
        .with_ymd_and_hms(2026, 11, 25, 0, 0, 0)
        .single()
        .expect("a time");
    let before = midnight - Duration::milliseconds(1);
    let config = CoalesceConfig::default();
    let mut queue = lane(vec![
        waiting(before, 1, SPLICEABLE),
        waiting(before, 1, SPLICEABLE),
        waiting(midnight, 1, SPLICEABLE),
        waiting(midnight, 1, b"{}"),
        waiting(midnight, 1, SPLICEABLE),
    ]);
    assert_eq!(take_batch(&mut queue, &config).len(), 2, "the day before");
    assert_eq!(
        take_batch(&mut queue, &config).len(),
        1,
        "up to the unspliceable"
    );
    assert_eq!(
        take_batch(&mut queue, &config).len(),
        1,
        "the unspliceable alone"
    );
    assert_eq!(take_batch(&mut queue, &config).len(), 1);
}

#[test]
fn the_message_id_of_a_merged_publish_is_that_of_all_its_ids_in_order() {
    let account = Uuid::now_v7();
    let (a, b, c) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    // A lone message: SHA-256 of the account and its ids, as before coalescing.
    let mut hash = Sha256::new();
    for id in [account, a, b] {
        hash.update(id.as_bytes());
    }
    assert_eq!(
        message_id(account, [&vec![a, b]]),
        hex::encode(hash.finalize())
    );
    assert_eq!(
        message_id(account, [&vec![a], &vec![b, c]]),
        message_id(account, [&vec![a, b, c]])
    );
    assert_ne!(
        message_id(account, [&vec![a, b]]),
        message_id(account, [&vec![b, a]])
    );
}
