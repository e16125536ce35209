//! Everything the Investigate page (`/players/{uuid}`) shows about one player, each section
//! bounded: the latest few items and how many there are in all. The profile, punishments and
//! alts come from the same functions as `GET /api/players/{uuid}`, `.../punishments` and
//! `.../alts`; what only the page shows (names over time, rank history, flags by check, chat
//! around a moment) is read here.

pub mod chat;
pub mod checks;
pub mod history;

pub use chat::{CHAT_AROUND, ChatRequest, ChatWindow};
pub use checks::{CheckTrend, TREND_DAYS};
pub use history::{PastName, RankChangeItem};

use crate::routes::account_reads::alts::{self, Alt};
use crate::routes::players::{Join, PlayerProfile, RECENT_ITEMS, profile};
use crate::routes::punishments::PunishmentItem;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// Items shown per section (chat has its own window, [`CHAT_AROUND`] each side): as many as
/// the profile's recent punishments.
pub const SECTION_ITEMS: usize = RECENT_ITEMS as usize;
/// Sessions shown.
pub const SESSION_ITEMS: usize = 15;
/// Alts shown (the API lists up to [`alts::MAX_ALTS`]).
pub const ALT_ITEMS: usize = 20;
/// Counts stop here ("10000+"): a count never reads more than this many index entries.
pub const COUNT_CAP: i64 = 10_000;

/// The latest items of a section and how many there are in all.
#[derive(Debug)]
pub struct Bounded<T> {
    /// Newest first (chat: in the order said).
    pub items: Vec<T>,
    /// How many there are, up to `cap`.
    pub total: i64,
    /// Where counting stops.
    pub cap: i64,
}

impl<T> Bounded<T> {
    /// `items` cut to `keep`, out of `total` (counted up to [`COUNT_CAP`]).
    fn new(items: Vec<T>, keep: usize, total: i64) -> Bounded<T> {
        Bounded::capped(items, keep, total, COUNT_CAP)
    }

    /// `items` cut to `keep`, out of `total` (counted up to `cap`).
    fn capped(mut items: Vec<T>, keep: usize, total: i64, cap: i64) -> Bounded<T> {
        items.truncate(keep);
        let total = total.max(i64::try_from(items.len()).unwrap_or(i64::MAX));
        Bounded { items, total, cap }
    }

    /// How many are not shown.
    pub fn rest(&self) -> i64 {
        self.total - i64::try_from(self.items.len()).unwrap_or(i64::MAX)
    }

    /// The total as people read it (`10000+` at the cap).
    pub fn total_text(&self) -> String {
        if self.total >= self.cap {
            format!("{}+", self.cap)
        } else {
            self.total.to_string()
        }
    }
}

/// One player, everything about them.
#[derive(Debug)]
pub struct Investigation {
    /// Identity, rank now, linked account, playtime, online status.
    pub profile: PlayerProfile,
    /// Every name they have been seen with, latest first.
    pub names: Bounded<PastName>,
    /// Their rank changes, newest first.
    pub ranks: Bounded<RankChangeItem>,
    /// Their sessions, newest first.
    pub sessions: Bounded<Join>,
    /// Punishments issued to them, newest first, with revokes.
    pub punishments: Bounded<PunishmentItem>,
    /// Their anti-cheat flags by check, most flagged first, each with a daily trend.
    pub checks: Bounded<CheckTrend>,
    /// Their chat, latest or around a moment; `None` when withheld from the caller's role.
    pub chat: Option<ChatWindow>,
    /// Players who joined from one of their IPs, most recently shared first.
    pub alts: Bounded<Alt>,
}

impl Investigation {
    /// The alts banned now (the page's warning).
    pub fn banned_alts(&self) -> impl Iterator<Item = &Alt> {
        self.alts.items.iter().filter(|alt| alt.is_banned)
    }
}

/// Everything about `player` in `account`, with the chat `chat` asks for (none when
/// withheld), as of `now`; `None` when the account has never seen them.
pub async fn investigate(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    chat: ChatRequest,
    now: DateTime<Utc>,
) -> Result<Option<Investigation>, sqlx::Error> {
    let Some(mut found) = profile(pool, account, player).await? else {
        return Ok(None);
    };
    let (names, ranks, session_total, punishment_total) = tokio::try_join!(
        history::names(pool, account, player),
        history::rank_changes(pool, account, player),
        history::count(pool, "sessions", account, player),
        history::count(pool, "punishments", account, player),
    )?;
    let (checks, chat, alt_list) = tokio::try_join!(
        checks::by_check(pool, account, player, now),
        chat.read(pool, account, player),
        alts::fetch(pool, account, player),
    )?;
    let alt_total = i64::try_from(alt_list.len()).unwrap_or(i64::MAX);
    // The profile carries the newest sessions and punishments already.
    let joins = std::mem::take(&mut found.joins);
    let punished = std::mem::take(&mut found.recent_punishments);
    Ok(Some(Investigation {
        names,
        ranks,
        sessions: Bounded::new(joins, SESSION_ITEMS, session_total),
        punishments: Bounded::new(punished, SECTION_ITEMS, punishment_total),
        checks,
        chat,
        // Banned alts first: the ones a moderator must not miss.
        alts: Bounded::capped(banned_first(alt_list), ALT_ITEMS, alt_total, alts::MAX_ALTS),
        profile: found,
    }))
}

/// Alts banned now first, each group in its own order.
fn banned_first(mut list: Vec<Alt>) -> Vec<Alt> {
    list.sort_by_key(|alt| !alt.is_banned);
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_shows_its_latest_items_and_counts_the_rest_up_to_its_cap() {
        let section = Bounded::new((0..15).collect::<Vec<i32>>(), 10, 42);
        assert_eq!((section.items.len(), section.rest()), (10, 32));
        assert_eq!(section.total_text(), "42");
        let capped = Bounded::new(vec![1, 2], 10, COUNT_CAP);
        assert_eq!(capped.total_text(), "10000+");
        // A count read before a newer item arrived never says fewer than are shown.
        let late = Bounded::new(vec![1, 2, 3], 10, 2);
        assert_eq!((late.total, late.rest()), (3, 0));
        let alts = Bounded::capped(vec![1; 200], ALT_ITEMS, 200, 200);
        assert_eq!((alts.rest(), alts.total_text()), (180, "200+".to_owned()));
    }
}
