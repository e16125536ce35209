//! Opening NATS the same way in every service: the connection, the KV buckets, and the event
//! stream with its start-up check.
//!
//! Start-up glue, so errors are `anyhow` with the context an operator needs (which server,
//! which stream, which bucket); URLs in them are redacted ([`NatsUrl`]).

use crate::event_log::{self, EventLogConfig};
use crate::secret::NatsUrl;
use anyhow::Context;
use async_nats::jetstream::{self, kv, stream::Stream};
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::watch;

/// A NATS client, and how often it has reconnected since it first connected.
pub struct Connection {
    /// The client.
    pub client: async_nats::Client,
    /// Counts reconnections (not the first connection): a consumer that must resume from
    /// its own checkpoint after a broken connection watches it.
    pub reconnects: watch::Receiver<u64>,
}

/// Connects to the servers of `url` as `name` (shown in the server's connection list), logging
/// disconnections and reconnections. Fails when no server answers: a service does not start
/// without its broker.
pub async fn connect(name: &str, url: &NatsUrl) -> anyhow::Result<Connection> {
    let (reconnected, reconnects) = watch::channel(0u64);
    let client = async_nats::ConnectOptions::new()
        .name(name)
        .event_callback(connection_events(reconnected))
        .connect(crate::config::nats_servers(url.expose()))
        .await
        .with_context(|| format!("connecting to NATS at {url}"))?;
    Ok(Connection { client, reconnects })
}

/// Logs the client's connection events and counts reconnections into `reconnected`.
fn connection_events(
    reconnected: watch::Sender<u64>,
) -> impl Fn(async_nats::Event) -> std::future::Ready<()> + Send + Sync + 'static {
    let disconnected = AtomicBool::new(false);
    move |event| {
        match event {
            async_nats::Event::Connected => {
                if disconnected.swap(false, Ordering::Relaxed) {
                    tracing::info!("reconnected to NATS");
                    reconnected.send_modify(|count| *count += 1);
                }
            }
            async_nats::Event::Disconnected => {
                disconnected.store(true, Ordering::Relaxed);
                tracing::warn!("disconnected from NATS; reconnecting");
            }
            other => tracing::info!(event = %other, "NATS connection event"),
        }
        std::future::ready(())
    }
}

/// Opens a KV bucket, creating it when it does not exist yet. Another service may create it
/// at the same moment, so a failed create is followed by one more open.
pub async fn open_bucket(js: &jetstream::Context, config: kv::Config) -> anyhow::Result<kv::Store> {
    if let Ok(bucket) = js.get_key_value(&config.bucket).await {
        return Ok(bucket);
    }
    let name = config.bucket.clone();
    match js.create_key_value(config).await {
        Ok(bucket) => Ok(bucket),
        Err(_) => js
            .get_key_value(&name)
            .await
            .with_context(|| format!("opening the bucket '{name}'")),
    }
}

/// The event stream as opened, with the subjects of its partitions.
#[derive(Debug, Clone)]
pub struct EventStream {
    /// The stream.
    pub stream: Stream,
    /// Subjects with the stream's own number of partitions (from its metadata, which may
    /// differ from `EVENT_PARTITIONS` when the stream was made with another).
    pub subjects: crate::subjects::Subjects,
}

/// Gets or creates the event stream, upgrades a stream made before partitions, then checks its
/// configuration as the server reports it now, refusing to go on when it is not shaped as the
/// log requires.
pub async fn open_event_stream(
    js: &jetstream::Context,
    log: &EventLogConfig,
) -> anyhow::Result<EventStream> {
    let stream = js
        .get_or_create_stream(log.stream_config())
        .await
        .with_context(|| format!("getting or creating the event stream '{}'", log.stream))?;
    checked_event_stream(js, stream, log).await
}

/// Opens the event stream, which must exist already (tools that only read it), and checks it
/// as [`open_event_stream`] does.
pub async fn existing_event_stream(
    js: &jetstream::Context,
    log: &EventLogConfig,
) -> anyhow::Result<EventStream> {
    let stream = js
        .get_stream(&log.stream)
        .await
        .with_context(|| format!("opening the event stream '{}'", log.stream))?;
    checked_event_stream(js, stream, log).await
}

/// Upgrades a stream made before partitions ([`event_log::upgrade_to_partitions`]: a second
/// subject and the partition count, every message kept), then checks it.
async fn checked_event_stream(
    js: &jetstream::Context,
    mut stream: Stream,
    log: &EventLogConfig,
) -> anyhow::Result<EventStream> {
    let info = stream
        .info()
        .await
        .with_context(|| format!("reading the configuration of event stream '{}'", log.stream))?;
    if let Some(upgraded) = event_log::upgrade_to_partitions(log, &info.config) {
        tracing::info!(
            stream = %log.stream,
            partitions = log.partitions,
            "the event stream predates partitions: adding its partitioned subjects"
        );
        js.update_stream(upgraded).await.with_context(|| {
            format!("upgrading the event stream '{}' to partitions", log.stream)
        })?;
    }
    let partitions = check_event_stream(&mut stream, log).await?;
    if partitions != log.partitions {
        tracing::info!(
            stream = %log.stream,
            partitions,
            configured = log.partitions,
            "the event stream keeps the partitions it was made with; EVENT_PARTITIONS applies \
             only to a new stream"
        );
    }
    Ok(EventStream {
        stream,
        subjects: crate::subjects::Subjects::new(log.subject_prefix.clone(), partitions),
    })
}

/// Asks the server for the stream's configuration (never the copy cached when the handle was
/// made, which may predate an edit) and compares it with what the log needs; returns its
/// number of partitions.
pub async fn check_event_stream(stream: &mut Stream, log: &EventLogConfig) -> anyhow::Result<u16> {
    let info = stream
        .info()
        .await
        .with_context(|| format!("reading the configuration of event stream '{}'", log.stream))?;
    log.check(&info.config)?;
    Ok(event_log::partitions_of(&info.config).unwrap_or(log.partitions))
}

/// The last stream sequence each partition's reader has to reach to have read everything in
/// the log now (index = partition): the later of its own last message and the last legacy
/// message (every partition's reader reads the legacy form). 0 for a partition with nothing
/// to read. A reader is caught up when its checkpoints are at its head or past it; comparing
/// them with the stream's last sequence instead would wait forever on a partition whose
/// accounts wrote nothing lately.
pub async fn partition_heads(
    stream: &Stream,
    subjects: &crate::subjects::Subjects,
) -> anyhow::Result<Vec<u64>> {
    // The legacy filter is in every partition's list: asked once.
    let mut last_on: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut heads = Vec::with_capacity(usize::from(subjects.partitions()));
    for partition in 0..subjects.partitions() {
        let mut head = 0;
        for filter in subjects.partition_events(partition) {
            let last = match last_on.get(&filter) {
                Some(last) => *last,
                None => {
                    let last = last_sequence_of(stream, &filter).await?;
                    last_on.insert(filter, last);
                    last
                }
            };
            head = head.max(last);
        }
        heads.push(head);
    }
    Ok(heads)
}

/// The sequence of the last message on `filter` (wildcards allowed), 0 when there is none.
async fn last_sequence_of(stream: &Stream, filter: &str) -> anyhow::Result<u64> {
    use async_nats::jetstream::stream::LastRawMessageErrorKind;
    match stream.get_last_raw_message_by_subject(filter).await {
        Ok(message) => Ok(message.sequence),
        Err(error) if error.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(0),
        Err(error) => {
            Err(anyhow::Error::new(error).context(format!("reading the last message on {filter}")))
        }
    }
}
