//! What a destination's URL may be: checked with `shared::alerts::check_url` under the
//! deployment's network policy (as problem details), shown with a Discord token cut, and
//! described in the API reference by patterns no stricter than the check (a URL that matches
//! them is accepted unless the operator's policy refuses its literal address).

use super::destinations::Kind;
use crate::error::ApiError;
use crate::state::AppState;
use axum::http::StatusCode;
use serde_json::{Value, json};
use shared::alerts::destinations::{DestinationError, MAX_URL_LEN, check_url, display_url};
use shared::problem::Problem;
use shared::validation::FieldError;

/// A webhook URL the API reference promises to accept: http(s), a DNS name ending in letters
/// (so never a literal address, and never `*.localhost`), and a path of URL characters that
/// are kept as they are (`'` is not: a query's `'` grows to `%27`).
pub const WEBHOOK_URL_PATTERN: &str = "^https?://(?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\\.)+\
    (?![Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt](?:[/?#]|$))[A-Za-z]{2,63}\
    (?:[/?#][A-Za-z0-9._~!$&()*+,;=:@%/?#-]*)?$";

/// [`WEBHOOK_URL_PATTERN`]'s `localhost` exclusion, for a regex engine without look-ahead.
#[cfg(test)]
const LOCALHOST_EXCLUSION: &str = "(?![Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt](?:[/?#]|$))";

/// A Discord channel webhook URL (`shared::alerts::destinations::DISCORD_HOSTS`).
pub const DISCORD_URL_PATTERN: &str = "^https://(?:discord\\.com|discordapp\\.com|ptb\\.discord\\.com|\
    canary\\.discord\\.com)/api/(?:v[0-9]+/)?webhooks/[0-9]+/[A-Za-z0-9_-]+$";

/// The URL as shown: a Discord webhook's token is a credential, so only its last 4 characters
/// are kept (`https://discord.com/api/webhooks/123/…abcd`).
pub fn shown_url(kind: Kind, url: &str) -> String {
    display_url(kind.shared(), url)
}

/// Checks a URL against the kind's rules and the network policy: 422 `forbidden_address` for
/// an address the policy refuses, 422 `validation_failed` for anything else. Answers the form
/// to store: the parsed (normalised) URL, or, when normalising made it longer than the column
/// allows (`http://a.bc?q` gains a `/`), the URL as given, which the check accepted as it is.
pub fn checked_url(state: &AppState, kind: Kind, url: &str) -> Result<String, ApiError> {
    match check_url(kind.shared(), url, &state.alerts.networks) {
        Ok(parsed) if parsed.as_str().chars().count() <= MAX_URL_LEN => Ok(parsed.to_string()),
        Ok(_) => Ok(url.trim().to_owned()),
        Err(error @ DestinationError::Forbidden(_)) => {
            let field_error = FieldError {
                field: "url".into(),
                code: error.code().into(),
                message: error.to_string(),
            };
            let problem = Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "forbidden_address",
                "Address not allowed",
                format!("{error}; the operator can allow it with WEBHOOK_ALLOW_NETWORKS"),
            );
            Err(ApiError::Refused(Box::new(
                problem.with_errors(vec![field_error]),
            )))
        }
        Err(error) => Err(ApiError::invalid_field(
            "url",
            error.code(),
            error.to_string(),
        )),
    }
}

/// A new URL for an existing destination: as [`checked_url`], except that a good webhook URL
/// given to a Discord destination is 409 `kind_mismatch` (the kind cannot change: add a new
/// destination instead).
pub fn new_url(state: &AppState, kind: Kind, url: &str) -> Result<String, ApiError> {
    match checked_url(state, kind, url) {
        Ok(url) => Ok(url),
        Err(error) if kind == Kind::Discord && checked_url(state, Kind::Webhook, url).is_ok() => {
            drop(error);
            Err(ApiError::Refused(Box::new(Problem::new(
                StatusCode::CONFLICT,
                "kind_mismatch",
                "Not a Discord webhook URL",
                "this destination is a Discord webhook and its URL must be one \
                 (https://discord.com/api/webhooks/<id>/<token>); add a webhook destination \
                 for another endpoint",
            ))))
        }
        Err(error) => Err(error),
    }
}

