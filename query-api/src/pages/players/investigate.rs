//! `/players/{uuid}`: one player's Investigate page (moderators and up). Everything side by
//! side, each section bounded: names over time, first and last seen, rank and rank history,
//! the linked account, playtime, sessions with their servers, punishments with their revokes,
//! anti-cheat flags by check with a 14-day trend, chat (the latest, or around a moment with
//! `?chat_at=`; admins and owners only), notes, and alts with whether each is banned or muted
//! now.
//!
//! Chat logs are [`Area::ChatLogs`]: for a moderator the chat is never read, the section says
//! who may see it, and `?chat_at=` is ignored (not even parsed: the parameter is not theirs).
//!
//! The data is [`crate::queries::investigate`]; the notes section is rendered by
//! [`crate::pages::notes::player_section`] and embedded as it comes (already escaped).

use super::super::error::PageError;
use super::super::gate::{PageRoutes, SignedIn};
use super::super::{Shell, display, notes, params, punish, render};
use crate::error::ApiError;
use crate::queries::investigate::{ChatRequest, Investigation, TREND_DAYS, investigate};
use crate::routes::account_reads::alts::Alt;
use crate::routes::history::player_not_found;
use crate::routes::servers::server_statuses;
use crate::state::AppState;
use crate::team::roles::{Area, Role};
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use axum::routing::get;
use chrono::{DateTime, NaiveDateTime, Utc};
use shared::problem::Problem;
use std::collections::HashMap;
use uuid::Uuid;

/// The page in the navigation bar it belongs to (and whose area it needs).
const SECTION: &str = "/players";
/// What the page calls a player whose name was erased.
const ERASED_PLAYER: &str = "erased player";

/// The Investigate page.
#[derive(Template)]
#[template(path = "player.html")]
struct InvestigatePage {
    shell: Shell,
    /// What the page says about the player.
    player: Investigation,
    /// The player's name, or a short form of their UUID.
    name: String,
    /// The account's servers' names, by id (for chat lines).
    servers: HashMap<Uuid, String>,
    /// The notes section, rendered by the notes module (escaped there).
    notes_html: String,
    /// The Punish section (moderators and up), rendered by the punish module (escaped there).
    punish_html: String,
    /// The jump-to-a-time field's value (`YYYY-MM-DDTHH:MM`).
    chat_at_value: String,
    /// When the player was erased, if they were (from the profile).
    erased_at: Option<DateTime<Utc>>,
}

impl InvestigatePage {
    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    /// To the second, for chat lines.
    fn stamp(&self, at: &DateTime<Utc>) -> String {
        at.format("%Y-%m-%d %H:%M:%S").to_string()
    }

    /// Whether the member may download the player's data (`/players/{uuid}/export`).
    fn may_export(&self) -> bool {
        super::export::may_export(self.shell.role)
    }

    /// Whether the member may erase the player (`/players/{uuid}/erase`).
    fn may_erase(&self) -> bool {
        super::erase::may_erase(self.shell.role)
    }

    /// The alts banned now.
    fn banned(&self) -> Vec<&Alt> {
        self.player.banned_alts().collect()
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }

    fn length(&self, seconds: &i64) -> String {
        display::duration(*seconds)
    }

    /// A session's length (up to now while open).
    fn session_length(&self, joined: &DateTime<Utc>, left: &Option<DateTime<Utc>>) -> String {
        let end = left.unwrap_or_else(Utc::now);
        display::duration((end - *joined).num_seconds())
    }

    /// A server's name as pages write it.
    fn server(&self, id: &Uuid) -> String {
        self.servers
            .get(id)
            .cloned()
            .unwrap_or_else(|| display::server_name(None, id))
    }

    /// A name that may be missing: the name, else a short form of the UUID.
    fn who(&self, name: &Option<String>, uuid: &Uuid) -> String {
        name.clone().unwrap_or_else(|| short(uuid))
    }

    /// The bars of a check's trend as (x, y, height) in a 14 x 20 box (heights scaled to the
    /// busiest day; a day with a flag gets at least one unit).
    fn bars(&self, per_day: &[i64; TREND_DAYS]) -> Vec<(usize, i64, i64)> {
        let peak = per_day.iter().copied().max().unwrap_or(0).max(1);
        per_day
            .iter()
            .enumerate()
            .map(|(day, count)| {
                let height = if *count == 0 {
                    0
                } else {
                    (count * 20 / peak).max(1)
                };
                (day * 6, 20 - height, height)
            })
            .collect()
    }

    /// The trend in words, oldest day first (the bars' text alternative).
    fn trend_text(&self, per_day: &[i64; TREND_DAYS]) -> String {
        let days: Vec<String> = per_day.iter().map(i64::to_string).collect();
        format!(
            "Flags per day over the last {TREND_DAYS} days, oldest first: {}",
            days.join(", ")
        )
    }
}

/// A short form of a UUID for a player without a name.
fn short(uuid: &Uuid) -> String {
    format!("Player {}", &uuid.simple().to_string()[..8])
}

/// `/players/{uuid}`.
pub fn router() -> PageRoutes {
    Router::new().route("/players/{uuid}", get(investigate_page))
}

