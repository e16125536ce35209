//! A minimal Server-Sent Events reader for tests.

use futures::StreamExt;
use std::time::Duration;

/// One SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `id:` field.
    pub id: Option<String>,
    /// `event:` field (`message` when absent).
    pub event: String,
    /// `data:` lines joined by newlines.
    pub data: String,
}

/// An open event stream.
pub struct SseStream {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl SseStream {
    /// Opens `url` with a bearer key and optional `Last-Event-ID`; expects 200.
    pub async fn open(
        http: &reqwest::Client,
        url: &str,
        key: &str,
        last_event_id: Option<&str>,
    ) -> anyhow::Result<SseStream> {
        let mut request = http
            .get(url)
            .bearer_auth(key)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await?;
        anyhow::ensure!(
            response.status() == 200,
            "stream answered {}",
            response.status()
        );
        Ok(SseStream {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        })
    }

    /// Reads an answer already received (a stream opened with a session cookie, say);
    /// expects 200.
    pub fn from_response(response: reqwest::Response) -> anyhow::Result<SseStream> {
        anyhow::ensure!(
            response.status() == 200,
            "stream answered {}",
            response.status()
        );
        Ok(SseStream {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        })
    }

    /// The next event (comments skipped), or an error after `timeout`.
    pub async fn next(&mut self, timeout: Duration) -> anyhow::Result<SseEvent> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    return Ok(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .map_err(|_| anyhow::anyhow!("no event within {timeout:?}"))?
                .ok_or_else(|| anyhow::anyhow!("stream ended"))??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

fn parse(block: &str) -> Option<SseEvent> {
    let (mut id, mut event, mut data) = (None, "message".to_owned(), Vec::new());
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("id:") {
            id = Some(value.trim_start().to_owned());
        } else if let Some(value) = line.strip_prefix("event:") {
            event = value.trim_start().to_owned();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
        }
    }
    (!data.is_empty()).then(|| SseEvent {
        id,
        event,
        data: data.join("\n"),
    })
}
