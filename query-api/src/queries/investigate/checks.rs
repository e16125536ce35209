//! A player's anti-cheat flags grouped by check, each with its count per day over the last
//! [`TREND_DAYS`] days (UTC), the trend the page draws as small bars.

use super::{Bounded, SECTION_ITEMS};
use chrono::{DateTime, Duration, DurationRound, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// Days in a check's trend, today included.
pub const TREND_DAYS: usize = 14;

/// One check's flags against the player.
#[derive(Debug)]
pub struct CheckTrend {
    /// The check (e.g. "Reach").
    pub check_name: String,
    /// Flags from it, all time.
    pub total: i64,
    /// The highest violation level it reported.
    pub max_violation_level: f64,
    /// Its latest flag.
    pub last_flagged_at: DateTime<Utc>,
    /// Flags per UTC day, oldest first; the last is today.
    pub per_day: [i64; TREND_DAYS],
}

impl CheckTrend {
    /// Flags over the trend's days.
    pub fn recent(&self) -> i64 {
        self.per_day.iter().sum()
    }
}

/// The player's checks, most flagged first, as of `now`.
pub async fn by_check(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
    now: DateTime<Utc>,
) -> Result<Bounded<CheckTrend>, sqlx::Error> {
    // One range of anticheat_flags_player_time_idx each: totals over the player's flags,
    // then the trend over their last 14 days only.
    let totals: Vec<(String, i64, f64, DateTime<Utc>, i64)> = sqlx::query_as(
        "SELECT check_name, count(*) AS total, max(violation_level), max(flagged_at), \
           count(*) OVER () FROM anticheat_flags WHERE account_id = $1 AND player_uuid = $2 \
         GROUP BY check_name ORDER BY total DESC, check_name LIMIT $3",
    )
    .bind(account)
    .bind(player)
    .bind(i64::try_from(SECTION_ITEMS).unwrap_or(10))
    .fetch_all(pool)
    .await?;
    let from = trend_start(now);
    let names: Vec<&str> = totals.iter().map(|row| row.0.as_str()).collect();
    let days: Vec<(String, i32, i64)> = sqlx::query_as(
        "SELECT check_name, floor(extract(epoch FROM flagged_at - $3) / 86400)::int4 AS day, \
           count(*) FROM anticheat_flags \
         WHERE account_id = $1 AND player_uuid = $2 AND flagged_at >= $3 \
           AND check_name = ANY($4) GROUP BY 1, 2",
    )
    .bind(account)
    .bind(player)
    .bind(from)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    let checks = totals.first().map_or(0, |row| row.4);
    let items = totals
        .into_iter()
        .map(
            |(check_name, total, max_violation_level, last_flagged_at, _)| {
                let mut per_day = [0; TREND_DAYS];
                for (_, day, count) in days.iter().filter(|d| d.0 == check_name) {
                    // A flag dated in the future (a plugin's clock) counts as today.
                    let index = usize::try_from(*day).unwrap_or(0).min(TREND_DAYS - 1);
                    per_day[index] += count;
                }
                CheckTrend {
                    check_name,
                    total,
                    max_violation_level,
                    last_flagged_at,
                    per_day,
                }
            },
        )
        .collect();
    Ok(Bounded::new(items, SECTION_ITEMS, checks))
}

/// Midnight (UTC) starting the first day of the trend.
pub fn trend_start(now: DateTime<Utc>) -> DateTime<Utc> {
    let today = now.duration_trunc(Duration::days(1)).unwrap_or(now);
    today - Duration::days(i64::try_from(TREND_DAYS).unwrap_or(14) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trend_starts_at_midnight_thirteen_days_before_today() {
        let now: DateTime<Utc> = "2025-03-15T10:17:00Z".parse().expect("time");
        let start: DateTime<Utc> = "2025-03-02T00:00:00Z".parse().expect("time");
        assert_eq!(trend_start(now), start);
    }
}
