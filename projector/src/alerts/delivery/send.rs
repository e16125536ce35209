//! One attempt over HTTP: build the request a destination expects (a Standard Webhooks signed
//! message, or a Discord embed), send it with the outbound client, and say what came of it.
//!
//! Nothing here logs or returns the destination's URL: a Discord URL holds its token.

use super::claim::{AttemptRecord, Claimed};
use super::config::DeliveryConfig;
use super::health::Health;
use super::resolver::PolicyResolver;
use super::schedule;
use chrono::Utc;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use shared::alerts::{
    DestinationKind, NetworkPolicy, SealingKey, check_url, discord, notification, signing,
};
use std::error::Error as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `user-agent` of every request.
const USER_AGENT: &str = "Warden-Webhooks/1";
/// How much of an answer's body is read (to reuse the connection, and for Discord's
/// `retry_after`); the rest is dropped with the connection.
const BODY_LIMIT: usize = 64 * 1024;
/// The longest error text kept in the delivery log.
const ERROR_LIMIT: usize = 500;

/// What an attempt came to.
#[derive(Debug)]
pub(crate) struct Sent {
    pub(crate) record: AttemptRecord,
    pub(crate) health: Health,
    /// The receiver's own earliest time for the next attempt (429 `Retry-After`).
    pub(crate) retry_after: Option<Duration>,
}

/// Sends deliveries: the outbound HTTP client and what it needs to sign.
pub(crate) struct Sender {
    client: reqwest::Client,
    policy: Arc<NetworkPolicy>,
    sealing_key: SealingKey,
    connect_timeout: Duration,
    timeout: Duration,
}

