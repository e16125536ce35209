//! The projector's memory while it catches up on a backlog of large log messages (ingest
//! merges concurrent requests into messages of up to 1,000 records and a MiB): its read-ahead
//! and its chunks are bounded in bytes, so its peak stays far below the backlog's size.

use crate::harness::{Harness, eventually, logged};
use crate::workload::checkpoints_in;
use chrono::Utc;
use shared::envelope::{LogMessage, RecordBatch};
use shared::records::ChatEntry;
use std::process::Child;
use uuid::Uuid;

/// Log messages in the backlog, and chat records in each.
const MESSAGES: usize = 240;
const RECORDS: usize = 1_000;
/// The projector's peak RSS allowed before it has applied a quarter of the backlog (~87 MiB
/// of messages). Seen: 70 MiB (a debug build); reading 500 messages ahead, as a read-ahead
/// counted in messages alone did, held all of the backlog: 189 MiB.
const PEAK_MIB: u64 = 120;

/// A chat batch of `RECORDS` lines of about 180 bytes each.
fn large_batch(server: Uuid, players: &[Uuid], n: usize) -> RecordBatch {
    let text = "x".repeat(120);
    RecordBatch::Chat(
        (0..RECORDS)
            .map(|k| {
                logged::<ChatEntry>(&format!(
                    r#"{{"server_id":"{server}","player_uuid":"{}","entry_type":"chat",
                        "message":"{n}.{k} {text}","channel":"global",
                        "sent_at":"{}"}}"#,
                    players[k % players.len()],
                    Utc::now().to_rfc3339()
                ))
            })
            .collect(),
    )
}

/// `VmHWM` of `child`, in MiB.
fn peak_mib(child: &Child) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmHWM in {status}"))?;
    Ok(kib / 1024)
}

#[tokio::test]
async fn catching_up_on_large_messages_holds_a_bounded_part_of_the_backlog() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let account = Uuid::now_v7();
    let (server, players) = (
        Uuid::new_v4(),
        (0..50).map(|_| Uuid::new_v4()).collect::<Vec<_>>(),
    );
    let subjects = h.config.common.event_log.subjects();
    let mut bytes = 0;
    let mut acks = Vec::new();
    for n in 0..MESSAGES {
        let message = LogMessage::new(account, Utc::now(), large_batch(server, &players, n));
        let subject = subjects.for_records(account, message.kind(), None);
        let payload = message.encode();
        bytes += payload.len();
        acks.push(h.js.publish(subject, payload.into()).await?);
    }
    let mut last = 0;
    for ack in acks {
        last = last.max(ack.await?.sequence);
    }
    let partition = subjects.partition_of(account);

    let started = std::time::Instant::now();
    let mut child = crate::crash_safety::projector_command(&h)
        .env("PROJECTOR_BATCH_MAX", "500")
        .spawn()?;
    let quarter = last / 4;
    let reached = eventually("a quarter of the backlog applied", || async {
        let lowest = checkpoints_in(h.pool(), partition)
            .await?
            .into_iter()
            .map(|(_, at)| at)
            .min()
            .unwrap_or(0);
        Ok((lowest >= quarter as i64).then_some(()))
    })
    .await;
    let peak = peak_mib(&child);
    let took = started.elapsed();
    child.kill()?;
    child.wait()?;
    reached?;
    let peak = peak?;
    eprintln!(
        "projector peak RSS {peak} MiB at a quarter of a {} MiB backlog of {MESSAGES} messages, \
         reached in {took:?} ({:.0} records/s, start-up included)",
        bytes >> 20,
        (quarter as usize * RECORDS) as f64 / took.as_secs_f64()
    );
    assert!(
        peak <= PEAK_MIB,
        "peak RSS {peak} MiB over {PEAK_MIB} MiB while catching up on {} MiB",
        bytes >> 20
    );
    Ok(())
}
