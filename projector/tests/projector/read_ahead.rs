//! A reader of the log asks the server for no more than its read-ahead: whatever the server
//! has sent and the reader has not taken yet stays within one and a half pulls' bytes.

use crate::harness::Harness;
use async_nats::jetstream::consumer::{DeliverPolicy, PullConsumer};
use async_nats::jetstream::stream;
use futures::StreamExt;
use projector::read_ahead::{self, ReadAhead};
use uuid::Uuid;

/// Bytes of each message's payload.
const PAYLOAD: usize = 8 << 10;
const MESSAGES: u64 = 200;

#[tokio::test]
async fn what_the_server_sent_ahead_of_the_reader_stays_within_the_byte_cap() -> anyhow::Result<()>
{
    let h = Harness::start().await?;
    let id = Uuid::new_v4().simple().to_string();
    let stream =
        h.js.create_stream(stream::Config {
            name: format!("read-ahead-{id}"),
            subjects: vec![format!("ra.{id}.>")],
            ..Default::default()
        })
        .await?;
    let mut acks = Vec::new();
    for n in 0..MESSAGES {
        let payload = vec![u8::try_from(n % 251)?; PAYLOAD];
        acks.push(h.js.publish(format!("ra.{id}.x"), payload.into()).await?);
    }
    for ack in acks {
        ack.await?;
    }

    // A cap of eight messages' bytes; a message cap far above what it lets through.
    let cap = ReadAhead {
        messages: 1_000,
        bytes: 8 * PAYLOAD,
    };
    let (mut messages, waiting) =
        read_ahead::open(&stream, vec![format!("ra.{id}.>")], DeliverPolicy::All, cap).await?;
    assert_eq!(waiting, MESSAGES);
    let name = stream
        .consumer_names()
        .next()
        .await
        .ok_or_else(|| anyhow::anyhow!("no consumer"))??;
    let mut consumer: PullConsumer = stream
        .get_consumer(&name)
        .await
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    let mut taken = 0u64;
    let mut most_ahead = 0u64;
    while taken < MESSAGES {
        let message = messages
            .next()
            .await
            .ok_or_else(|| anyhow::anyhow!("the reader ended"))??;
        assert_eq!(message.payload.len(), PAYLOAD);
        taken += 1;
        // Sent by the server and not taken by the reader: on the wire or in its buffers.
        let sent = consumer.info().await?.delivered.consumer_sequence;
        let ahead = sent - taken;
        most_ahead = most_ahead.max(ahead);
        assert!(
            ahead as usize * PAYLOAD <= cap.most_bytes(),
            "{ahead} messages of {PAYLOAD} bytes ahead of the reader, cap {} bytes",
            cap.most_bytes()
        );
    }
    eprintln!("at most {most_ahead} messages ahead of the reader");
    assert!(most_ahead > 0, "the reader reads ahead");
    stream.delete_consumer(&name).await?;
    Ok(())
}