impl Sender {
    /// The outbound client: rustls, no redirects, no proxy from the environment (a proxy would
    /// resolve names itself, past the policy), connect and whole-request timeouts, and a
    /// resolver that drops addresses the policy refuses.
    pub(crate) fn new(
        config: &DeliveryConfig,
        policy: NetworkPolicy,
        sealing_key: SealingKey,
    ) -> anyhow::Result<Sender> {
        let policy = Arc::new(policy);
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(PolicyResolver::new(Arc::clone(&policy))))
            .pool_max_idle_per_host(config.workers)
            .build()?;
        Ok(Sender {
            client,
            policy,
            sealing_key,
            connect_timeout: config.connect_timeout,
            timeout: config.timeout,
        })
    }

    /// Makes one attempt at `claimed`; never fails: every problem is an outcome to record.
    pub(crate) async fn attempt(&self, claimed: &Claimed) -> Sent {
        let attempted_at = Utc::now();
        let started = Instant::now();
        let (status_code, health, retry_after, error) = match self.prepare(claimed) {
            Err(error) => (None, Health::Failing, None, Some(error)),
            Ok(request) => self.send(request, claimed).await,
        };
        Sent {
            record: AttemptRecord {
                attempted_at,
                duration: started.elapsed(),
                status_code,
                error: error.map(|e| truncate(e, ERROR_LIMIT)),
            },
            health,
            retry_after,
        }
    }

    /// The request for `claimed`, or why none can be made (the URL is refused by the policy
    /// now, the secret cannot be opened).
    fn prepare(&self, claimed: &Claimed) -> Result<reqwest::RequestBuilder, String> {
        let kind = DestinationKind::parse(&claimed.kind)
            .ok_or_else(|| format!("unknown destination kind {:?}", claimed.kind))?;
        // Checked again at every attempt: the policy may have changed since the URL was
        // saved, and a literal IP address never reaches the resolver.
        let url = check_url(kind, &claimed.url, &self.policy)
            .map_err(|e| format!("the URL is refused: {e}"))?;
        let request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json");
        match kind {
            DestinationKind::Discord => {
                let body = discord::render(&claimed.event_type, &claimed.payload);
                let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
                Ok(request.body(body))
            }
            DestinationKind::Webhook => {
                let secrets = self.secrets(claimed)?;
                let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
                let body =
                    notification::body(&claimed.event_type, claimed.occurred_at, &claimed.payload);
                let message_id = signing::message_id(claimed.id);
                // The time of this attempt, not of the first: receivers refuse stale
                // timestamps (replay protection), and a retry may come hours later.
                let timestamp = Utc::now().timestamp();
                let signature = signing::signature_header(&secrets, &message_id, timestamp, &body)
                    .map_err(|e| format!("signing failed: {e}"))?;
                Ok(request
                    .header("webhook-id", message_id)
                    .header("webhook-timestamp", timestamp.to_string())
                    .header("webhook-signature", signature)
                    .body(body))
            }
        }
    }

    /// The destination's signing secrets: the current one, then the previous one while it has
    /// not expired (so a receiver rotating its secret accepts either).
    fn secrets(&self, claimed: &Claimed) -> Result<Vec<String>, String> {
        let aad = claimed.destination_id.as_bytes();
        let open = |sealed: &[u8]| {
            self.sealing_key.open(aad, sealed).map_err(|_| {
                "the signing secret cannot be opened (was WEBHOOK_SECRETS_KEY changed?)".to_owned()
            })
        };
        let current = claimed
            .secret_sealed
            .as_deref()
            .ok_or_else(|| "the webhook has no signing secret".to_owned())?;
        let mut secrets = vec![open(current)?];
        if let (Some(previous), Some(expires_at)) = (
            claimed.previous_secret_sealed.as_deref(),
            claimed.previous_secret_expires_at,
        ) && expires_at > Utc::now()
        {
            secrets.push(open(previous)?);
        }
        Ok(secrets)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        claimed: &Claimed,
    ) -> (Option<u16>, Health, Option<Duration>, Option<String>) {
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(e) => return (None, Health::Failing, None, Some(self.describe(e))),
        };
        let status = response.status();
        let body = read_some(&mut response).await;
        let code = Some(status.as_u16());
        if status.is_success() {
            return (code, Health::Working, None, None);
        }
        match status {
            StatusCode::GONE => (
                code,
                Health::Gone,
                None,
                Some("the endpoint answered 410 Gone: destination disabled".to_owned()),
            ),
            StatusCode::TOO_MANY_REQUESTS => {
                let header = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| schedule::parse_retry_after(v, Utc::now()));
                let retry_after = header.or_else(|| {
                    (claimed.kind == "discord")
                        .then(|| schedule::parse_discord_retry_after(&body))
                        .flatten()
                });
                (
                    code,
                    Health::Failing,
                    retry_after,
                    Some("rate limited (429)".to_owned()),
                )
            }
            s if s.is_redirection() => (
                code,
                Health::Failing,
                None,
                Some("redirects are not followed".to_owned()),
            ),
            _ => (code, Health::Failing, None, None),
        }
    }

    /// A transport error for people, without the URL (`without_url`) and with its causes.
    fn describe(&self, error: reqwest::Error) -> String {
        let error = error.without_url();
        if error.is_timeout() {
            return if error.is_connect() {
                format!(
                    "timed out connecting (after {} ms)",
                    self.connect_timeout.as_millis()
                )
            } else {
                format!(
                    "timed out (no full answer within {} ms)",
                    self.timeout.as_millis()
                )
            };
        }
        let mut text = if error.is_connect() {
            "could not connect".to_owned()
        } else {
            "request failed".to_owned()
        };
        let mut source = error.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

/// Reads up to [`BODY_LIMIT`] of the answer's body; errors (a body cut short) are ignored, the
/// status has already spoken.
async fn read_some(response: &mut reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > BODY_LIMIT {
            break;
        }
        body.extend_from_slice(&chunk);
    }
    body
}

/// `text` cut to at most `limit` bytes, on a character boundary.
fn truncate(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
#[path = "send_tests.rs"]
mod tests;
