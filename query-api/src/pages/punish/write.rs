//! `POST /players/{uuid}/punishments` and `POST /punishments/{id}/revoke`: an `action`
//! record read from the form, checked against the role's limits ([`super::rules`]) and the
//! record's own rules ([`Action::validate`]), logged to JetStream and audited.
//!
//! The page answers 303 only after the stream's ack: a redirect means the action is durable
//! (and the servers will enforce it). Without an ack it answers 503 with `Retry-After`, saying
//! whether nothing was sent or the action may still be stored. The issue form carries its
//! action id, and the log message's id is built from it, so a form sent twice is one action.
//!
//! The appeals inbox accepts an appeal with the same revoke: [`revoke_of`], [`commit`], [`log`]
//! and [`shown`] serve both.

use super::rules;
use crate::error::ApiError;
use crate::pages::error::PageError;
use crate::pages::form::Form;
use crate::pages::gate::SignedIn;
use crate::pages::log_append::{NotAppended, append};
use crate::queries::dashboard_actions::{RevokeTarget, applied, player_name, revoke_target};
use crate::routes::history::player_not_found;
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use crate::team::{Area, Member};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header::{LOCATION, RETRY_AFTER};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::problem::Problem;
use shared::records::{
    Action, ActionMember, ActionPunishment, ActionRevoke, ActionType, PunishmentType, RecordKind,
};
use std::time::Duration;
use uuid::Uuid;

/// How long the redirect waits for the projector to show the action (then it goes anyway: the
/// action is durable, and shows on the next load).
const SHOW_WITHIN: Duration = Duration::from_secs(3);
/// Seconds a client is told to wait when the event log did not take the action.
const RETRY_AFTER_SECONDS: u32 = 5;

/// The punish form.
#[derive(Debug, Deserialize)]
pub(super) struct IssueForm {
    #[serde(default, rename = "type")]
    kind: String,
    /// One of [`rules::LENGTHS`]; ignored for kicks and warnings.
    #[serde(default)]
    length: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    scope: String,
    /// The action's id, made with the form (empty: a new one).
    #[serde(default)]
    action_id: String,
}

/// The revoke form.
#[derive(Debug, Deserialize)]
pub(super) struct RevokeForm {
    #[serde(default)]
    reason: String,
    /// Where to go afterwards: `punishments` (the Punishments page), else the player's page.
    #[serde(default)]
    back: String,
}

/// A 403 page with the role's limit in words.
fn not_allowed(why: String) -> PageError {
    PageError::Api(ApiError::Refused(Box::new(Problem::new(
        StatusCode::FORBIDDEN,
        "role_limit",
        "Not allowed for your role",
        &why,
    ))))
}

/// The signed-in member, and the same as the actor an action names; 403 below
/// [`Area::Punish`].
fn punisher(caller: &SignedIn) -> Result<(&Member, ActionMember), PageError> {
    let member = caller.member();
    if !member.role.allows(Area::Punish) {
        return Err(PageError::Forbidden {
            title: "Punish",
            role: member.role,
        });
    }
    let by = ActionMember {
        member_id: member.id,
        name: member.display_name.clone(),
    };
    Ok((member, by))
}

