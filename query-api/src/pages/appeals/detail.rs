//! `GET /appeals/{id}`: one appeal, the punishment beside it (in force or not), the player's
//! history (their other punishments and recent anti-cheat flags, read with the same queries as
//! the API's player lists), the notes on the player (the notes section, as the Investigate page
//! embeds it) and the decision form while the appeal is open.

use super::{PATH, player_label, status_label};
use crate::pages::error::PageError;
use crate::pages::gate::SignedIn;
use crate::pages::{Shell, display, notes, render};
use crate::queries::appeals::{self, AppealRow};
use crate::routes::flags::{self, FlagItem};
use crate::routes::history::PageRequest;
use crate::routes::punishments::{self, PunishmentItem};
use crate::state::AppState;
use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The player's other punishments shown (the newest).
const HISTORY_SHOWN: i64 = 20;
/// The player's anti-cheat flags shown (the newest).
const FLAGS_SHOWN: i64 = 10;

/// The appeal page.
#[derive(Template)]
#[template(path = "appeals_detail.html")]
struct AppealPage {
    shell: Shell,
    appeal: AppealRow,
    player: String,
    /// The player's other punishments, newest first.
    others: Vec<PunishmentItem>,
    /// Their newest flags.
    flags: Vec<FlagItem>,
    /// The notes section, rendered by the notes module (escaped there).
    notes_html: String,
    /// Whether the appeal may still be decided (new or under review).
    open: bool,
    /// The id the revoke of an acceptance gets (a form sent twice is one revoke).
    action_id: Uuid,
}

impl AppealPage {
    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }

    fn status_label(&self) -> &'static str {
        status_label(&self.appeal.status)
    }

    /// The punishment's state in words: in force, revoked, expired or done.
    fn state_of(
        &self,
        kind: &str,
        active: &bool,
        revoked: &Option<DateTime<Utc>>,
        expires: &Option<DateTime<Utc>>,
    ) -> &'static str {
        if *active {
            "In force"
        } else if revoked.is_some() {
            "Revoked"
        } else if expires.is_some() || kind == "ban" || kind == "mute" {
            "Expired"
        } else {
            "Done"
        }
    }
}

pub(super) async fn page(
    caller: SignedIn,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let id = Uuid::parse_str(&id).map_err(|_| PageError::NotFound)?;
    let account = caller.member().account_id;
    let appeal = appeals::one(&state.reads, account, id)
        .await?
        .ok_or(PageError::NotFound)?;
    let player = appeal.player_uuid;
    let history = PageRequest {
        limit: HISTORY_SHOWN,
        cursor: None,
    };
    let mut others = punishments::fetch(&state.reads, account, player, &history).await?;
    others.retain(|p| p.id != appeal.punishment_id);
    others.truncate(HISTORY_SHOWN as usize);
    let recent = PageRequest {
        limit: FLAGS_SHOWN,
        cursor: None,
    };
    let mut flags = flags::fetch(&state.reads, account, player, &recent).await?;
    flags.truncate(FLAGS_SHOWN as usize);
    let notes_html = notes::player_section(&state, &caller, player).await?;
    render(&AppealPage {
        shell,
        player: player_label(&appeal),
        open: !matches!(appeal.status.as_str(), "accepted" | "denied"),
        appeal,
        others,
        flags,
        notes_html,
        action_id: Uuid::now_v7(),
    })
}
