//! One HTTP call with retries, shared by the plugin and dashboard clients.
//!
//! The body is serialized once, before the first attempt, so every retry sends the same bytes
//! (and so the same record ids): a write that got through before its answer was lost is then
//! recognised as a duplicate and stored once.

use crate::error::{Problem, SdkError};
use reqwest::header::{self, HeaderMap};
use reqwest::{Method, StatusCode, Url};
use std::time::Duration;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How often and how patiently a call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per call, the first included.
    pub max_attempts: u32,
    /// Wait after the first failure without a `Retry-After`; doubled after each further one.
    pub first_backoff: Duration,
    /// Longest backoff between attempts.
    pub max_backoff: Duration,
    /// Longest `Retry-After` honoured; a longer one is shortened to this.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            first_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// A successful (2xx) answer.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The body, read whole.
    pub(crate) body: Vec<u8>,
    /// Attempts beyond the first.
    pub(crate) retries: u32,
}

enum Attempt {
    Done(Answer),
    Refused(SdkError),
    Retry { wait: Option<Duration>, why: String },
}

/// An authenticated HTTP client for one base URL.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    base: Url,
    auth: String,
    pub(crate) policy: RetryPolicy,
}

impl Transport {
    /// A transport for `base_url` that sends `Authorization: Bearer <key>`.
    pub(crate) fn new(base_url: &str, key: &str, agent: &str) -> Result<Self, SdkError> {
        let http = reqwest::Client::builder()
            .user_agent(agent)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| SdkError::Config(e.to_string()))?;
        let base = Url::parse(base_url.trim_end_matches('/'))
            .map_err(|e| SdkError::Config(format!("base URL '{base_url}': {e}")))?;
        Ok(Transport {
            http,
            base,
            auth: format!("Bearer {key}"),
            policy: RetryPolicy::default(),
        })
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub(crate) fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let prefix = url.path().trim_end_matches('/').to_owned();
        url.set_path(&format!("{prefix}{path}"));
        url
    }

    /// Sends the request, retrying 429 and 503 after `Retry-After`, and other 5xx and network
    /// errors with exponential backoff, up to the policy's attempts.
    pub(crate) async fn call(
        &self,
        method: Method,
        url: Url,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, SdkError> {
        let policy = self.policy;
        let mut backoff = policy.first_backoff;
        let mut last = String::new();
        let attempts = policy.max_attempts.max(1);
        for attempt in 1..=attempts {
            match self
                .attempt(method.clone(), url.clone(), body.clone())
                .await
            {
                Attempt::Done(mut answer) => {
                    answer.retries = attempt - 1;
                    return Ok(answer);
                }
                Attempt::Refused(error) => return Err(error),
                Attempt::Retry { wait, why } => {
                    let wait = match wait {
                        Some(wait) => wait.min(policy.max_retry_after),
                        None => {
                            let this = backoff;
                            backoff = (backoff * 2).min(policy.max_backoff);
                            this
                        }
                    };
                    if attempt < attempts {
                        tracing::warn!(%url, attempt, wait_ms = wait.as_millis() as u64, %why, "call failed; retrying");
                        tokio::time::sleep(wait).await;
                    }
                    last = why;
                }
            }
        }
        Err(SdkError::GaveUp { attempts, last })
    }

    async fn attempt(&self, method: Method, url: Url, body: Option<Vec<u8>>) -> Attempt {
        let mut request = self
            .http
            .request(method, url)
            .header(header::AUTHORIZATION, &self.auth);
        if let Some(body) = body {
            request = request
                .header(header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => return retry_now(&error),
        };
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = match response.bytes().await {
            Ok(body) => body.to_vec(),
            Err(error) => return retry_now(&error),
        };
        match status.as_u16() {
            200..=299 => Attempt::Done(Answer { body, retries: 0 }),
            429 | 503 => Attempt::Retry {
                wait: Some(retry_after.unwrap_or(Duration::from_secs(1))),
                why: format!("{status} {}", problem(status, &body).code),
            },
            500..=599 => Attempt::Retry {
                wait: retry_after,
                why: format!("{status} {}", problem(status, &body).code),
            },
            code => Attempt::Refused(SdkError::Api {
                status: code,
                problem: Box::new(problem(status, &body)),
            }),
        }
    }
}

fn retry_now(error: &reqwest::Error) -> Attempt {
    Attempt::Retry {
        wait: None,
        why: error_chain(error),
    }
}

/// The problem-details body, or one made from the status when the body is not one.
fn problem(status: StatusCode, body: &[u8]) -> Problem {
    serde_json::from_slice(body).unwrap_or_else(|_| Problem {
        status: status.as_u16(),
        title: status.canonical_reason().unwrap_or("error").to_owned(),
        code: "-".to_owned(),
        detail: String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
        ..Problem::default()
    })
}

/// `Retry-After` in whole seconds, at least 1 (HTTP dates are not used by the service).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds.max(1)))
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
