//! When a failed delivery is tried again: exponential backoff with jitter, and a receiver's own
//! `Retry-After`.

use chrono::{DateTime, Utc};
use rand::Rng;
use std::time::Duration;

/// The jitter's half-width: each wait is its nominal value times a factor in [0.8, 1.2], so
/// the retries of many deliveries that failed together (a receiver outage) spread out instead
/// of arriving at the receiver in one burst when it comes back.
pub(crate) const JITTER: f64 = 0.2;

/// The longest `Retry-After` honoured: past this a receiver is not asking for a pause but for
/// silence, and the delivery's `give_up_at` decides instead.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(7 * 24 * 3600);

/// The nominal wait after failed attempt number `attempt` (1 for the first):
/// `min(base * 2^(attempt-1), max)`, then scaled by `jitter` (a factor near 1, see [`jitter`]).
pub(crate) fn backoff(attempt: i32, base: Duration, max: Duration, jitter: f64) -> Duration {
    // Past 2^31 times any base the cap has long won; clamping the exponent avoids overflow.
    let exponent = attempt.saturating_sub(1).clamp(0, 31) as u32;
    let nominal = base.saturating_mul(1u32 << exponent).min(max);
    nominal.mul_f64(jitter.clamp(1.0 - JITTER, 1.0 + JITTER))
}

/// A random jitter factor in [1 - JITTER, 1 + JITTER].
pub(crate) fn jitter() -> f64 {
    rand::rng().random_range((1.0 - JITTER)..=(1.0 + JITTER))
}

/// A `Retry-After` header value (delay-seconds or an HTTP date, RFC 9110 section 10.2.3) as a
/// wait from `now`; `None` when it says nothing usable.
pub(crate) fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = DateTime::parse_from_rfc2822(value)
            .ok()?
            .with_timezone(&Utc);
        (at - now).to_std().unwrap_or(Duration::ZERO)
    };
    Some(wait.min(RETRY_AFTER_MAX))
}

/// Discord's `retry_after` (seconds, fractional) from a 429 response body.
pub(crate) fn parse_discord_retry_after(body: &[u8]) -> Option<Duration> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let seconds = value.get("retry_after")?.as_f64()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds).min(RETRY_AFTER_MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_secs(5);
    const MAX: Duration = Duration::from_secs(3600);

    #[test]
    fn the_wait_doubles_up_to_the_cap() {
        let waits: Vec<u64> = (1..=12)
            .map(|attempt| backoff(attempt, BASE, MAX, 1.0).as_secs())
            .collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
        );
        // Huge or nonsense attempt numbers neither overflow nor go under the base.
        assert_eq!(backoff(i32::MAX, BASE, MAX, 1.0), MAX);
        assert_eq!(backoff(0, BASE, MAX, 1.0), BASE);
        assert_eq!(backoff(-3, BASE, MAX, 1.0), BASE);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let mut seen_low = false;
        let mut seen_high = false;
        for _ in 0..10_000 {
            let factor = jitter();
            assert!((0.8..=1.2).contains(&factor), "{factor}");
            seen_low |= factor < 0.9;
            seen_high |= factor > 1.1;
            for attempt in [1, 4, 20] {
                let nominal = backoff(attempt, BASE, MAX, 1.0).as_secs_f64();
                let wait = backoff(attempt, BASE, MAX, factor).as_secs_f64();
                assert!(
                    wait >= nominal * 0.8 - 1e-9 && wait <= nominal * 1.2 + 1e-9,
                    "{wait} vs {nominal}"
                );
            }
        }
        // The factor really spreads (a constant 1.0 would pass the bounds above).
        assert!(seen_low && seen_high);
        // A factor out of range is clamped rather than trusted.
        assert_eq!(backoff(1, BASE, MAX, 5.0), BASE.mul_f64(1.2));
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        let now = DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("a valid time");
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Tue, 24 Nov 2026 10:01:30 GMT", now),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            parse_retry_after("Tue, 24 Nov 2026 09:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(parse_retry_after("99999999999", now), Some(RETRY_AFTER_MAX));
    }

    #[test]
    fn discord_retry_after_is_fractional_seconds() {
        assert_eq!(
            parse_discord_retry_after(
                br#"{"message":"You are being rate limited.","retry_after":0.5,"global":false}"#
            ),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_discord_retry_after(b"{}"), None);
        assert_eq!(parse_discord_retry_after(b"not json"), None);
        assert_eq!(parse_discord_retry_after(br#"{"retry_after":-1}"#), None);
    }
}
