//! Messages that can never be applied are parked, and the log keeps moving past them.

use crate::harness::{Harness, custom_event, logged};
use chrono::Utc;
use shared::records::{CustomEvent, RecordKind};
use uuid::Uuid;

#[tokio::test]
async fn garbage_and_unknown_versions_are_parked_and_later_messages_apply() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let subjects = h.config.common.event_log.subjects();
    let subject = subjects.for_records(account, RecordKind::Custom, Some("x"));

    let before = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "before", "{}"))],
        )
        .await?;
    let garbage = h
        .publish_raw(subject.clone(), b"\xff\x00 definitely not json".to_vec())
        .await?;
    let future = h
        .publish_raw(
            subject.clone(),
            br#"{"v":9,"account_id":"x","future":"fields"}"#.to_vec(),
        )
        .await?;
    let after = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "after", "{}"))],
        )
        .await?;
    assert!(before < garbage && garbage < future && future < after);
    h.caught_up_to(after).await?;

    let parked: Vec<(i64, String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT stream_sequence, subject, reason, payload FROM parked_messages ORDER BY stream_sequence",
    )
    .fetch_all(h.pool())
    .await?;
    assert_eq!(parked.len(), 2);
    assert_eq!(parked[0].0, garbage as i64);
    assert_eq!(parked[0].1, subject);
    assert!(parked[0].2.starts_with("undecodable"), "{}", parked[0].2);
    assert_eq!(parked[0].3, b"\xff\x00 definitely not json");
    assert_eq!(parked[1].0, future as i64);
    assert!(
        parked[1].2.starts_with("unknown_version"),
        "{}",
        parked[1].2
    );

    let names: Vec<String> =
        sqlx::query_scalar("SELECT name FROM events WHERE account_id = $1 ORDER BY seq")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(names, ["before", "after"]);
    assert!(
        shared::telemetry::prometheus()
            .render()
            .contains("projector_parked_total")
    );
    Ok(())
}