pub(super) async fn issue(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(player): Path<String>,
    Form(form): Form<IssueForm>,
) -> Result<Response, PageError> {
    let (member, by) = punisher(&caller)?;
    let player = Uuid::parse_str(&player).map_err(|_| PageError::NotFound)?;
    let account_id = member.account_id;
    let name = player_name(&state.pool, account_id, player)
        .await?
        .ok_or_else(|| PageError::Api(player_not_found(player)))?;

    let kind = rules::kind(form.kind.trim()).ok_or_else(|| {
        ApiError::invalid_field(
            "type",
            "invalid_value",
            "choose a ban, mute, kick or warning",
        )
    })?;
    let timed = matches!(kind, PunishmentType::Ban | PunishmentType::Mute);
    let length = if timed {
        rules::length(form.length.trim()).ok_or_else(|| {
            ApiError::invalid_field(
                "length",
                "invalid_value",
                "choose one of the lengths offered",
            )
        })?
    } else {
        None
    };
    rules::may_issue(member.role, kind, length).map_err(not_allowed)?;
    let reason = form.reason.trim();
    if reason.is_empty() {
        return Err(
            ApiError::invalid_field("reason", "required", "say why: the player sees it").into(),
        );
    }
    let id = action_id(&form.action_id)?;
    let now = Utc::now();
    let action = Action {
        id,
        action_type: ActionType::Issue,
        punishment: Some(ActionPunishment {
            punishment_type: kind,
            player_uuid: player,
            player_name: name,
            reason: Some(reason.to_owned()),
            expires_at: length.map(|length| now + length),
            scope: form.scope.trim().to_owned(),
        }),
        revoke: None,
        by,
        at: now,
    };
    let detail = json!({
        "action_id": id,
        "type": kind.as_str(),
        "expires_at": action.punishment.as_ref().and_then(|p| p.expires_at),
    });
    if let Some(page) = commit(
        &state,
        &caller,
        &action,
        "punishment_issued",
        player,
        detail,
        LogId { tag: "action", id },
    )
    .await?
    {
        return Ok(page);
    }
    shown(&state, account_id, id, false).await;
    Ok(see_other(&format!("/players/{player}#punish")))
}

pub(super) async fn revoke(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<RevokeForm>,
) -> Result<Response, PageError> {
    let (member, by) = punisher(&caller)?;
    let id = Uuid::parse_str(&id).map_err(|_| PageError::NotFound)?;
    let account_id = member.account_id;
    let target = revoke_target(&state.pool, account_id, id)
        .await?
        .ok_or(PageError::NotFound)?;
    let action = revoke_of(
        member,
        by,
        &target,
        &form.reason,
        Uuid::now_v7(),
        Utc::now(),
    )?;
    let detail = json!({"action_id": action.id, "punishment_id": target.id});
    let logged = LogId {
        tag: "action",
        id: action.id,
    };
    if let Some(page) = commit(
        &state,
        &caller,
        &action,
        "punishment_revoked",
        target.player_uuid,
        detail,
        logged,
    )
    .await?
    {
        return Ok(page);
    }
    shown(&state, account_id, target.id, true).await;
    let back = if form.back == "punishments" {
        "/punishments".to_owned()
    } else {
        format!("/players/{}#punish", target.player_uuid)
    };
    Ok(see_other(&back))
}

/// The revoke of `target` that `member` (acting as `by`) may write, with id `id` and `reason`:
/// refused when it is already revoked (409), not in force (422), beyond the role's limits (403,
/// with the limit in words) or without a reason (422).
pub(crate) fn revoke_of(
    member: &Member,
    by: ActionMember,
    target: &RevokeTarget,
    reason: &str,
    id: Uuid,
    now: DateTime<Utc>,
) -> Result<Action, PageError> {
    let kind = rules::kind(&target.punishment_type).unwrap_or(PunishmentType::Kick);
    if target.revoked_at.is_some() {
        return Err(refused(
            StatusCode::CONFLICT,
            "already_revoked",
            "This punishment was already revoked.",
        ));
    }
    if !target.is_active {
        return Err(refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_in_force",
            "Only a ban or mute in force can be revoked; this one has ended or never lasted.",
        ));
    }
    rules::may_revoke(member.role, kind, target.issued_at, target.expires_at)
        .map_err(not_allowed)?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ApiError::invalid_field("reason", "required", "say why it is lifted").into());
    }
    Ok(Action {
        id,
        action_type: ActionType::Revoke,
        punishment: None,
        revoke: Some(ActionRevoke {
            punishment_id: target.id,
            player_uuid: target.player_uuid,
            punishment_type: kind,
            source_plugin: target.source_plugin.clone(),
            external_id: target.external_id.clone(),
            reason: Some(reason.to_owned()),
        }),
        by,
        at: now,
    })
}

/// A log message's id, `<tag>:<account>:<id>`: the same for the same form sent twice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogId {
    /// What kind of write it is (`action`, `appeal_revoke`, ...).
    pub tag: &'static str,
    /// The id the write is known by.
    pub id: Uuid,
}

