//! The example funnel a plain `GET /funnels` opens on: two of the account's event names
//! ([`steps`]), run at most once per [`FRESH`] for an account and a role. Opening the page
//! again within that time shows the same answer and costs no query and no quota; any funnel
//! the member runs themselves is computed as always.

use super::result::ResultView;
use crate::team::Visibility;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long an example's answer is shown before it is run again.
pub(super) const FRESH: Duration = Duration::from_secs(300);
/// Answers kept at most (one per account and role); older ones go first when it is full.
const MAX_KEPT: usize = 1_000;

/// Whose example: the account, and the role's view of it.
pub(super) type Key = (Uuid, Visibility);

struct Kept {
    at: Instant,
    steps: Vec<String>,
    result: ResultView,
}

static KEPT: LazyLock<Mutex<HashMap<Key, Kept>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// An example funnel from the account's names: its first custom event, then its next custom
/// event (or, with a single custom event, the first other name, e.g. `session_join`). None
/// without a custom event or a second name.
pub(super) fn steps(names: &[String]) -> Option<Vec<String>> {
    let custom = |name: &&String| shared::event_name::reserved_prefix(name).is_none();
    let first = names.iter().find(custom)?;
    let second = names
        .iter()
        .filter(|name| *name != first)
        .find(custom)
        .or_else(|| names.iter().find(|name| *name != first))?;
    Some(vec![first.clone(), second.clone()])
}

/// The answer of `steps` for `key` run less than [`FRESH`] ago, if there is one.
pub(super) fn kept(key: Key, steps: &[String]) -> Option<ResultView> {
    let kept = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    kept.get(&key)
        .filter(|k| k.steps == steps && k.at.elapsed() < FRESH)
        .map(|k| k.result.clone())
}

/// Keeps the answer of `steps` for `key`.
pub(super) fn keep(key: Key, steps: &[String], result: &ResultView) {
    let mut kept = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    kept.retain(|_, k| k.at.elapsed() < FRESH);
    if kept.len() >= MAX_KEPT
        && let Some(oldest) = kept.iter().min_by_key(|(_, k)| k.at).map(|(key, _)| *key)
    {
        kept.remove(&oldest);
    }
    kept.insert(
        key,
        Kept {
            at: Instant::now(),
            steps: steps.to_vec(),
            result: result.clone(),
        },
    );
}
