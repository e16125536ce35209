//! `/staff`: every staff member with their group, online or offline, their current session's
//! length and server; and a leaderboard over 7 or 30 days (`?days=7|30`) of punishments issued
//! and time online. The data is [`staff_on_duty`] and [`staff_leaderboard`], as the JSON API's.

use super::display;
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, params, render};
use crate::queries::staff_board::LEADERBOARD_DAYS;
use crate::queries::{LeaderboardEntry, StaffOnDuty, staff_leaderboard, staff_on_duty};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use chrono::Utc;

const PATH: &str = "/staff";

/// The staff page.
#[derive(Template)]
#[template(path = "staff.html")]
struct StaffPage {
    shell: Shell,
    staff: Vec<StaffOnDuty>,
    online: usize,
    /// The leaderboard's window, in days.
    days: u32,
    /// The windows to switch to, with whether each is the one shown.
    windows: Vec<(u32, bool)>,
    board: Vec<LeaderboardEntry>,
}

impl StaffPage {
    fn length(&self, seconds: &i64) -> String {
        display::duration(*seconds)
    }
}

/// `/staff`.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(staff))
}

async fn staff(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let days = params::value(query.as_deref(), "days")
        .and_then(|d| d.parse::<u32>().ok())
        .filter(|d| LEADERBOARD_DAYS.contains(d))
        .unwrap_or(LEADERBOARD_DAYS[0]);
    let account = caller.member().account_id;
    let staff = staff_on_duty(&state.reads, account, Utc::now()).await?;
    let board = staff_leaderboard(&state.reads, account, days).await?;
    render(&StaffPage {
        shell,
        online: staff.iter().filter(|s| s.member.is_online).count(),
        staff,
        days,
        windows: LEADERBOARD_DAYS.map(|d| (d, d == days)).to_vec(),
        board,
    })
}
