//! Where notifications go, and where they may not: destination URLs ([`check_url`]) and the
//! SSRF policy ([`NetworkPolicy`]).
//!
//! A destination URL is chosen by an account's admin but fetched from inside the operator's
//! network, so by default it may not reach loopback, private, link-local or otherwise special
//! addresses. Literal IPs are checked here when the URL is accepted; host names are checked on
//! every address they resolve to, at every delivery (the notifier's resolver calls
//! [`NetworkPolicy::check_ip`]), so DNS cannot be used to slip past the check later.

use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr};
use url::{Host, Url};

mod network;

pub use network::{Cidr, ForbiddenAddress, NetworkPolicy};

/// The longest destination URL accepted, in bytes (`alert_destinations.url` holds 2048).
pub const MAX_URL_LEN: usize = 2048;

/// The host names Discord serves webhooks from.
pub const DISCORD_HOSTS: [&str; 4] = [
    "discord.com",
    "discordapp.com",
    "ptb.discord.com",
    "canary.discord.com",
];

/// What kind of endpoint a destination is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestinationKind {
    /// A generic HTTP endpoint, signed per the Standard Webhooks specification.
    Webhook,
    /// A Discord webhook: a readable embed, no signature.
    Discord,
}

impl DestinationKind {
    /// The kind as text (`webhook`, `discord`), as stored in `alert_destinations.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            DestinationKind::Webhook => "webhook",
            DestinationKind::Discord => "discord",
        }
    }

    /// The kind named `text`, if there is one.
    pub fn parse(text: &str) -> Option<DestinationKind> {
        match text {
            "webhook" => Some(DestinationKind::Webhook),
            "discord" => Some(DestinationKind::Discord),
            _ => None,
        }
    }
}

impl std::fmt::Display for DestinationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a destination URL was refused; [`code`](DestinationError::code) is the problem code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    /// Not a URL at all.
    #[error("url is not a valid absolute URL: {0}")]
    Invalid(String),
    /// Longer than [`MAX_URL_LEN`].
    #[error("url must be at most {MAX_URL_LEN} characters")]
    TooLong,
    /// Not http/https (https only for Discord).
    #[error("url must use {expected} (got '{got}')")]
    Scheme {
        /// What is accepted.
        expected: &'static str,
        /// What was given.
        got: String,
    },
    /// Carries a user name or password.
    #[error("url must not carry credentials (user:password@); use the signing secret instead")]
    Credentials,
    /// A Discord destination that is not a Discord webhook URL.
    #[error(
        "a discord destination must be a Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>)"
    )]
    NotDiscord,
    /// A host the policy refuses.
    #[error("url host is refused: {0}")]
    Forbidden(#[from] ForbiddenAddress),
}

impl DestinationError {
    /// The stable problem code.
    pub fn code(&self) -> &'static str {
        match self {
            DestinationError::Invalid(_) => "invalid_url",
            DestinationError::TooLong => "url_too_long",
            DestinationError::Scheme { .. } => "unsupported_scheme",
            DestinationError::Credentials => "url_credentials",
            DestinationError::NotDiscord => "not_discord_webhook",
            DestinationError::Forbidden(_) => "forbidden_address",
        }
    }
}

/// Checks a destination URL for `kind` under `policy` and returns it parsed.
///
/// `localhost` and `*.localhost` count as loopback (resolvers answer them locally); literal IPs
/// in any spelling the URL standard accepts (`0x7f.1`, `[::ffff:127.0.0.1]`) are checked in
/// their parsed form. Other host names are checked at delivery, on every resolved address.
pub fn check_url(
    kind: DestinationKind,
    raw: &str,
    policy: &NetworkPolicy,
) -> Result<Url, DestinationError> {
    if raw.len() > MAX_URL_LEN {
        return Err(DestinationError::TooLong);
    }
    let url = Url::parse(raw.trim()).map_err(|e| DestinationError::Invalid(e.to_string()))?;
    let expected = match kind {
        DestinationKind::Webhook => "http or https",
        DestinationKind::Discord => "https",
    };
    let scheme_ok = match kind {
        DestinationKind::Webhook => matches!(url.scheme(), "http" | "https"),
        DestinationKind::Discord => url.scheme() == "https",
    };
    if !scheme_ok {
        return Err(DestinationError::Scheme {
            expected,
            got: url.scheme().to_owned(),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DestinationError::Credentials);
    }
    match url.host() {
        None => return Err(DestinationError::Invalid("the URL has no host".into())),
        Some(Host::Ipv4(v4)) => policy.check_ip(IpAddr::V4(v4))?,
        Some(Host::Ipv6(v6)) => policy.check_ip(IpAddr::V6(v6))?,
        Some(Host::Domain(domain)) => {
            let domain = domain.trim_end_matches('.').to_ascii_lowercase();
            if (domain == "localhost" || domain.ends_with(".localhost"))
                && !policy.allows_loopback()
            {
                return Err(ForbiddenAddress {
                    ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
                    range: "a loopback address (localhost)",
                    allowable: true,
                }
                .into());
            }
        }
    }
    if kind == DestinationKind::Discord && !is_discord_webhook(&url) {
        return Err(DestinationError::NotDiscord);
    }
    Ok(url)
}

/// Whether `url` is `https://<discord host>/api/webhooks/<id>/<token>` (optionally
/// `/api/v10/webhooks/...`), on the default port.
fn is_discord_webhook(url: &Url) -> bool {
    let host_ok = matches!(url.host(), Some(Host::Domain(d)) if DISCORD_HOSTS.contains(&d));
    let mut segments = url.path_segments().into_iter().flatten();
    let mut path_ok = segments.next() == Some("api");
    let mut next = segments.next();
    if next.is_some_and(|s| {
        s.len() > 1 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit())
    }) {
        next = segments.next();
    }
    path_ok &= next == Some("webhooks");
    let id = segments.next().unwrap_or_default();
    let token = segments.next().unwrap_or_default();
    path_ok &= !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && !token.is_empty();
    path_ok &= segments.all(str::is_empty);
    host_ok && path_ok && url.port().is_none()
}

/// The URL as shown after creation: a Discord URL's token is a credential (anyone holding it
/// can post), so only its last 4 characters are shown
/// (`https://discord.com/api/webhooks/123/…abcd`); a webhook URL as it is.
pub fn display_url(kind: DestinationKind, url: &str) -> String {
    if kind != DestinationKind::Discord {
        return url.to_owned();
    }
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    match without_query.trim_end_matches('/').rsplit_once('/') {
        Some((head, token)) => {
            let tail: String = {
                let chars: Vec<char> = token.chars().collect();
                chars[chars.len().saturating_sub(4)..].iter().collect()
            };
            format!("{head}/…{tail}")
        }
        None => url.to_owned(),
    }
}

/// A destination's default name: the URL's host (or the URL, if it has none).
pub fn default_name(url: &Url) -> String {
    url.host_str()
        .unwrap_or(url.as_str())
        .chars()
        .take(100)
        .collect()
}

#[cfg(test)]
#[path = "destinations_tests.rs"]
mod tests;
