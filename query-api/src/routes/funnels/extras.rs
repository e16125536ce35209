//! The funnel request's optional parts: a breakdown by a property of the first step, and the
//! players who dropped off at a step. Both are opt-in: a breakdown reads each entry's
//! properties (heap fetches past the covering index), a drop-off list is a page of players.

use crate::funnel::{BreakdownSpec, DropOffSpec, Extras};
use serde::Deserialize;
use shared::validation::FieldErrors;
use utoipa::ToSchema;
use uuid::Uuid;

/// Default number of values in a breakdown before "other".
pub const DEFAULT_BREAKDOWN_LIMIT: i64 = 10;
/// Most values in a breakdown before "other".
pub const MAX_BREAKDOWN_LIMIT: i64 = 50;
/// Default page of players who dropped off.
pub const DEFAULT_DROP_OFF_LIMIT: i64 = 50;
/// Longest page of players who dropped off.
pub const MAX_DROP_OFF_LIMIT: i64 = 500;

/// Break the funnel down by one property of each player's entry (their step-1 event).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakdownRequest {
    /// A top-level key of the first step's `properties`; its value is compared as text.
    #[schema(pattern = "^[A-Za-z0-9_.:-]{1,64}$", min_length = 1, max_length = 64)]
    pub property: String,
    /// How many values get a row of their own (by players entering); the rest are `other`.
    /// 1..=50, default 10.
    #[serde(
        default = "default_breakdown_limit",
        deserialize_with = "shared::whole_number::deserialize"
    )]
    #[schema(minimum = 1, maximum = 50)]
    pub limit: i64,
}

/// List the players who reached a step but not the next one.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DropOffRequest {
    /// The step they reached last, 1-based: 1 lists players who entered but never reached
    /// step 2. At most the number of steps minus one.
    #[schema(minimum = 1, maximum = 9)]
    #[serde(deserialize_with = "shared::whole_number::deserialize")]
    pub step: i64,
    /// Players per page, 1..=500, default 50.
    #[serde(
        default = "default_drop_off_limit",
        deserialize_with = "shared::whole_number::deserialize"
    )]
    #[schema(minimum = 1, maximum = 500)]
    pub limit: i64,
    /// The previous page's `next_after`: only players with a higher id.
    #[serde(default)]
    pub after: Option<Uuid>,
}

fn default_breakdown_limit() -> i64 {
    DEFAULT_BREAKDOWN_LIMIT
}

fn default_drop_off_limit() -> i64 {
    DEFAULT_DROP_OFF_LIMIT
}

/// What is wrong with a breakdown's property key, as a field code (it goes into a COPY
/// statement as a quoted literal; the rule keeps it to plain text).
fn property_key_error(key: &str) -> Option<&'static str> {
    if !(1..=64).contains(&key.len()) {
        Some("invalid_length")
    } else if !key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
    {
        Some("invalid_characters")
    } else {
        None
    }
}

/// Checks the optional parts of a funnel of `steps` steps, recording what is wrong in `errors`.
pub(super) fn check(
    errors: &mut FieldErrors,
    steps: usize,
    breakdown: Option<BreakdownRequest>,
    dropped_off: Option<DropOffRequest>,
) -> Extras {
    let breakdown = breakdown.and_then(|request| {
        let mut fine = true;
        if let Some(code) = property_key_error(&request.property) {
            errors.push(
                "breakdown.property",
                code,
                "1 to 64 ASCII letters, digits, or _ . : -",
            );
            fine = false;
        }
        if !(1..=MAX_BREAKDOWN_LIMIT).contains(&request.limit) {
            errors.push(
                "breakdown.limit",
                "out_of_range",
                format!("must be 1 to {MAX_BREAKDOWN_LIMIT}"),
            );
            fine = false;
        }
        fine.then(|| BreakdownSpec {
            property: request.property,
            limit: usize::try_from(request.limit).unwrap_or(1),
        })
    });
    let dropped_off = dropped_off.and_then(|request| {
        let mut fine = true;
        let last = steps.saturating_sub(1).max(1);
        if !(1..=9).contains(&request.step)
            || usize::try_from(request.step).is_ok_and(|step| step > last)
        {
            errors.push(
                "dropped_off.step",
                "out_of_range",
                format!("must be 1 to the number of steps minus one ({last})"),
            );
            fine = false;
        }
        if !(1..=MAX_DROP_OFF_LIMIT).contains(&request.limit) {
            errors.push(
                "dropped_off.limit",
                "out_of_range",
                format!("must be 1 to {MAX_DROP_OFF_LIMIT}"),
            );
            fine = false;
        }
        fine.then(|| DropOffSpec {
            step: usize::try_from(request.step).unwrap_or(1),
            limit: usize::try_from(request.limit).unwrap_or(1),
            after: request.after,
        })
    });
    Extras {
        breakdown,
        dropped_off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(
        steps: usize,
        breakdown: Option<BreakdownRequest>,
        dropped: Option<DropOffRequest>,
    ) -> Vec<String> {
        let mut errors = FieldErrors::new();
        check(&mut errors, steps, breakdown, dropped);
        match errors.into_result() {
            Ok(()) => Vec::new(),
            Err(found) => found
                .iter()
                .map(|e| format!("{}:{}", e.field, e.code))
                .collect(),
        }
    }

    fn breakdown(property: &str, limit: i64) -> Option<BreakdownRequest> {
        Some(BreakdownRequest {
            property: property.into(),
            limit,
        })
    }

    fn dropped(step: i64, limit: i64) -> Option<DropOffRequest> {
        Some(DropOffRequest {
            step,
            limit,
            after: None,
        })
    }

    #[test]
    fn property_keys_are_plain_text() {
        assert!(codes(2, breakdown("server.region", 10), None).is_empty());
        assert_eq!(
            codes(2, breakdown("it's", 10), None),
            ["breakdown.property:invalid_characters"]
        );
        assert_eq!(
            codes(2, breakdown("", 0), None),
            [
                "breakdown.property:invalid_length",
                "breakdown.limit:out_of_range"
            ]
        );
        assert_eq!(property_key_error(&"k".repeat(65)), Some("invalid_length"));
    }

    #[test]
    fn the_drop_off_step_is_one_before_the_last() {
        assert!(codes(3, None, dropped(2, 50)).is_empty());
        assert_eq!(
            codes(3, None, dropped(3, 50)),
            ["dropped_off.step:out_of_range"]
        );
        assert_eq!(
            codes(3, None, dropped(0, 501)),
            [
                "dropped_off.step:out_of_range",
                "dropped_off.limit:out_of_range"
            ]
        );
    }
}