/// The URL of a new destination per kind (`NewDestination`, one branch per kind) and of a
/// change (`DestinationUpdate.url`, either pattern).
pub fn refine_document(doc: &mut Value) {
    let url = |pattern: &str| json!({"type": "string", "minLength": 1, "maxLength": MAX_URL_LEN, "pattern": pattern});
    let name = json!({"type": ["string", "null"], "minLength": 1, "maxLength": 100,
        "pattern": "^[^\\x00]*$", "description": "A label for people (default: the URL's host)"});
    let schemas = &mut doc["components"]["schemas"];
    let mut webhook = json!({
        "type": "object", "title": "webhook", "additionalProperties": false,
        "required": ["kind", "url"],
        "properties": {"kind": {"type": "string", "const": "webhook"}, "url": url(WEBHOOK_URL_PATTERN), "name": name},
    });
    webhook["properties"]["url"]["description"] = json!(
        "An http(s) endpoint. Loopback, private and link-local addresses are refused \
         (422 `forbidden_address`) unless the operator allows them (`WEBHOOK_ALLOW_NETWORKS`); \
         this pattern names what is always accepted"
    );
    let mut discord = json!({
        "type": "object", "title": "discord", "additionalProperties": false,
        "required": ["kind", "url"],
        "properties": {"kind": {"type": "string", "const": "discord"}, "url": url(DISCORD_URL_PATTERN), "name": name},
    });
    discord["properties"]["url"]["description"] = json!("A Discord channel's webhook URL");
    schemas["NewDestination"] = json!({
        "description": "A destination: its kind and URL, and optionally a name",
        "oneOf": [webhook, discord],
    });
    if let Some(update) = schemas.get_mut("DestinationUpdate") {
        update["properties"]["url"] = json!({
            "type": ["string", "null"], "minLength": 1, "maxLength": MAX_URL_LEN,
            "pattern": format!("(?:{WEBHOOK_URL_PATTERN})|(?:{DISCORD_URL_PATTERN})"),
            "description": "A new URL of the destination's kind (a Discord destination takes a \
                Discord URL only: 409 `kind_mismatch`)",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::alerts::destinations::{DestinationKind, NetworkPolicy};

    /// Every URL the patterns admit passes the check under the strictest policy.
    #[test]
    fn the_patterns_promise_nothing_the_check_refuses() -> Result<(), regex::Error> {
        let policy = NetworkPolicy::default();
        let webhook = regex::Regex::new(&WEBHOOK_URL_PATTERN.replace(LOCALHOST_EXCLUSION, ""))?;
        let discord = regex::Regex::new(DISCORD_URL_PATTERN)?;
        for url in [
            "https://hooks.example.com/warden",
            "http://a.bc",
            "https://A-1.example.co.uk/x?y=1&z=%41#frag",
            "https://x.y.zz/~a/b;c=d,e@f:g!$()*+?q=(1)",
        ] {
            assert!(webhook.is_match(url), "{url}");
            assert!(
                check_url(DestinationKind::Webhook, url, &policy).is_ok(),
                "{url}"
            );
        }
        for url in [
            "https://discord.com/api/webhooks/123/abc-DEF_9",
            "https://canary.discord.com/api/v10/webhooks/1/x",
        ] {
            assert!(discord.is_match(url), "{url}");
            assert!(
                check_url(DestinationKind::Discord, url, &policy).is_ok(),
                "{url}"
            );
        }
        for refused in [
            "http://127.0.0.1/",
            "http://localhost/",
            "http://10.0.0.1/",
            "ftp://a.bc/",
            "http://a.bc:99999/",
            "http://a.bc/?q='",
        ] {
            assert!(!webhook.is_match(refused), "{refused}");
        }
        // What only the look-ahead excludes: the check refuses it.
        assert!(check_url(DestinationKind::Webhook, "http://a.LocalHost/x", &policy).is_err());
        assert!(WEBHOOK_URL_PATTERN.contains(LOCALHOST_EXCLUSION));
        Ok(())
    }
}
