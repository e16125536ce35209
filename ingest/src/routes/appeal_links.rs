//! Appeal links for the kick screen: `<dashboard>/appeal/<token>`, signed with the account's
//! link key ([`shared::appeal_link`]). The action feed adds one to each ban it serves, and
//! `POST /api/plugin/appeal-links` signs fresh ones for bans whose links near expiry. Nothing
//! is stored: a link is made when it is served, and the appeal form checks it.

use crate::auth::{PluginCaller, PluginRoutes};
use crate::body::read_json_body;
use crate::error::IngestError;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::appeal_link::{APPEAL_PATH, AppealClaims};
use shared::privacy::LinkKey;
use shared::problem::Problem;
use shared::serve::BodyReadTimeout;
use shared::validation::FieldError;
use utoipa::ToSchema;
use uuid::Uuid;

/// The path of the refresh.
pub(super) const PATH: &str = "/api/plugin/appeal-links";
/// The most punishments in one request.
pub(super) const MAX_IDS: usize = 100;
/// Seconds a client should wait when the link key cannot be read.
const RETRY_AFTER_SECS: u64 = 2;

pub(super) fn router() -> PluginRoutes {
    Router::new().route(PATH, post(refresh))
}

/// The bans to sign fresh links for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AppealLinksRequest {
    /// The punishments' ids (the `id` of their `issue` action on the feed), 1..=100.
    #[schema(min_items = 1, max_items = 100)]
    pub(super) punishment_ids: Vec<Uuid>,
}

/// Fresh links, one per punishment asked about.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct AppealLinks {
    /// In the order asked (a repeated id once); empty when the dashboard's address is unknown
    /// (no `DASHBOARD_URL` and a `Host` that is not a plain host and port).
    pub(super) links: Vec<PunishmentLink>,
}

/// One punishment's link.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct PunishmentLink {
    /// The punishment.
    pub(super) punishment_id: Uuid,
    /// The appeal form, `<dashboard>/appeal/<token>`.
    pub(super) url: String,
    /// When the link stops working (RFC 3339, whole seconds).
    pub(super) expires_at: DateTime<Utc>,
}

/// The `appeal` object of a ban on the feed.
#[derive(Debug, Serialize)]
struct FeedLink<'a> {
    url: &'a str,
    expires_at: String,
}

/// Where links point: `DASHBOARD_URL`, else the scheme and host the request came to.
fn base(state: &AppState, headers: &HeaderMap) -> Option<String> {
    match &state.dashboard_url {
        Some(url) => Some(url.to_string()),
        None => shared::base_url::from_request(headers),
    }
}

/// The link to appeal `punishment_id`, signed at `now`.
fn sign(
    key: &LinkKey,
    base: &str,
    account: Uuid,
    punishment_id: Uuid,
    now: DateTime<Utc>,
) -> (String, DateTime<Utc>) {
    let claims = AppealClaims::new(account, punishment_id, now);
    let token = claims.sign(key);
    (format!("{base}{APPEAL_PATH}{token}"), claims.expires_at)
}

/// Adds an `appeal` object to each ban `issue` among the feed's `actions`. A link that cannot
/// be made (no known address, the key unreadable) is left out: enforcement does not wait on
/// it, and the plugin asks again through [`PATH`].
pub(super) async fn add_to_feed(
    state: &AppState,
    headers: &HeaderMap,
    account: Uuid,
    actions: &mut [Value],
) {
    let is_ban = |a: &Value| a["type"] == "issue" && a["punishment"]["type"] == "ban";
    if !actions.iter().any(is_ban) {
        return;
    }
    let Some(base) = base(state, headers) else {
        return;
    };
    let key = match state.keyring.link_key(account).await {
        Ok(key) => key,
        Err(error) => {
            tracing::warn!(%error, "the feed's bans go without appeal links: no link key");
            return;
        }
    };
    let now = Utc::now();
    for action in actions.iter_mut().filter(|a| is_ban(a)) {
        let Some(id) = action["id"]
            .as_str()
            .and_then(|id| Uuid::parse_str(id).ok())
        else {
            continue;
        };
        let (url, expires_at) = sign(&key, &base, account, id, now);
        let link = FeedLink {
            url: &url,
            expires_at: expires_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        };
        if let (Value::Object(object), Ok(link)) = (action, serde_json::to_value(link)) {
            object.insert("appeal".into(), link);
        }
    }
}

/// Signs a fresh link for each punishment asked about.
async fn refresh(
    State(state): State<AppState>,
    PluginCaller(caller): PluginCaller,
    BodyReadTimeout(read_timeout): BodyReadTimeout,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<AppealLinks>, IngestError> {
    let bytes = read_json_body(&headers, body, read_timeout).await?;
    let request = decode(&bytes)?;
    let mut ids = request.punishment_ids;
    if ids.is_empty() || ids.len() > MAX_IDS {
        let message = format!("give 1 to {MAX_IDS} punishment ids");
        return Err(IngestError::Problem(Box::new(Problem::validation(
            format!("punishment_ids: {message}"),
            vec![FieldError {
                field: "punishment_ids".into(),
                code: "out_of_range".into(),
                message,
            }],
        ))));
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
    let Some(base) = base(&state, &headers) else {
        return Ok(Json(AppealLinks { links: Vec::new() }));
    };
    let key = state
        .keyring
        .link_key(caller.account_id)
        .await
        .map_err(|error| {
            tracing::warn!(%error, "appeal links refused: no link key");
            IngestError::Problem(Box::new(Problem::unavailable(
                "appeal links cannot be signed right now; retry after the delay",
                RETRY_AFTER_SECS,
            )))
        })?;
    let now = Utc::now();
    let links = ids
        .into_iter()
        .map(|punishment_id| {
            let (url, expires_at) = sign(&key, &base, caller.account_id, punishment_id, now);
            PunishmentLink {
                punishment_id,
                url,
                expires_at,
            }
        })
        .collect();
    Ok(Json(AppealLinks { links }))
}

/// The body as an [`AppealLinksRequest`]; 400 `malformed_json` naming the field when it is not one.
fn decode(bytes: &[u8]) -> Result<AppealLinksRequest, IngestError> {
    crate::body::decode_strict(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::appeal_link::Unverified;

    #[test]
    fn a_signed_link_is_the_form_path_and_a_token_that_verifies() {
        let key = LinkKey::from_bytes([3; 32]);
        let (account, punishment, now) = (Uuid::now_v7(), Uuid::now_v7(), Utc::now());
        let (url, expires_at) = sign(&key, "https://warden.example.net", account, punishment, now);
        let token = url
            .strip_prefix("https://warden.example.net/appeal/")
            .expect("the form's path");
        let claims = Unverified::read(token)
            .and_then(|u| u.verify(&key, now))
            .expect("verifies");
        assert_eq!(
            (claims.account_id, claims.punishment_id, claims.expires_at),
            (account, punishment, expires_at)
        );
    }

    #[test]
    fn the_body_is_decoded_strictly() {
        assert!(decode(br#"{"punishment_ids": []}"#).is_ok());
        for bad in [
            &br#"{"punishment_ids": ["x"]}"#[..],
            br#"{"punishment_ids": [], "more": 1}"#,
            br#"{}"#,
            br#"[]"#,
            br#"{"punishment_ids": []} {}"#,
        ] {
            assert!(
                matches!(decode(bad), Err(IngestError::Malformed { .. })),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
