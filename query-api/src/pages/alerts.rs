//! `/alerts`: the account's destinations with their health (a banner names any that are
//! disabled), adding one (a webhook's signing secret is shown once, on the page that answers
//! the form), and the rules with the form that adds one and the links and buttons that edit,
//! pause and resume each (`super::alert_rule`). The work is the admin API's
//! (`crate::routes::alerts`); every change is written to the audit log there.

use super::alert_rule::RuleFields;
use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, params, render};
use crate::error::ApiError;
use crate::routes::alerts::destinations::{
    self, CreatedDestination, Destination, Kind, NewDestination,
};
use crate::routes::alerts::rules::{self, Rule};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value};
use shared::alerts::rules::RuleKind;
use uuid::Uuid;

/// Where the page is (and the navigation bar's entry).
pub const PATH: &str = "/alerts";

/// The alerts page.
#[derive(Template)]
#[template(path = "alerts.html")]
struct AlertsPage {
    shell: Shell,
    destinations: Vec<Destination>,
    rules: Vec<Rule>,
    notice: Option<&'static str>,
    error: Option<String>,
    /// A destination just added: its secret (webhooks), shown this once.
    created: Option<CreatedDestination>,
    kinds: Vec<(&'static str, &'static str)>,
    /// The add-a-rule form's values: empty, or as typed when it was refused.
    fields: RuleFields,
}

impl AlertsPage {
    fn disabled(&self) -> Vec<&Destination> {
        self.destinations.iter().filter(|d| !d.enabled).collect()
    }

