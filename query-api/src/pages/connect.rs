//! `/connect`: connect a game server. An admin creates a plugin key for it and gets the
//! plugin's `config.yml` with Warden's address and the key filled in (the secret is shown on
//! that answer only, as on `/settings`), and the plugin jar when the deployment ships one
//! (`PLUGIN_JAR`). The key is created by the same [`KeyStore`](crate::key_store::KeyStore)
//! call as everywhere else and written to the audit log.

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::error::ApiError;
use crate::key_store::{IssuedKey, KeySummary, check_new_key};
use crate::routes::admin_settings::AccountSettings;
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use shared::keys::KeyKind;

/// Where the page is.
const PATH: &str = "/connect";
/// Where the plugin jar is offered.
const JAR_PATH: &str = "/connect/warden-plugin.jar";

/// The page.
#[derive(Template)]
#[template(path = "connect.html")]
struct ConnectPage {
    shell: Shell,
    /// The address written into `base-url`.
    base_url: String,
    /// Whether the jar can be downloaded here.
    jar: bool,
    /// The account's plugin keys (never their secrets).
    keys: Vec<KeySummary>,
    /// A key just created, and the `config.yml` that carries it: shown this once.
    created: Option<Created>,
    /// Why the form was refused.
    error: Option<String>,
}

/// A key just created and its configuration.
struct Created {
    key: IssuedKey,
    config: String,
}

#[derive(Debug, Deserialize)]
struct NewServerForm {
    /// The server's name: the key's label and the config's `server-name`.
    #[serde(default)]
    label: String,
}

/// `/connect`, its form and the jar.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(show))
        .route("/connect/key", post(create_key))
        .route(JAR_PATH, get(download_jar))
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    page(&state, &caller, &headers, StatusCode::OK, None, None).await
}

async fn page(
    state: &AppState,
    caller: &SignedIn,
    headers: &HeaderMap,
    status: StatusCode,
    created: Option<Created>,
    error: Option<String>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, PATH)?;
    let keys = state
        .key_store
        .list_keys(caller.member().account_id)
        .await?
        .into_iter()
        .filter(|key| key.kind == KeyKind::Plugin)
        .collect();
    let page = ConnectPage {
        shell,
        base_url: base_url(state, headers),
        jar: jar_available(state).await,
        keys,
        created,
        error,
    };
    Ok((status, render(&page)?).into_response())
}

async fn create_key(
    caller: SignedIn,
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<NewServerForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let account_id = caller.member().account_id;
    let label = Some(form.label.trim().to_owned()).filter(|l| !l.is_empty());
    let issued = match check_new_key(KeyKind::Plugin.as_str(), label.as_deref()) {
        Ok(kind) => state
            .key_store
            .create_key(account_id, kind, label)
            .await
            .map_err(ApiError::from),
        Err(error) => Err(error.into()),
    };
    let key = match issued {
        Ok(key) => key,
        Err(error) => {
            let problem = error.to_problem();
            if problem.status >= 500 {
                return Err(error.into());
            }
            let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::BAD_REQUEST);
            return page(
                &state,
                &caller,
                &headers,
                status,
                None,
                Some(problem.detail),
            )
            .await;
        }
    };
    let actor = caller.actor(&state);
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor: &actor,
        action: "key_created",
        target: Some(key.id.to_string()),
        detail: json!({ "kind": key.kind, "label": key.label, "via": "connect" }),
    };
    audit::record(&state.pool, entry).await?;
    let settings = AccountSettings::load(&state.pool, account_id).await?;
    let config = plugin_config(
        &base_url(&state, &headers),
        &key,
        settings.sync_interval_seconds,
    );
    let created = Created { key, config };
    page(
        &state,
        &caller,
        &headers,
        StatusCode::OK,
        Some(created),
        None,
    )
    .await
}

async fn download_jar(
    caller: SignedIn,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let Some(path) = state.plugin.jar.as_deref() else {
        return Err(PageError::NotFound);
    };
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok((
            [
                (CONTENT_TYPE, "application/java-archive"),
                (CONTENT_DISPOSITION, "attachment; filename=\"Warden.jar\""),
            ],
            bytes,
        )
            .into_response()),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "PLUGIN_JAR cannot be read");
            Err(PageError::NotFound)
        }
    }
}

/// Whether `PLUGIN_JAR` names a readable file.
async fn jar_available(state: &AppState) -> bool {
    match state.plugin.jar.as_deref() {
        Some(path) => tokio::fs::metadata(path)
            .await
            .is_ok_and(|meta| meta.is_file()),
        None => false,
    }
}

/// `PLUGIN_BASE_URL`, or the address the dashboard was opened at
/// ([`shared::base_url::from_request`]). A `Host` header that is not a plain host and port is not
/// echoed; the page then shows a placeholder to replace.
fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.plugin.base_url {
        return url.clone();
    }
    shared::base_url::from_request(headers)
        .unwrap_or_else(|| "https://warden.example.com".to_owned())
}

/// The plugin's `config.yml` for this key: the keys the plugin's own default file has, with
/// Warden's address, the key, the account's sync interval and the server's name filled in.
fn plugin_config(base_url: &str, key: &IssuedKey, sync_interval_seconds: i32) -> String {
    let name = key.label.as_deref().unwrap_or("");
    format!(
        "# Warden plugin configuration: plugins/Warden/config.yml (every other key keeps its\n\
         # default; see the plugin's documentation). After a change: /warden reload.\n\
         base-url: {}\n\
         # Sent only in the Authorization header, never logged. Keep this file private.\n\
         plugin-key: {}\n\
         # The account's sync interval on Warden: keep the two equal.\n\
         sync-interval-seconds: {sync_interval_seconds}\n\
         # The name shown on the dashboard (empty: the server software's own name).\n\
         server-name: {}\n",
        yaml_string(base_url),
        yaml_string(&key.key),
        yaml_string(name),
    )
}

/// `text` as a YAML double-quoted scalar.
fn yaml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_strings_escape_what_would_end_them() {
        assert_eq!(yaml_string("Lobby"), r#""Lobby""#);
        assert_eq!(yaml_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(yaml_string("a\nb\u{7}"), r#""a\nb\u0007""#);
    }
}
