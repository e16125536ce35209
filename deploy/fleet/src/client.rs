//! The plugin API client: one POST, retried until it is stored or clearly refused.
//!
//! Every record carries its client id, so resending the same body after a 429, a 503, a 5xx or a
//! lost connection can never store a record twice.

use serde_json::Value;
use std::time::Duration;

/// Longest `Retry-After` honoured; a longer one is shortened to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// How often and how patiently a write is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per request, the first included.
    pub max_attempts: u32,
    /// Wait after the first network error; doubled after each further one.
    pub first_backoff: Duration,
    /// Longest wait between network-error retries.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            first_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
        }
    }
}

/// What the service did with a write (the body of its 202).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteOutcome {
    /// Records stored.
    pub accepted: u64,
    /// Records recognised as already stored.
    pub duplicates: u64,
    /// Records refused, with the service's reasons.
    pub rejected: Vec<Value>,
    /// Attempts beyond the first.
    pub retries: u32,
}

/// Why a write did not go through.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The service refused the request; resending it cannot help.
    #[error("{status} {code}: {detail}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The problem's `code`.
        code: String,
        /// The problem's `detail` (or title).
        detail: String,
    },
    /// Every attempt failed with a retryable error.
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last error.
        last: String,
    },
    /// The client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Build(String),
}

/// Writes records to the plugin API with a plugin key.
#[derive(Debug, Clone)]
pub struct PluginClient {
    http: reqwest::Client,
    base_url: String,
    auth: String,
    policy: RetryPolicy,
}

enum Attempt {
    Done(WriteOutcome),
    Refused(PostError),
    Retry { wait: Duration, why: String },
}

impl PluginClient {
    /// A client for the service at `base_url`, authenticating with `plugin_key`.
    pub fn new(base_url: &str, plugin_key: &str) -> Result<Self, PostError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("warden-demo-fleet/", env!("CARGO_PKG_VERSION")))
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| PostError::Build(e.to_string()))?;
        Ok(PluginClient {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            auth: format!("Bearer {plugin_key}"),
            policy: RetryPolicy::default(),
        })
    }

    /// The same client with another retry policy.
    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// POSTs `body` (one record or an array) to `path`, retrying the identical body on 429 and
    /// 503 (after `Retry-After`), and on other 5xx and network errors (exponential backoff).
    pub async fn post(&self, path: &str, body: &Value) -> Result<WriteOutcome, PostError> {
        let url = format!("{}{path}", self.base_url);
        let RetryPolicy {
            max_attempts,
            first_backoff,
            max_backoff,
        } = self.policy;
        let mut backoff = first_backoff;
        let mut last = String::new();
        for attempt in 1..=max_attempts {
            let (wait, why) = match self.attempt(&url, body).await {
                Attempt::Done(mut outcome) => {
                    outcome.retries = attempt - 1;
                    return Ok(outcome);
                }
                Attempt::Refused(error) => return Err(error),
                Attempt::Retry { wait, why } => (wait, why),
            };
            // Network and server errors back off exponentially; Retry-After is taken as given.
            let wait = if wait.is_zero() {
                let this = backoff;
                backoff = (backoff * 2).min(max_backoff);
                this
            } else {
                wait
            };
            if attempt < max_attempts {
                tracing::warn!(path, attempt, wait_ms = wait.as_millis() as u64, %why, "write failed; retrying");
                tokio::time::sleep(wait).await;
            }
            last = why;
        }
        Err(PostError::GaveUp {
            attempts: max_attempts,
            last,
        })
    }

    async fn attempt(&self, url: &str, body: &Value) -> Attempt {
        let response = match self
            .http
            .post(url)
            .header(reqwest::header::AUTHORIZATION, &self.auth)
            .json(body)
            .send()
            .await
        {
            Ok(response) => response,
            Err(error) => {
                return Attempt::Retry {
                    wait: Duration::ZERO,
                    why: error_chain(&error),
                };
            }
        };
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let text = match response.text().await {
            Ok(text) => text,
            Err(error) => {
                return Attempt::Retry {
                    wait: Duration::ZERO,
                    why: error_chain(&error),
                };
            }
        };
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        match status.as_u16() {
            200..=299 => Attempt::Done(outcome(&json)),
            429 | 503 => Attempt::Retry {
                wait: retry_after.unwrap_or(Duration::from_secs(1)),
                why: format!("{status} {}", problem_code(&json)),
            },
            500..=599 => Attempt::Retry {
                wait: retry_after.unwrap_or(Duration::ZERO),
                why: format!("{status} {}", problem_code(&json)),
            },
            code => {
                let detail = json
                    .get("detail")
                    .or_else(|| json.get("title"))
                    .and_then(Value::as_str)
                    .map_or_else(|| text.chars().take(200).collect(), str::to_owned);
                let detail = match json.get("rejected") {
                    Some(rejected) => format!("{detail}; rejected: {rejected}"),
                    None => detail,
                };
                Attempt::Refused(PostError::Refused {
                    status: code,
                    code: problem_code(&json),
                    detail,
                })
            }
        }
    }
}

/// Reads a 2xx body: the batch answer, or a single custom event's answer (one accepted).
fn outcome(json: &Value) -> WriteOutcome {
    let count = |field: &str| json.get(field).and_then(Value::as_u64);
    match count("accepted") {
        Some(accepted) => WriteOutcome {
            accepted,
            duplicates: count("duplicates").unwrap_or(0),
            rejected: json
                .get("rejected")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            retries: 0,
        },
        None => WriteOutcome {
            accepted: 1,
            ..WriteOutcome::default()
        },
    }
}

fn problem_code(json: &Value) -> String {
    json.get("code")
        .and_then(Value::as_str)
        .unwrap_or("-")
        .to_owned()
}

/// `Retry-After` in whole seconds (at least 1, at most [`MAX_RETRY_AFTER`]).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds.max(1)).min(MAX_RETRY_AFTER))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