/// Checks `action` against the record's rules, appends it to the caller's event log and audits
/// it as `audited` about `player`: None when done (durable), else the 503 page to answer with.
pub(crate) async fn commit(
    state: &AppState,
    caller: &SignedIn,
    action: &Action,
    audited: &'static str,
    player: Uuid,
    detail: serde_json::Value,
    logged: LogId,
) -> Result<Option<Response>, PageError> {
    action.validate(action.at).map_err(ApiError::invalid)?;
    let account_id = caller.member().account_id;
    let batch = Action::into_batch(vec![Logged {
        id: action.id,
        record: action.clone(),
    }]);
    if let Err(page) = log(state, account_id, Action::KIND, batch, action.at, logged).await {
        return Ok(Some(page));
    }
    let actor = caller.actor(state);
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor: &actor,
        action: audited,
        target: Some(player.to_string()),
        detail,
    };
    audit::record(&state.pool, entry).await?;
    Ok(None)
}

/// Appends `batch` (records of `kind`, written `at`) to the account's event log as `logged`, or
/// the 503 page saying what happened.
pub(crate) async fn log(
    state: &AppState,
    account_id: Uuid,
    kind: RecordKind,
    batch: RecordBatch,
    at: DateTime<Utc>,
    logged: LogId,
) -> Result<(), Response> {
    let subject = state.subjects.for_records(account_id, kind, None);
    let mut message = LogMessage::new(account_id, at, batch);
    let Err(failure) = append(state, subject, &mut message, logged.tag, logged.id).await else {
        return Ok(());
    };
    let detail = match &failure {
        NotAppended::Unsent(error) => {
            tracing::warn!(%error, "a dashboard action could not be appended to the event log");
            "The event log is unavailable right now, so nothing was done. Try again in a moment."
        }
        NotAppended::Unconfirmed(error) => {
            tracing::warn!(%error, "a dashboard action sent to the event log was not confirmed");
            "The event log did not confirm the action in time, so it may or may not have been \
             done. Look again in a moment before trying again: the same form sent twice is done \
             once."
        }
    };
    let mut page = refused(StatusCode::SERVICE_UNAVAILABLE, "unavailable", detail).into_response();
    page.headers_mut()
        .insert(RETRY_AFTER, RETRY_AFTER_SECONDS.into());
    Err(page)
}

/// An error page with a status, a stable code and what happened.
pub(crate) fn refused(status: StatusCode, code: &str, detail: &str) -> PageError {
    let title = match status {
        StatusCode::CONFLICT => "Already done",
        StatusCode::SERVICE_UNAVAILABLE => "Not done",
        _ => "Cannot be done",
    };
    PageError::Api(ApiError::Refused(Box::new(Problem::new(
        status, code, title, detail,
    ))))
}

/// The form's action id: empty for a new one, else a UUID v7 (what forms are given).
pub(crate) fn action_id(sent: &str) -> Result<Uuid, ApiError> {
    match sent.trim() {
        "" => Ok(Uuid::now_v7()),
        sent => Uuid::parse_str(sent)
            .ok()
            .filter(|id| id.get_version_num() == 7)
            .ok_or_else(|| {
                ApiError::invalid_field(
                    "action_id",
                    "invalid",
                    "this form's id is not one the dashboard made; open the page again",
                )
            }),
    }
}

/// `303 See Other` to `to`.
pub(crate) fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(LOCATION, to.to_owned())]).into_response()
}

/// Waits (at most [`SHOW_WITHIN`]) until the projector has applied the action, so the page the
/// redirect opens shows it; a slow projector only means it shows on a later load.
pub(crate) async fn shown(state: &AppState, account_id: Uuid, punishment_id: Uuid, revoke: bool) {
    let deadline = tokio::time::Instant::now() + SHOW_WITHIN;
    while tokio::time::Instant::now() < deadline {
        match applied(&state.pool, account_id, punishment_id, revoke).await {
            Ok(true) | Err(_) => return,
            Ok(false) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