async fn investigate_page(
    caller: SignedIn,
    State(state): State<AppState>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, SECTION)?;
    // Read from the URI, not axum's `Path`: any text here gets this page's 400, never a
    // plain-text rejection.
    let raw = uri.path().strip_prefix("/players/").unwrap_or_default();
    let player = Uuid::parse_str(raw).map_err(|_| {
        bad_request(
            "invalid_uuid",
            "Not a player UUID",
            "The address must end in a player's UUID, such as \
             /players/069a79f4-44e9-4726-a5be-fca90e38aaf5. Find a player on the Players page.",
        )
    })?;
    let chat = chat_request(caller.member().role, query.as_deref())?;
    let account = caller.member().account_id;
    let found = investigate(&state.reads, account, player, chat, Utc::now())
        .await?
        .ok_or_else(|| PageError::Api(player_not_found(player)))?;
    let servers = server_statuses(&state.reads, account)
        .await?
        .into_iter()
        .map(|s| (s.id, display::server_name(s.name.as_deref(), &s.id)))
        .collect();
    let notes_html = notes::player_section(&state, &caller, player).await?;
    let punish_html = punish::player_section(&state, &caller, player).await?;
    let erased_at = found.profile.erased_at;
    render(&InvestigatePage {
        shell,
        // An erased player has no name left: say so rather than show a bare UUID.
        name: match (&found.profile.username, erased_at) {
            (Some(name), _) => name.clone(),
            (None, Some(_)) => ERASED_PLAYER.to_owned(),
            (None, None) => short(&player),
        },
        erased_at,
        chat_at_value: match chat {
            ChatRequest::Around(at) => at.format("%Y-%m-%dT%H:%M").to_string(),
            ChatRequest::Latest | ChatRequest::Withheld => String::new(),
        },
        player: found,
        servers,
        notes_html,
        punish_html,
    })
}

/// The chat `role` may see: none below [`Area::ChatLogs`] (whatever `?chat_at=` says), else
/// the lines around `?chat_at=` or the latest.
fn chat_request(role: Role, query: Option<&str>) -> Result<ChatRequest, PageError> {
    if !role.allows(Area::ChatLogs) {
        return Ok(ChatRequest::Withheld);
    }
    Ok(match params::value(query, "chat_at") {
        Some(text) if !text.trim().is_empty() => ChatRequest::Around(parse_moment(text.trim())?),
        _ => ChatRequest::Latest,
    })
}

/// A 400 page with a stable code.
fn bad_request(code: &str, title: &str, detail: &str) -> PageError {
    PageError::Api(ApiError::unreadable(Problem::new(
        StatusCode::BAD_REQUEST,
        code,
        title,
        detail.to_owned(),
    )))
}

/// The moment of `?chat_at=`: what a `datetime-local` field sends (`2025-03-01T10:17`, with
/// or without seconds), read as UTC like every time on the pages, or an RFC 3339 time.
fn parse_moment(text: &str) -> Result<DateTime<Utc>, PageError> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
        .map(|at| at.and_utc())
        .ok_or_else(|| {
            bad_request(
                "invalid_time",
                "Not a time",
                "The chat time must be a date and time (UTC), such as 2025-03-01T10:17.",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_moments_are_read_as_utc_in_the_forms_browsers_send() {
        let at: DateTime<Utc> = "2025-03-01T10:17:00Z".parse().expect("time");
        for text in [
            "2025-03-01T10:17",
            "2025-03-01T10:17:00",
            "2025-03-01 10:17",
            "2025-03-01T11:17:00+01:00",
        ] {
            assert_eq!(parse_moment(text).ok(), Some(at), "{text}");
        }
        for text in ["yesterday", "2025-13-01T10:17", "<script>"] {
            let Err(error) = parse_moment(text) else {
                panic!("{text} was read as a time");
            };
            assert_eq!(error.describe().0, StatusCode::BAD_REQUEST);
        }
    }

    #[test]
    fn only_admins_and_owners_get_chat_and_a_moderator_jump_is_ignored() {
        let at: DateTime<Utc> = "2025-03-01T10:17:00Z".parse().expect("time");
        let jump = Some("chat_at=2025-03-01T10%3A17");
        for role in [Role::Viewer, Role::Moderator] {
            for query in [None, jump, Some("chat_at=yesterday")] {
                let chat = chat_request(role, query).ok();
                assert_eq!(chat, Some(ChatRequest::Withheld), "{role} {query:?}");
            }
        }
        for role in [Role::Admin, Role::Owner] {
            assert_eq!(chat_request(role, None).ok(), Some(ChatRequest::Latest));
            let blank = chat_request(role, Some("chat_at=+")).ok();
            assert_eq!(blank, Some(ChatRequest::Latest), "{role}");
            let around = chat_request(role, jump).ok();
            assert_eq!(around, Some(ChatRequest::Around(at)), "{role}");
            let Err(error) = chat_request(role, Some("chat_at=yesterday")) else {
                panic!("{role} got chat for a time that is not one");
            };
            assert_eq!(error.describe().0, StatusCode::BAD_REQUEST);
        }
    }
}
