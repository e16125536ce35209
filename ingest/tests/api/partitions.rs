//! The partition count of the event log belongs to the stream: `EVENT_PARTITIONS`
//! shapes only a stream ingest creates; a stream made with another count keeps it, and every
//! write follows the stream's count, whatever the process was configured with.

use crate::helpers::{PLAYER, TestIngest, config};
use async_nats::jetstream;
use serde_json::json;
use shared::event_log::PARTITIONS_METADATA;
use shared::keys::KeyKind;
use shared::subjects::partition_of;
use std::time::{Duration, Instant};
use uuid::Uuid;

#[tokio::test]
async fn a_stream_keeps_the_partitions_it_was_made_with() {
    let ingest = TestIngest::start_configured(|c| c.common.event_log.partitions = 4).await;
    // A second ingest on the same stream, configured for 16 partitions.
    let mut log = ingest.log.clone();
    log.partitions = 16;
    let second = ingest::App::build(
        config(ingest.nats.url(), log, &ingest.admin_key),
        ingest.shutdown.clone(),
    )
    .await
    .expect("the second ingest builds");
    let base = format!("http://{}", second.local_addr());
    tokio::spawn(second.run_until_stopped(ingest.shutdown.clone()));

    // An account whose partition among 16 is not its partition among 4, so a write under the
    // wrong count shows.
    let account = std::iter::repeat_with(Uuid::now_v7)
        .find(|a| partition_of(*a, 16) != partition_of(*a, 4))
        .expect("such an account");
    let key = ingest.add_key(account, KeyKind::Plugin).await;
    let body = json!({"player_uuid": PLAYER, "name": "level_up"});
    // The second ingest's own watch brings it the key (generous: the suite runs all at once).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = ingest
            .http
            .post(format!("{base}/api/v1/plugin/events"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .expect("sent")
            .status();
        if status == 202 {
            break;
        }
        assert!(Instant::now() < deadline, "never accepted: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let log = ingest.sealed_log().await;
    let (subject, _) = log.last().expect("the write is in the log");
    assert_eq!(
        *subject,
        format!(
            "{}.part.{}.{account}.custom.level_up",
            ingest.log.subject_prefix,
            partition_of(account, 4)
        )
    );
    let js = jetstream::new(
        async_nats::connect(ingest.nats.url())
            .await
            .expect("connect"),
    );
    let info = js
        .get_stream(&ingest.log.stream)
        .await
        .expect("stream")
        .info()
        .await
        .expect("info")
        .config
        .clone();
    assert_eq!(
        info.metadata.get(PARTITIONS_METADATA).map(String::as_str),
        Some("4")
    );
}
