//! The quota of a member's data reads: the Events page's list, rows, live stream, the
//! Funnels page's computation and the Trends page's count against the dashboard quota (`Quota::Dashboard`, 60 a
//! minute), per member, as a dashboard key's reads do per key. Other pages are not counted:
//! they read small read models, while an events search or a funnel can scan a lot.
//!
//! Checked first in each of those handlers, after the session gate, so the order is the API's
//! (who you are, then how much, then what you asked); a refusal is the 429 page with
//! `Retry-After`.

use super::error::PageError;
use super::gate::SignedIn;
use crate::state::AppState;
use shared::rate_limit::Quota;

/// Counts one read of `caller` (the member); `Err` is the 429 page.
pub async fn spend(state: &AppState, caller: &SignedIn) -> Result<(), PageError> {
    let client = format!("member-{}", caller.member().id);
    let decision = state.limiter.check(Quota::Dashboard, &client).await;
    if decision.allowed {
        Ok(())
    } else {
        Err(PageError::Throttled(decision.retry_after_secs.unwrap_or(1)))
    }
}
