//! `/settings`: the account's API keys (create, rotate, revoke; a secret is shown once, on the
//! page that answers the form) and its settings (staff groups, sync interval). The work is the
//! admin API's ([`KeyStore`](crate::key_store::KeyStore), [`AccountSettings::store`]); every
//! change is written to the audit log.

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::privacy_settings::PrivacySection;
use super::{Shell, render};
use crate::error::ApiError;
use crate::key_store::{IssuedKey, KeySummary, check_new_key};
use crate::routes::admin_settings::{AccountSettings, SettingsUpdate};
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

/// Where the page is.
pub(super) const PATH: &str = "/settings";

/// The settings page.
#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsPage {
    shell: Shell,
    keys: Vec<KeySummary>,
    settings: AccountSettings,
    notice: Option<&'static str>,
    error: Option<String>,
    /// A key just issued or rotated: its secret, shown this once.
    issued: Option<IssuedKey>,
    /// Data retention ([`PrivacySection`]).
    privacy: PrivacySection,
}

impl SettingsPage {
    /// The staff groups, one per line, for the textarea.
    fn groups_text(&self) -> String {
        self.settings.staff_groups.join("\n")
    }
}

#[derive(Debug, Deserialize)]
struct Notice {
    notice: Option<String>,
}

fn notice_text(code: &str) -> Option<&'static str> {
    match code {
        "key_revoked" => Some("Key revoked: it stops working within seconds."),
        "settings_saved" => Some("Settings saved."),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
struct NewKeyForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    label: String,
}

#[derive(Debug, Deserialize)]
struct RotateForm {
    #[serde(default)]
    grace_seconds: i64,
}

#[derive(Debug, Deserialize)]
struct GeneralForm {
    /// One group per line (commas work too).
    #[serde(default)]
    staff_groups: String,
    #[serde(default)]
    sync_interval_seconds: i64,
}

/// `/settings` and its forms.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(show))
        .route("/settings/keys", post(create_key))
        .route("/settings/keys/{id}/rotate", post(rotate_key))
        .route("/settings/keys/{id}/revoke", post(revoke_key))
        .route("/settings/general", post(save_general))
        .route("/settings/privacy", post(super::privacy_settings::save))
}

async fn page(
    state: &AppState,
    caller: &SignedIn,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    issued: Option<IssuedKey>,
) -> Result<Response, PageError> {
    Shell::for_page(caller, PATH)?;
    let privacy = PrivacySection::load(state, caller.member().account_id).await?;
    page_with(state, caller, status, notice, error, issued, privacy).await
}

/// The page with its data retention section as given (after a save: what changed).
pub(super) async fn page_with_privacy(
    state: &AppState,
    caller: &SignedIn,
    status: StatusCode,
    notice: Option<&'static str>,
    privacy: PrivacySection,
) -> Result<Response, PageError> {
    page_with(state, caller, status, notice, None, None, privacy).await
}

async fn page_with(
    state: &AppState,
    caller: &SignedIn,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    issued: Option<IssuedKey>,
    privacy: PrivacySection,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, PATH)?;
    let account_id = caller.member().account_id;
    let page = SettingsPage {
        shell,
        keys: state.key_store.list_keys(account_id).await?,
        settings: AccountSettings::load(&state.pool, account_id).await?,
        notice,
        error,
        issued,
        privacy,
    };
    Ok((status, render(&page)?).into_response())
}

/// A refused change (422, 404, 409): the page again with the reason.
pub(super) async fn refused(
    state: &AppState,
    caller: &SignedIn,
    error: ApiError,
) -> Result<Response, PageError> {
    let problem = error.to_problem();
    if problem.status >= 500 {
        return Err(error.into());
    }
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::BAD_REQUEST);
    page(state, caller, status, None, Some(problem.detail), None).await
}

fn done(notice: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(LOCATION, format!("{PATH}?notice={notice}"))],
    )
        .into_response()
}

async fn record(
    state: &AppState,
    caller: &SignedIn,
    action: &'static str,
    target: String,
    detail: serde_json::Value,
) -> Result<(), PageError> {
    let actor = caller.actor(state);
    let entry = AuditEntry {
        account_id: Some(caller.member().account_id),
        actor: &actor,
        action,
        target: Some(target),
        detail,
    };
    audit::record(&state.pool, entry).await?;
    Ok(())
}

/// Refuses (404) a key that is not this account's.
async fn own_key(state: &AppState, caller: &SignedIn, key_id: Uuid) -> Result<(), ApiError> {
    let keys = state
        .key_store
        .list_keys(caller.member().account_id)
        .await?;
    if keys.iter().any(|key| key.id == key_id) {
        Ok(())
    } else {
        Err(ApiError::NotFound(format!(
            "this account has no key {key_id}"
        )))
    }
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    Query(notice): Query<Notice>,
) -> Result<Response, PageError> {
    let notice = notice.notice.as_deref().and_then(notice_text);
    page(&state, &caller, StatusCode::OK, notice, None, None).await
}

async fn create_key(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(form): Form<NewKeyForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let label = Some(form.label.trim().to_owned()).filter(|l| !l.is_empty());
    let issued = match check_new_key(&form.kind, label.as_deref()) {
        Ok(kind) => state
            .key_store
            .create_key(caller.member().account_id, kind, label)
            .await
            .map_err(ApiError::from),
        Err(error) => Err(error.into()),
    };
    match issued {
        Ok(key) => {
            let detail = json!({ "kind": key.kind, "label": key.label });
            record(&state, &caller, "key_created", key.id.to_string(), detail).await?;
            page(&state, &caller, StatusCode::OK, None, None, Some(key)).await
        }
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn rotate_key(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(key_id): Path<Uuid>,
    Form(form): Form<RotateForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let rotated = match own_key(&state, &caller, key_id).await {
        Ok(()) => state
            .key_store
            .rotate_key(key_id, form.grace_seconds)
            .await
            .map_err(ApiError::from),
        Err(error) => Err(error),
    };
    match rotated {
        Ok(key) => {
            let detail = json!({ "new_key": key.id, "grace_seconds": form.grace_seconds });
            record(&state, &caller, "key_rotated", key_id.to_string(), detail).await?;
            page(&state, &caller, StatusCode::OK, None, None, Some(key)).await
        }
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn revoke_key(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(key_id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let revoked = match own_key(&state, &caller, key_id).await {
        Ok(()) => state
            .key_store
            .revoke_key(key_id)
            .await
            .map_err(ApiError::from),
        Err(error) => Err(error),
    };
    match revoked {
        Ok(()) => {
            record(
                &state,
                &caller,
                "key_revoked",
                key_id.to_string(),
                json!({}),
            )
            .await?;
            Ok(done("key_revoked"))
        }
        Err(error) => refused(&state, &caller, error).await,
    }
}

async fn save_general(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(form): Form<GeneralForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let update = SettingsUpdate {
        staff_groups: form
            .staff_groups
            .split(['\n', ','])
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect(),
        sync_interval_seconds: form.sync_interval_seconds,
    };
    let account_id = caller.member().account_id;
    match AccountSettings::store(&state.pool, account_id, &update).await {
        Ok(saved) => {
            let detail = json!({
                "staff_groups": saved.staff_groups,
                "sync_interval_seconds": saved.sync_interval_seconds,
            });
            record(
                &state,
                &caller,
                "settings_changed",
                "settings".into(),
                detail,
            )
            .await?;
            Ok(done("settings_saved"))
        }
        Err(error) => refused(&state, &caller, error).await,
    }
}