    /// The names of a rule's destinations, for the rules table.
    fn destination_names(&self, rule: &Rule) -> String {
        rule.destinations
            .iter()
            .map(|id| {
                self.destinations
                    .iter()
                    .find(|d| d.id == *id)
                    .map_or_else(|| id.to_string(), |d| d.name.clone())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A rule's parameters, readable (`flags: 5, window_seconds: 60`).
    fn parameters(&self, rule: &Rule) -> String {
        rule.spec
            .as_object()
            .map(|spec| {
                spec.iter()
                    .filter(|(key, _)| key.as_str() != "kind")
                    .map(|(key, value)| match value {
                        Value::String(text) => format!("{key}: {text}"),
                        other => format!("{key}: {other}"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    }
}

/// The rule kinds as the form offers them.
pub fn kinds() -> Vec<(&'static str, &'static str)> {
    RuleKind::ALL
        .into_iter()
        .map(|kind| (kind.as_str(), kind_label(kind)))
        .collect()
}

/// A rule kind as people read it.
pub fn kind_label(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::PunishmentIssued => "Punishment issued",
        RuleKind::PunishmentRevoked => "Punishment revoked",
        RuleKind::AnticheatThreshold => "Anti-cheat flags over a threshold",
        RuleKind::ServerOffline => "Server offline",
        RuleKind::ServerOnline => "Server back online",
        RuleKind::TpsLow => "TPS low for a while",
        RuleKind::BannedAltJoined => "A banned player's alt joined",
        RuleKind::StaffRankChange => "Rank change into or out of staff",
        RuleKind::CustomEvent => "Custom event",
    }
}

fn notice_text(code: &str) -> Option<&'static str> {
    match code {
        "rule_created" => Some("Rule created: it fires for what happens from now on."),
        "rule_deleted" => Some("Rule deleted."),
        "rule_changed" => Some("Rule saved: the change applies to what happens from now on."),
        "rule_paused" => Some("Rule paused: it does not fire until it is resumed."),
        "rule_resumed" => Some("Rule resumed: it fires for what happens from now on."),
        "destination_deleted" => Some("Destination deleted, with its delivery log."),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
struct DestinationForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    name: String,
}

/// `/alerts` and its forms.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(show))
        .route("/alerts/destinations", post(add_destination))
        .route("/alerts/rules", post(add_rule))
        .route("/alerts/rules/{id}/delete", post(delete_rule))
}

async fn page(
    state: &AppState,
    caller: &SignedIn,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    created: Option<CreatedDestination>,
    fields: RuleFields,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(caller, PATH)?;
    let account_id = caller.member().account_id;
    let page = AlertsPage {
        shell,
        destinations: destinations::list(&state.pool, account_id).await?,
        rules: rules::list(&state.pool, account_id).await?,
        notice,
        error,
        created,
        kinds: kinds(),
        fields,
    };
    Ok((status, render(&page)?).into_response())
}

/// What a refused change says: the problem's detail (every field error, for a 422).
pub fn refusal(error: &ApiError) -> Option<(StatusCode, String)> {
    let problem = error.to_problem();
    if problem.status >= 500 && problem.code != "alerts_not_configured" {
        return None;
    }
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::BAD_REQUEST);
    Some((status, problem.detail))
}

async fn refused(
    state: &AppState,
    caller: &SignedIn,
    error: ApiError,
    fields: RuleFields,
) -> Result<Response, PageError> {
    match refusal(&error) {
        Some((status, message)) => {
            page(state, caller, status, None, Some(message), None, fields).await
        }
        None => Err(error.into()),
    }
}

fn done(notice: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(LOCATION, format!("{PATH}?notice={notice}"))],
    )
        .into_response()
}

async fn show(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let notice = params::value(query.as_deref(), "notice");
    let notice = notice.as_deref().and_then(notice_text);
    let fields = RuleFields::default();
    page(&state, &caller, StatusCode::OK, notice, None, None, fields).await
}

async fn add_destination(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(form): Form<DestinationForm>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let kind = match form.kind.as_str() {
        "discord" => Kind::Discord,
        _ => Kind::Webhook,
    };
    let body = NewDestination {
        kind,
        url: form.url.trim().to_owned(),
        name: Some(form.name.trim().to_owned()).filter(|n| !n.is_empty()),
    };
    let actor = caller.actor(&state);
    match destinations::create(&state, caller.member().account_id, &body, &actor).await {
        Ok(created) => {
            let fields = RuleFields::default();
            page(
                &state,
                &caller,
                StatusCode::OK,
                None,
                None,
                Some(created),
                fields,
            )
            .await
        }
        Err(error) => refused(&state, &caller, error, RuleFields::default()).await,
    }
}

async fn add_rule(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let actor = caller.actor(&state);
    let body = rule_body(&pairs);
    match rules::create(&state, caller.member().account_id, body, &actor).await {
        Ok(_) => Ok(done("rule_created")),
        Err(error) => refused(&state, &caller, error, RuleFields::of_form(&pairs)).await,
    }
}

async fn delete_rule(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<Uuid>,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let actor = caller.actor(&state);
    match rules::delete(&state.pool, caller.member().account_id, id, &actor).await {
        Ok(()) => Ok(done("rule_deleted")),
        Err(error) => refused(&state, &caller, error, RuleFields::default()).await,
    }
}

/// The rule form as the API's JSON body: `kind`, the checked destinations, the name, and the
/// fields of the chosen kind only (the form shows every kind's fields; blank ones are left
/// out, so the kind's defaults apply). Numbers that do not parse are passed on as text, so the
/// API's validation names the field.
pub fn rule_body(pairs: &[(String, String)]) -> Value {
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(key, v)| key == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_owned())
    };
    let all = |name: &str| -> Vec<Value> {
        pairs
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, v)| Value::String(v.clone()))
            .collect()
    };
    let number = |text: String| {
        text.parse::<u64>()
            .map(Value::from)
            .or_else(|_| text.parse::<f64>().map(Value::from))
            .unwrap_or(Value::String(text))
    };
    let mut body = Map::new();
    let kind = value("kind").unwrap_or_default();
    body.insert("kind".into(), Value::String(kind.clone()));
    body.insert("destinations".into(), Value::Array(all("destinations")));
    if let Some(name) = value("name") {
        body.insert("name".into(), Value::String(name));
    }
    let (text_fields, number_fields): (&[&str], &[&str]) = match RuleKind::parse(&kind) {
        Some(RuleKind::PunishmentIssued | RuleKind::PunishmentRevoked) => {
            body.insert(
                "punishment_types".into(),
                Value::Array(all("punishment_types")),
            );
            (&[], &[])
        }
        Some(RuleKind::AnticheatThreshold) => (&["check"], &["flags", "window_seconds"]),
        Some(RuleKind::ServerOffline | RuleKind::ServerOnline) => (&["server_id"], &[]),
        Some(RuleKind::TpsLow) => (&["server_id"], &["below", "minutes"]),
        Some(RuleKind::StaffRankChange) => (&["direction"], &[]),
        Some(RuleKind::CustomEvent) => (&["event_name"], &[]),
        Some(RuleKind::BannedAltJoined) | None => (&[], &[]),
    };
    for field in text_fields {
        if let Some(text) = value(field) {
            body.insert((*field).into(), Value::String(text));
        }
    }
    for field in number_fields {
        if let Some(text) = value(field) {
            body.insert((*field).into(), number(text));
        }
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn the_form_keeps_only_the_chosen_kind_s_fields() {
        let body = rule_body(&pairs(&[
            ("kind", "anticheat_threshold"),
            ("destinations", "a"),
            ("destinations", "b"),
            ("name", " "),
            ("flags", "5"),
            ("window_seconds", "6x"),
            ("check", ""),
            ("event_name", "ignored"),
            ("below", "12.5"),
        ]));
        assert_eq!(
            body,
            json!({"kind": "anticheat_threshold", "destinations": ["a", "b"], "flags": 5,
                   "window_seconds": "6x"})
        );
        let tps = rule_body(&pairs(&[
            ("kind", "tps_low"),
            ("below", "12.5"),
            ("minutes", "3"),
        ]));
        assert_eq!(tps["below"], json!(12.5));
    }
}
