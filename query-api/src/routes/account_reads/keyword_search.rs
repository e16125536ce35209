//! A keyword search over the account's chat within a time budget.
//!
//! A keyword that is neither common (the newest lines fill a page at once) nor rare (the
//! trigram index names a handful of lines) can make one statement over all time read and
//! sort a large share of the account's chat. So a keyword search reads its range newest
//! first in windows, each its own statement: the day before the anchor (the cursor's
//! position, else `to`, else now), then back to 7, 30, 90 and 365 days, then the rest. It stops
//! when the page is full, when the range is done, or when the budget
//! (`CHAT_SEARCH_BUDGET_MS`) is spent: the first window always runs to its end; every later
//! one runs under a `statement_timeout` of what is left of the budget. A search the budget
//! stopped answers with what it found, says how far back it searched (`searched_back_to`),
//! and its `next_cursor` continues from there (unless no line of the account is older).

use super::chat::{AccountChatEntry, AccountChatPage, ChatFilter, select_chat};
use super::params::ListParams;
use crate::routes::history::HistoryCursor;
use crate::routes::paging::PageRequest;
use chrono::{DateTime, Duration as Span, Utc};
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How far back from the anchor each window reaches; `None`: to the range's start.
const WINDOWS: [Option<i64>; 6] = [Some(1), Some(7), Some(30), Some(90), Some(365), None];

/// PostgreSQL's SQLSTATE for a statement cancelled by `statement_timeout`.
const QUERY_CANCELED: &str = "57014";

/// The default of `CHAT_SEARCH_BUDGET_MS`.
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(300);

/// One page of the account's chat lines matching `filter` (whose keyword is set), newest
/// first, searched window by window within `budget`.
pub async fn search_chat(
    reads: &PgPool,
    account_id: Uuid,
    filter: &ChatFilter,
    list: &ListParams,
    budget: Duration,
) -> Result<AccountChatPage, sqlx::Error> {
    let started = Instant::now();
    let limit = usize::try_from(list.page.limit).unwrap_or(usize::MAX);
    let anchor = list
        .page
        .cursor
        .map(|c| c.at)
        .or(list.to)
        .unwrap_or_else(Utc::now);
    let mut rows: Vec<AccountChatEntry> = Vec::new();
    // The window's upper bound: the request's own first (its cursor applies to every window).
    let mut upper = list.to;
    let mut stopped_at = None;
    for (step, back) in WINDOWS.into_iter().enumerate() {
        let lower = window_start(anchor, back, list.from);
        let window = ListParams {
            page: PageRequest {
                limit: i64::try_from(limit - rows.len()).unwrap_or(i64::MAX),
                cursor: list.page.cursor,
            },
            from: lower,
            to: upper,
            rest: Vec::new(),
        };
        let timeout = if step == 0 {
            None
        } else {
            match budget.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => {
                    stopped_at = upper;
                    break;
                }
            }
        };
        match read_window(reads, account_id, filter, &window, timeout).await {
            Ok(found) => rows.extend(found),
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(QUERY_CANCELED) => {
                stopped_at = upper;
                break;
            }
            Err(other) => return Err(other),
        }
        if rows.len() > limit || lower.is_none() || lower == list.from {
            break;
        }
        upper = lower;
    }
    if rows.len() > limit {
        let (items, next_cursor) = list.page.finish(rows, |c| c.position());
        return Ok(AccountChatPage {
            items,
            next_cursor,
            searched_back_to: None,
        });
    }
    // Stopped before the account's oldest line: nothing is left to search.
    if let Some(at) = stopped_at
        && oldest_line(reads, account_id)
            .await?
            .is_none_or(|oldest| oldest >= at)
    {
        stopped_at = None;
    }
    Ok(AccountChatPage {
        items: rows,
        // Lines at `stopped_at` itself were searched: the next page starts just before it.
        next_cursor: stopped_at.map(|at| {
            HistoryCursor {
                at,
                key: Uuid::nil(),
            }
            .encode()
        }),
        searched_back_to: stopped_at,
    })
}

/// Where the window reaching `back` days before `anchor` starts: never before `from`; `None`
/// for the last window of an open range.
fn window_start(
    anchor: DateTime<Utc>,
    back: Option<i64>,
    from: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    match (back.map(|days| anchor - Span::days(days)), from) {
        (Some(start), Some(from)) => Some(start.max(from)),
        (start, from) => start.or(from),
    }
}

/// When the account's oldest chat line was sent (one step down the time index).
async fn oldest_line(
    reads: &PgPool,
    account_id: Uuid,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar("SELECT min(sent_at) FROM chat_messages WHERE account_id = $1")
        .bind(account_id)
        .fetch_one(reads)
        .await
}

/// The window's lines (at most its page's limit + 1), under `timeout` when given.
async fn read_window(
    reads: &PgPool,
    account_id: Uuid,
    filter: &ChatFilter,
    window: &ListParams,
    timeout: Option<Duration>,
) -> Result<Vec<AccountChatEntry>, sqlx::Error> {
    let mut sql = select_chat(account_id, filter, window);
    window.page.push_keyset(&mut sql, "c.sent_at", "c.id");
    let Some(timeout) = timeout else {
        return sql.build_query_as().fetch_all(reads).await;
    };
    let mut tx = reads.begin().await?;
    // SET takes no bind parameter; the value is a number of milliseconds we made.
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128);
    sqlx::query(&format!("SET LOCAL statement_timeout = {ms}"))
        .execute(&mut *tx)
        .await?;
    let rows = sql.build_query_as().fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(rows)
}
