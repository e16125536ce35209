//! `POST /appeals/{id}/decision`: a member takes an appeal up, accepts it or denies it.
//!
//! The role check comes first (moderators and up). A decided appeal (accepted or denied) is
//! not decided again (409). Accepting an appeal of a punishment still in force first writes
//! the `revoke` action exactly as the Punishments page's revoke does (the same checks, the
//! role's limits among them: a member who may not revoke it gets 403 with the limit in words),
//! then the `appeal` step naming it; a punishment already ended gets the step only (naming the
//! revoke when it is this form's own, sent before without its step being confirmed).
//!
//! Each record is appended under a log message id built from the appeal's id and the step, so
//! a form sent twice is one step (and one revoke); the page answers 303 only after the stream's
//! ack (503 with `Retry-After` otherwise), audits the step (`appeal_decided`) and waits a few
//! seconds for the projector so the appeal page it opens shows the new status.

use super::require_role;
use crate::error::ApiError;
use crate::pages::error::PageError;
use crate::pages::form::Form;
use crate::pages::gate::SignedIn;
use crate::pages::punish::{self, LogId};
use crate::queries::appeals;
use crate::queries::dashboard_actions::{revoke_stored, revoke_target};
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::Utc;
use serde::Deserialize;
use serde_json::json;
use shared::envelope::Logged;
use shared::records::{ActionMember, Appeal, AppealStep};
use std::time::Duration;
use uuid::Uuid;

/// How long the redirect waits for the projector to show the step.
const SHOW_WITHIN: Duration = Duration::from_secs(3);
/// Words of the reply the revoke's reason carries after "Appeal accepted".
const REASON_WORDS: usize = 12;

/// The decision form.
#[derive(Debug, Deserialize)]
pub(super) struct DecisionForm {
    /// `under_review`, `accepted` or `denied`.
    #[serde(default)]
    step: String,
    /// Words to the player, shown at their appeal link.
    #[serde(default)]
    reply: String,
    /// The id of the revoke an acceptance writes, made with the form (empty: a new one).
    #[serde(default)]
    action_id: String,
}

/// The step the form asks for.
fn step(sent: &str) -> Result<AppealStep, ApiError> {
    match sent.trim() {
        "under_review" => Ok(AppealStep::UnderReview),
        "accepted" => Ok(AppealStep::Accepted),
        "denied" => Ok(AppealStep::Denied),
        _ => Err(ApiError::invalid_field(
            "step",
            "invalid_value",
            "take the appeal up, accept it or deny it",
        )),
    }
}

/// The log message tag of a step: with the appeal's id, its message id.
fn tag(step: AppealStep) -> &'static str {
    match step {
        AppealStep::Submitted => "appeal_submitted",
        AppealStep::UnderReview => "appeal_under_review",
        AppealStep::Accepted => "appeal_accepted",
        AppealStep::Denied => "appeal_denied",
    }
}

/// The revoke's reason: "Appeal accepted", and the reply's first words.
fn revoke_reason(reply: Option<&str>) -> String {
    let words: Vec<&str> = reply
        .unwrap_or("")
        .split_whitespace()
        .take(REASON_WORDS + 1)
        .collect();
    match words.len() {
        0 => "Appeal accepted".to_owned(),
        n if n > REASON_WORDS => format!("Appeal accepted: {} …", words[..REASON_WORDS].join(" ")),
        _ => format!("Appeal accepted: {}", words.join(" ")),
    }
}

