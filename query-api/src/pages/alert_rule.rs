//! `/alerts/rules/{id}/edit` and `/alerts/rules/{id}/state`: editing a rule (the same fields
//! and validation as adding one, the form filled from the rule) and pausing or resuming it.
//! Both replace the rule with the admin API's function (`rules::replace`, what
//! `PUT /api/admin/accounts/{account}/alert-rules/{id}` runs), which checks the body and
//! writes `alert_rule_changed` to the audit log. Owners and admins only, as the Alerts page.

use super::alerts::{PATH as ALERTS, kinds, refusal, rule_body};
use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, render};
use crate::error::ApiError;
use crate::routes::alerts::destinations::{self, Destination};
use crate::routes::alerts::rules::{self, Rule};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

/// A rule form's values as text: empty (adding), the rule's (editing), or as typed.
#[derive(Debug, Clone, Default)]
pub struct RuleFields {
    /// The kind's value (`punishment_issued`, ...).
    pub kind: String,
    /// The label.
    pub name: String,
    /// The ticked destinations.
    pub destinations: Vec<String>,
    /// The ticked punishment types.
    pub punishment_types: Vec<String>,
    /// Every other field (`flags`, `server_id`, ...).
    pub values: BTreeMap<String, String>,
}

impl RuleFields {
    /// The fields of a stored rule.
    pub fn of_rule(rule: &Rule) -> RuleFields {
        let mut fields = RuleFields {
            kind: rule.kind.clone(),
            name: rule.name.clone().unwrap_or_default(),
            destinations: rule.destinations.iter().map(Uuid::to_string).collect(),
            ..RuleFields::default()
        };
        for (key, value) in rule.spec.as_object().into_iter().flatten() {
            match (key.as_str(), value) {
                ("kind", _) | (_, Value::Null) => {}
                ("punishment_types", Value::Array(types)) => {
                    fields.punishment_types = types
                        .iter()
                        .filter_map(|t| t.as_str().map(str::to_owned))
                        .collect();
                }
                (_, Value::String(text)) => {
                    fields.values.insert(key.clone(), text.clone());
                }
                (_, other) => {
                    fields.values.insert(key.clone(), other.to_string());
                }
            }
        }
        fields
    }

    /// The fields as posted.
    pub fn of_form(pairs: &[(String, String)]) -> RuleFields {
        let mut fields = RuleFields::default();
        for (key, value) in pairs {
            match key.as_str() {
                "kind" => fields.kind = value.clone(),
                "name" => fields.name = value.clone(),
                "destinations" => fields.destinations.push(value.clone()),
                "punishment_types" => fields.punishment_types.push(value.clone()),
                _ => {
                    fields.values.insert(key.clone(), value.clone());
                }
            }
        }
        fields
    }

    /// A field's text (empty when not set).
    pub fn value(&self, key: &str) -> &str {
        self.values.get(key).map_or("", String::as_str)
    }

    /// Whether the destination is ticked.
    pub fn notifies(&self, id: &Uuid) -> bool {
        self.destinations.contains(&id.to_string())
    }

    /// Whether the punishment type is ticked.
    pub fn has_type(&self, punishment_type: &&str) -> bool {
        self.punishment_types.iter().any(|t| t == punishment_type)
    }
}

/// The edit page.
#[derive(Template)]
#[template(path = "alert_rule.html")]
struct RulePage {
    shell: Shell,
    rule: Rule,
    fields: RuleFields,
    destinations: Vec<Destination>,
    kinds: Vec<(&'static str, &'static str)>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct StateForm {
    #[serde(default)]
    enabled: String,
}

/// The routes.
pub fn router() -> PageRoutes {
    Router::new()
        .route("/alerts/rules/{id}/edit", get(edit).post(save))
        .route("/alerts/rules/{id}/state", post(set_state))
}

/// Another account's rule (or none) is no page at all.
fn not_found(error: ApiError) -> PageError {
    match error {
        ApiError::NotFound(_) => PageError::NotFound,
        other => other.into(),
    }
}

async fn page(
    state: &AppState,
    caller: &SignedIn,
    rule: Rule,
    fields: RuleFields,
    (status, error): (StatusCode, Option<String>),
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, ALERTS)?;
    let account_id = caller.member().account_id;
    let page = RulePage {
        shell,
        rule,
        fields,
        destinations: destinations::list(&state.pool, account_id).await?,
        kinds: kinds(),
        error,
    };
    Ok((status, render(&page)?).into_response())
}

