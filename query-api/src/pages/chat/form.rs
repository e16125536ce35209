//! The `/chat` page's query string: what its filter form sends (`server`, `player`, `channel`,
//! `type`, `from`, `to`, `q`, `view`, and `cursor` for older pages), turned into the chat API's
//! filter ([`ChatFilter`]) so the page, its rows and its CSV export read exactly what
//! `GET /api/chat` would. A player may be given by UUID or by name (any name they were seen
//! with, [`PlayerRef`]); the staff-commands view narrows to the commands of the staff roster.

use crate::error::ApiError;
use crate::pages::events::as_rfc3339;
use crate::routes::account_reads::chat::{ChatFilter, entry_type};
use crate::routes::account_reads::params::{self, ListParams, PlayerRef, players_named};
use crate::routes::staff::staff_roster;
use serde_json::{Map, Value};
use shared::validation::FieldErrors;
use sqlx::PgPool;
use uuid::Uuid;

/// Rows per page.
pub const PAGE_SIZE: i64 = 50;

/// Which list the page shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum View {
    /// Every chat line and command.
    #[default]
    All,
    /// Commands run by staff members (the roster of the Staff page).
    StaffCommands,
}

/// The filter form as sent, kept to fill the form again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatForm {
    /// A server id (the form's select).
    pub server: String,
    /// A player UUID or name.
    pub player: String,
    /// A channel, exact.
    pub channel: String,
    /// `chat`, `command` or empty (both).
    pub kind: String,
    /// `datetime-local` (read as UTC) or RFC 3339.
    pub from: String,
    /// See `from`.
    pub to: String,
    /// A keyword.
    pub q: String,
    /// The list shown.
    pub view: View,
    /// An older page's cursor.
    pub cursor: Option<String>,
}

impl ChatForm {
    /// Reads a raw query string; unknown parameters are ignored, a malformed string is empty.
    pub fn parse(query: &str) -> ChatForm {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
        let mut form = ChatForm::default();
        for (key, value) in pairs {
            let value = value.trim().to_owned();
            match key.as_str() {
                "server" => form.server = value,
                "player" => form.player = value,
                "channel" => form.channel = value,
                "type" => form.kind = value,
                "from" => form.from = value,
                "to" => form.to = value,
                "q" => form.q = value,
                "view" if value == "staff_commands" => form.view = View::StaffCommands,
                "cursor" if !value.is_empty() => form.cursor = Some(value),
                _ => {}
            }
        }
        form
    }

    /// Whether this is the staff-commands view.
    pub fn staff_commands(&self) -> bool {
        self.view == View::StaffCommands
    }

