//! The "Data retention" section of `/settings`: days kept per kind and the custom-event
//! properties kept in clear in the event log, saved through the admin API's [`store_policy`]
//! (same checks, same audit row). The page answering a save lists what changed.

use super::Shell;
use super::error::PageError;
use super::form::Form;
use super::gate::SignedIn;
use super::settings;
use crate::error::ApiError;
use crate::routes::privacy::{kind_label, load_policy, store_policy};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use shared::privacy::{MAX_RETENTION_DAYS, PrivacyPolicy, RetentionDays, RetentionKind};
use shared::validation::FieldErrors;
use uuid::Uuid;

/// One row of the section's table: a kind and its days.
#[derive(Debug, Clone)]
pub struct RetentionRow {
    /// The form field's name (the kind's JSON name).
    pub field: &'static str,
    /// What it is called.
    pub label: &'static str,
    /// What leaves when it expires.
    pub removes: &'static str,
    /// The days set, as the input's value ("" keeps it forever).
    pub days: String,
}

/// What the section shows.
#[derive(Debug, Clone, Default)]
pub struct PrivacySection {
    /// One row per kind; empty when the policy could not be read.
    pub rows: Vec<RetentionRow>,
    /// The names of the properties kept in clear, one per line.
    pub properties: String,
    /// Why the policy could not be read (the section says so instead of a form).
    pub unavailable: Option<String>,
    /// What the save that answered with this page changed.
    pub changes: Option<Vec<String>>,
}

impl PrivacySection {
    /// The section for the account's policy in force.
    pub async fn load(state: &AppState, account_id: Uuid) -> Result<PrivacySection, PageError> {
        match load_policy(state, account_id).await {
            Ok(policy) => Ok(PrivacySection::of(&policy)),
            Err(error) => {
                let problem = error.to_problem();
                if problem.status != 503 {
                    return Err(error.into());
                }
                Ok(PrivacySection {
                    unavailable: Some(problem.detail),
                    ..PrivacySection::default()
                })
            }
        }
    }

    fn of(policy: &PrivacyPolicy) -> PrivacySection {
        PrivacySection {
            rows: RetentionKind::ALL
                .into_iter()
                .map(|kind| RetentionRow {
                    field: kind.as_str(),
                    label: kind_label(kind),
                    removes: removes(kind),
                    days: policy
                        .retention
                        .days(kind)
                        .map_or_else(String::new, |d| d.to_string()),
                })
                .collect(),
            properties: policy.clear_properties.join("\n"),
            unavailable: None,
            changes: None,
        }
    }
}

/// What expiry removes, in a few words (`docs/privacy.md`, "Retention per kind", says it at
/// length).
fn removes(kind: RetentionKind) -> &'static str {
    match kind {
        RetentionKind::Chat => "chat log rows and timeline entries; the text in the event log",
        RetentionKind::IpHashes => "the hash only: sessions stay, alt detection loses them",
        RetentionKind::Sessions => "closed sessions and their timeline entries (playtime stays)",
        RetentionKind::CustomEvents => {
            "Events page rows (charts stay); sealed properties in the event log"
        }
        RetentionKind::AnticheatFlags => "flag rows",
    }
}

/// The section's form: one field per kind (empty: forever) and the property names.
#[derive(Debug, Deserialize)]
pub(super) struct PrivacyForm {
    #[serde(default)]
    chat: String,
    #[serde(default)]
    ip_hashes: String,
    #[serde(default)]
    sessions: String,
    #[serde(default)]
    custom_events: String,
    #[serde(default)]
    anticheat_flags: String,
    /// The properties kept in clear: one name per line (commas work too).
    #[serde(default)]
    clear_properties: String,
}

impl PrivacyForm {
    /// The policy the form asks for; a field that is not a number is a 422.
    fn policy(&self) -> Result<PrivacyPolicy, ApiError> {
        let mut errors = FieldErrors::new();
        let mut retention = RetentionDays::default();
        for (kind, text) in [
            (RetentionKind::Chat, &self.chat),
            (RetentionKind::IpHashes, &self.ip_hashes),
            (RetentionKind::Sessions, &self.sessions),
            (RetentionKind::CustomEvents, &self.custom_events),
            (RetentionKind::AnticheatFlags, &self.anticheat_flags),
        ] {
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            match text.parse::<u32>() {
                Ok(days) => retention.set(kind, Some(days)),
                Err(_) => errors.push(
                    &format!("retention.{}", kind.as_str()),
                    "not_a_number",
                    format!(
                        "{}: a whole number of days, 1 to {MAX_RETENTION_DAYS}, or empty to keep it forever",
                        kind_label(kind)
                    ),
                ),
            }
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(PrivacyPolicy {
            retention,
            clear_properties: self
                .clear_properties
                .split(['\n', ','])
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect(),
            personal_properties: Vec::new(),
        })
    }
}

/// `POST /settings/privacy`: saves the policy and answers with the page listing the changes.
pub(super) async fn save(
    caller: SignedIn,
    State(state): State<AppState>,
    Form(form): Form<PrivacyForm>,
) -> Result<Response, PageError> {
    // The settings page's role rule (owners and admins), before anything is stored.
    Shell::for_page(&caller, settings::PATH)?;
    let account_id = caller.member().account_id;
    let stored = match form.policy() {
        Ok(policy) => store_policy(&state, account_id, &caller.actor(&state), &policy).await,
        Err(error) => Err(error),
    };
    match stored {
        Ok(changes) => {
            let mut section = PrivacySection::load(&state, account_id).await?;
            section.changes = Some(changes);
            settings::page_with_privacy(&state, &caller, StatusCode::OK, None, section).await
        }
        Err(error) => settings::refused(&state, &caller, error).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(chat: &str, properties: &str) -> PrivacyForm {
        PrivacyForm {
            chat: chat.into(),
            ip_hashes: " 30 ".into(),
            sessions: String::new(),
            custom_events: String::new(),
            anticheat_flags: String::new(),
            clear_properties: properties.into(),
        }
    }

    #[test]
    fn empty_fields_keep_forever_and_names_split_by_line() -> Result<(), ApiError> {
        let policy = form("", "item\n price ,\n\n").policy()?;
        assert_eq!(policy.retention.chat, None);
        assert_eq!(policy.retention.ip_hashes, Some(30));
        assert_eq!(policy.clear_properties, ["item", "price"]);
        Ok(())
    }

    #[test]
    fn a_word_for_days_is_refused() {
        assert!(form("ninety", "").policy().is_err());
        assert!(form("-1", "").policy().is_err());
    }
}