fn done(notice: &str) -> Response {
    let location = format!("{ALERTS}?notice={notice}");
    (StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response()
}

/// The caller's account's rule `id`, for a member who may use the Alerts page (404 for
/// another account's or no rule).
async fn rule_of(caller: &SignedIn, state: &AppState, id: Uuid) -> Result<Rule, PageError> {
    Shell::for_page(caller, ALERTS)?;
    rules::get_one(&state.pool, caller.member().account_id, id)
        .await
        .map_err(not_found)
}

async fn edit(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    let rule = rule_of(&caller, &state, id).await?;
    let fields = RuleFields::of_rule(&rule);
    page(&state, &caller, rule, fields, (StatusCode::OK, None)).await
}

async fn save(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PageError> {
    let rule = rule_of(&caller, &state, id).await?;
    let account_id = caller.member().account_id;
    // Editing keeps the rule's state: pausing and resuming are their own buttons.
    let mut body = rule_body(&pairs);
    if let Some(object) = body.as_object_mut() {
        object.insert("enabled".into(), Value::Bool(rule.enabled));
    }
    let actor = caller.actor(&state);
    match rules::replace(&state, account_id, id, body, &actor).await {
        Ok(_) => Ok(done("rule_changed")),
        Err(error) => match refusal(&error) {
            Some((StatusCode::NOT_FOUND, _)) => Err(PageError::NotFound),
            Some(answer) => {
                let fields = RuleFields::of_form(&pairs);
                page(&state, &caller, rule, fields, (answer.0, Some(answer.1))).await
            }
            None => Err(error.into()),
        },
    }
}

/// The body that replaces `rule` with itself, `enabled` set as asked.
fn with_state(rule: &Rule, enabled: bool) -> Value {
    let mut body = rule.spec.clone();
    if let Some(object) = body.as_object_mut() {
        object.insert("destinations".into(), serde_json::json!(rule.destinations));
        object.insert("name".into(), serde_json::json!(rule.name));
        object.insert("enabled".into(), Value::Bool(enabled));
    }
    body
}

async fn set_state(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
    Form(form): Form<StateForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, ALERTS)?;
    let enabled = match form.enabled.as_str() {
        "true" => true,
        "false" => false,
        _ => return Err(PageError::BadForm("enabled: must be true or false".into())),
    };
    let rule = rule_of(&caller, &state, id).await?;
    let account_id = caller.member().account_id;
    let actor = caller.actor(&state);
    match rules::replace(&state, account_id, id, with_state(&rule, enabled), &actor).await {
        Ok(_) => Ok(done(if enabled {
            "rule_resumed"
        } else {
            "rule_paused"
        })),
        Err(error) => Err(not_found(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use serde_json::json;

    fn rule(spec: Value) -> Rule {
        Rule {
            id: Uuid::nil(),
            kind: spec["kind"].as_str().unwrap_or_default().to_owned(),
            name: Some("Bans".into()),
            enabled: true,
            destinations: vec![Uuid::from_u128(7)],
            spec,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn the_edit_form_is_filled_from_the_rule() {
        let bans = rule(json!({"kind": "punishment_issued", "punishment_types": ["ban"]}));
        let fields = RuleFields::of_rule(&bans);
        assert_eq!(fields.kind, "punishment_issued");
        assert_eq!(fields.name, "Bans");
        assert!(fields.notifies(&Uuid::from_u128(7)));
        assert!(fields.has_type(&"ban") && !fields.has_type(&"mute"));
        let tps = RuleFields::of_rule(&rule(
            json!({"kind": "tps_low", "below": 12.5, "minutes": 3}),
        ));
        assert_eq!((tps.value("below"), tps.value("minutes")), ("12.5", "3"));
        assert_eq!(tps.value("server_id"), "");
    }

    #[test]
    fn pausing_keeps_everything_but_the_state() {
        let bans = rule(json!({"kind": "punishment_issued", "punishment_types": ["ban"]}));
        let body = with_state(&bans, false);
        assert_eq!(
            body,
            json!({"kind": "punishment_issued", "punishment_types": ["ban"], "name": "Bans",
                   "destinations": [Uuid::from_u128(7)], "enabled": false})
        );
    }
}
