//! A webhook receiver for the delivery tests: records every request it gets (before answering,
//! so a request it hangs on is seen too) and answers per path as the test scripted it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    /// 200 OK.
    Ok,
    /// This status, nothing else.
    Status(u16),
    /// 429 with `Retry-After` in seconds.
    RateLimited(u64),
    /// Never answers (for an hour).
    Hang,
}

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: DateTime<Utc>,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Script {
    first: VecDeque<Answer>,
    then: Option<Answer>,
}

#[derive(Default)]
struct Shared {
    received: Mutex<HashMap<String, Vec<Received>>>,
    scripts: Mutex<HashMap<String, Script>>,
}

/// The running receiver; stops when dropped.
pub(crate) struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Receiver {
    /// Listens on a free loopback port.
    pub(crate) async fn start() -> anyhow::Result<Receiver> {
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .fallback(receive)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Receiver { addr, shared, task })
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Requests to `path` get the `first` answers in turn, then `then` for ever.
    pub(crate) fn script(&self, path: &str, first: Vec<Answer>, then: Answer) {
        let mut scripts = self.shared.scripts.lock().expect("scripts lock");
        scripts.insert(
            path.to_owned(),
            Script {
                first: first.into(),
                then: Some(then),
            },
        );
    }

    /// Everything received at `path` so far, oldest first.
    pub(crate) fn received(&self, path: &str) -> Vec<Received> {
        let received = self.shared.received.lock().expect("received lock");
        received.get(path).cloned().unwrap_or_default()
    }

    /// The number of requests received at any path.
    pub(crate) fn total(&self) -> usize {
        let received = self.shared.received.lock().expect("received lock");
        received.values().map(Vec::len).sum()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let answer = {
        let mut scripts = shared.scripts.lock().expect("scripts lock");
        let script = scripts.entry(path.clone()).or_default();
        script
            .first
            .pop_front()
            .or(script.then)
            .unwrap_or(Answer::Ok)
    };
    shared
        .received
        .lock()
        .expect("received lock")
        .entry(path)
        .or_default()
        .push(Received {
            headers,
            body,
            at: Utc::now(),
        });
    match answer {
        Answer::Ok => StatusCode::OK.into_response(),
        Answer::Status(code) => StatusCode::from_u16(code)
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            .into_response(),
        Answer::RateLimited(seconds) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", seconds.to_string())],
        )
            .into_response(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::OK.into_response()
        }
    }
}