    /// The form's own pairs (no cursor), non-empty ones only, in form order.
    pub fn pairs(&self) -> Vec<(&'static str, &str)> {
        let mut pairs: Vec<(&'static str, &str)> = [
            ("server", &self.server),
            ("player", &self.player),
            ("channel", &self.channel),
            ("type", &self.kind),
            ("from", &self.from),
            ("to", &self.to),
            ("q", &self.q),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        // The staff view is commands whatever `type` says; its links and audit entry omit it.
        .filter(|(key, _)| !(*key == "type" && self.staff_commands()))
        .map(|(key, value)| (key, value.as_str()))
        .collect();
        if self.staff_commands() {
            pairs.push(("view", "staff_commands"));
        }
        pairs
    }

    /// The form's query string (no cursor): the page's address and the export's.
    pub fn query(&self) -> String {
        serde_urlencoded::to_string(self.pairs()).unwrap_or_default()
    }

    /// The query with `cursor` added (an older page's address).
    pub fn query_with_cursor(&self, cursor: &str) -> String {
        let mut pairs = self.pairs();
        pairs.push(("cursor", cursor));
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }

    /// The filter as the audit log keeps it: the fields given, by name.
    pub fn audit_detail(&self) -> Value {
        let map: Map<String, Value> = self
            .pairs()
            .into_iter()
            .map(|(key, value)| (key.to_owned(), Value::String(value.to_owned())))
            .collect();
        Value::Object(map)
    }

    /// The chat API's filter and paging for this form; 422 field errors (with the page's
    /// names for the fields) for values it refuses, as the API would.
    pub async fn filter(
        &self,
        reads: &PgPool,
        account_id: Uuid,
    ) -> Result<(ListParams, ChatFilter), ApiError> {
        let mut errors = FieldErrors::new();
        let mut paging = vec![("limit", PAGE_SIZE.to_string())];
        for (key, value) in [("from", &self.from), ("to", &self.to)] {
            if !value.is_empty() {
                paging.push((key, as_rfc3339(value)));
            }
        }
        if let Some(cursor) = &self.cursor {
            paging.push(("cursor", cursor.clone()));
        }
        let paging = serde_urlencoded::to_string(paging).unwrap_or_default();
        let list = ListParams::parse(Some(&paging), &mut errors)?;
        let mut filter = ChatFilter::default();
        if let Some(server) = given(&self.server) {
            filter.server = params::uuid(&mut errors, "server", server);
        }
        if let Some(channel) = given(&self.channel) {
            filter.channel = params::text(&mut errors, "channel", channel);
        }
        if let Some(kind) = given(&self.kind) {
            filter.entry_type = entry_type(&mut errors, "type", kind);
        }
        if let Some(q) = given(&self.q) {
            filter.keyword = params::text(&mut errors, "q", q);
        }
        if let Some(player) = given(&self.player) {
            filter.players = match PlayerRef::parse(&mut errors, "player", player) {
                Some(PlayerRef::Uuid(uuid)) => Some(vec![uuid]),
                Some(PlayerRef::Name(name)) => {
                    let found = players_named(reads, account_id, &name).await?;
                    if found.is_empty() {
                        errors.push(
                            "player",
                            "unknown_player",
                            format!("no player of this account was ever named {name}"),
                        );
                    }
                    Some(found)
                }
                None => None,
            };
        }
        errors
            .into_result()
            .map_err(|errors| ApiError::invalid(errors.into_iter().map(labelled).collect()))?;
        if self.staff_commands() {
            let staff: Vec<Uuid> = staff_roster(reads, account_id)
                .await?
                .into_iter()
                .map(|member| member.uuid)
                .collect();
            filter.players = Some(match filter.players {
                Some(players) => players.into_iter().filter(|p| staff.contains(p)).collect(),
                None => staff,
            });
            filter.entry_type = Some("command".to_owned());
        }
        Ok((list, filter))
    }
}

/// The value, when the field was filled.
fn given(value: &str) -> Option<&str> {
    (!value.is_empty()).then_some(value)
}

/// The error with the page's name for its field.
fn labelled(mut error: shared::validation::FieldError) -> shared::validation::FieldError {
    error.field = match error.field.as_str() {
        "server" => "Server",
        "player" => "Player",
        "channel" => "Channel",
        "type" => "Type",
        "q" => "Keyword",
        "from" => "From",
        "to" => "To",
        "cursor" => "Page",
        other => other,
    }
    .to_owned();
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_round_trips_through_its_query() {
        let form = ChatForm::parse(
            "server=5e000000-0000-4000-8000-000000000001&player=Talker&type=chat\
             &q=%3Dhi&view=staff_commands&cursor=1_x&other=y&channel=",
        );
        assert_eq!(form.kind, "chat");
        assert!(form.staff_commands());
        assert_eq!(form.cursor.as_deref(), Some("1_x"));
        assert_eq!(
            form.query(),
            "server=5e000000-0000-4000-8000-000000000001&player=Talker&q=%3Dhi\
             &view=staff_commands"
        );
        let reread = ChatForm::parse(&form.query());
        assert_eq!((reread.kind.as_str(), reread.cursor.as_deref()), ("", None));
        assert_eq!(reread.query(), form.query());
        assert!(form.query_with_cursor("1_x").ends_with("&cursor=1_x"));
        assert_eq!(form.audit_detail()["q"], "=hi");
    }

    #[test]
    fn an_unknown_view_is_everything() {
        assert_eq!(ChatForm::parse("view=nope").view, View::All);
        assert_eq!(ChatForm::parse("").query(), "");
    }
}