pub(super) async fn decide(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<DecisionForm>,
) -> Result<Response, PageError> {
    require_role(&caller)?;
    let member = caller.member();
    let account_id = member.account_id;
    let id = Uuid::parse_str(&id).map_err(|_| PageError::NotFound)?;
    let appeal = appeals::one(&state.pool, account_id, id)
        .await?
        .ok_or(PageError::NotFound)?;
    let back = format!("/appeals/{id}");
    if matches!(appeal.status.as_str(), "accepted" | "denied") {
        return Err(punish::refused(
            StatusCode::CONFLICT,
            "already_decided",
            &format!(
                "This appeal was already {} by {}; a decided appeal stays decided.",
                appeal.status,
                appeal.member_name.as_deref().unwrap_or("a member")
            ),
        ));
    }
    let step = step(&form.step)?;
    if step == AppealStep::UnderReview && appeal.status == "under_review" {
        return Ok(punish::see_other(&back));
    }
    let reply = Some(form.reply.trim()).filter(|r| !r.is_empty());
    let by = ActionMember {
        member_id: member.id,
        name: member.display_name.clone(),
    };
    let now = Utc::now();
    let mut record = Appeal {
        id,
        step,
        punishment_id: appeal.punishment_id,
        player_uuid: appeal.player_uuid,
        message: None,
        reply: reply.map(str::to_owned),
        by: Some(by.clone()),
        revoke_action: None,
        at: now,
    };
    // Everything is checked before the first write: a refused reply revokes nothing.
    record.validate(now).map_err(ApiError::invalid)?;
    let action_id = punish::action_id(&form.action_id)?;

    let target = match step {
        AppealStep::Accepted => {
            revoke_target(&state.pool, account_id, appeal.punishment_id).await?
        }
        _ => None,
    };
    if let Some(target) = target {
        if target.is_active {
            let reason = revoke_reason(reply);
            let action = punish::revoke_of(member, by, &target, &reason, action_id, now)?;
            let detail =
                json!({"action_id": action.id, "punishment_id": target.id, "appeal_id": id});
            let logged = LogId {
                tag: "appeal_revoke",
                id,
            };
            let player = target.player_uuid;
            let audited = "punishment_revoked";
            if let Some(page) =
                punish::commit(&state, &caller, &action, audited, player, detail, logged).await?
            {
                return Ok(page);
            }
            record.revoke_action = Some(action.id);
        } else if revoke_stored(&state.pool, account_id, target.id, action_id).await? {
            // This form's revoke landed before and its step did not: the step names it now.
            record.revoke_action = Some(action_id);
        }
    }

    let batch = Appeal::into_batch(vec![Logged {
        id: Uuid::now_v7(),
        record: record.clone(),
    }]);
    let logged = LogId { tag: tag(step), id };
    if let Err(page) = punish::log(&state, account_id, Appeal::KIND, batch, now, logged).await {
        return Ok(page);
    }
    let actor = caller.actor(&state);
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor: &actor,
        action: "appeal_decided",
        target: Some(id.to_string()),
        detail: json!({
            "step": step.status(),
            "punishment_id": appeal.punishment_id,
            "player_uuid": appeal.player_uuid,
            "revoke_action": record.revoke_action,
        }),
    };
    audit::record(&state.pool, entry).await?;
    if record.revoke_action.is_some() {
        punish::shown(&state, account_id, appeal.punishment_id, true).await;
    }
    shown(&state, account_id, id, step).await;
    Ok(punish::see_other(&back))
}

/// Waits (at most [`SHOW_WITHIN`]) until the projector has applied the step.
async fn shown(state: &AppState, account_id: Uuid, id: Uuid, step: AppealStep) {
    let deadline = tokio::time::Instant::now() + SHOW_WITHIN;
    while tokio::time::Instant::now() < deadline {
        match appeals::status(&state.pool, account_id, id).await {
            Ok(Some(status)) if status == step.status() => return,
            Err(_) => return,
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revoke_says_the_appeal_was_accepted_with_the_replys_first_words() {
        assert_eq!(revoke_reason(None), "Appeal accepted");
        assert_eq!(revoke_reason(Some("  ")), "Appeal accepted");
        assert_eq!(
            revoke_reason(Some("Fair enough,\nwelcome back.")),
            "Appeal accepted: Fair enough, welcome back."
        );
        let long = "word ".repeat(40);
        let reason = revoke_reason(Some(&long));
        assert!(reason.ends_with("word …"), "{reason}");
        assert_eq!(reason.split_whitespace().count(), 2 + REASON_WORDS + 1);
    }

    #[test]
    fn the_form_takes_three_steps_and_each_has_its_own_message_id() {
        assert_eq!(step("accepted").unwrap(), AppealStep::Accepted);
        assert!(step("submitted").is_err());
        assert!(step("").is_err());
        assert_ne!(tag(AppealStep::Accepted), tag(AppealStep::Denied));
    }
}
