//! A server's TPS and player-count chart over 1 h, 24 h, 7 d or 30 d: min / avg / max per
//! bucket from the projector's rollups (migration 0012), with downtime and low-TPS spells.
//!
//! | range | buckets            | read from             | spells from                |
//! |-------|--------------------|-----------------------|----------------------------|
//! | 1h    | 60 x 1 minute      | `server_minutes`      | minutes                    |
//! | 24h   | 1,440 x 1 minute   | `server_minutes`      | minutes                    |
//! | 7d    | 672 x 15 minutes   | `server_five_minutes` | minutes (kept 8 days)      |
//! | 30d   | 360 x 2 hours      | `server_hours`        | hours (whole hours only)   |
//!
//! Every query is one range scan of one server's primary key.

use super::spells::{Downtime, Liveness, LowTpsSpell, Slot, downtime, low_tps_spells};
use crate::routes::admin_settings::AccountSettings;
use crate::routes::liveness::SERVER_STATUS_CTE;
use crate::routes::servers::ServerStatus;
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

/// How far back a chart looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub enum ChartRange {
    /// The last hour, per minute.
    #[serde(rename = "1h")]
    Hour,
    /// The last 24 hours, per minute.
    #[default]
    #[serde(rename = "24h")]
    Day,
    /// The last 7 days, per 15 minutes.
    #[serde(rename = "7d")]
    Week,
    /// The last 30 days, per 2 hours.
    #[serde(rename = "30d")]
    Month,
}

/// Where a range's buckets come from.
#[derive(Debug, Clone, Copy)]
struct Source {
    table: &'static str,
    time: &'static str,
}

const MINUTES: Source = Source {
    table: "server_minutes",
    time: "minute",
};
const FIVE_MINUTES: Source = Source {
    table: "server_five_minutes",
    time: "bucket",
};
const HOURS: Source = Source {
    table: "server_hours",
    time: "hour",
};

impl ChartRange {
    /// Every range, shortest first.
    pub const ALL: [ChartRange; 4] = [Self::Hour, Self::Day, Self::Week, Self::Month];

    /// Its name in URLs: `1h`, `24h`, `7d`, `30d`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "1h",
            Self::Day => "24h",
            Self::Week => "7d",
            Self::Month => "30d",
        }
    }

    /// The range named `name` (as in [`ChartRange::as_str`]).
    pub fn parse(name: &str) -> Option<ChartRange> {
        Self::ALL.into_iter().find(|range| range.as_str() == name)
    }

    /// How far back it looks.
    pub fn span(self) -> Duration {
        match self {
            Self::Hour => Duration::hours(1),
            Self::Day => Duration::hours(24),
            Self::Week => Duration::days(7),
            Self::Month => Duration::days(30),
        }
    }

    /// How wide one bucket is.
    pub fn bucket(self) -> Duration {
        match self {
            Self::Hour | Self::Day => Duration::minutes(1),
            Self::Week => Duration::minutes(15),
            Self::Month => Duration::hours(2),
        }
    }

    /// How many buckets a chart of it has.
    pub fn buckets(self) -> usize {
        usize::try_from(self.span().num_seconds() / self.bucket().num_seconds()).unwrap_or(0)
    }

    /// The window `[from, to)` of the chart at `now`: whole buckets, the last one holding now.
    pub fn window(self, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        // Buckets divide a day (or two hours), so truncating to the bucket from the epoch
        // aligns them to UTC midnight like the rollups.
        let start_of_bucket = now.duration_trunc(self.bucket()).unwrap_or(now);
        let to = start_of_bucket + self.bucket();
        (to - self.span(), to)
    }

    /// The rollup the buckets are read from.
    fn chart_source(self) -> Source {
        match self {
            Self::Hour | Self::Day => MINUTES,
            Self::Week => FIVE_MINUTES,
            Self::Month => HOURS,
        }
    }

    /// The rollup the spells are found in, and its slot width.
    fn spell_source(self) -> (Source, Duration) {
        match self {
            Self::Month => (HOURS, Duration::hours(1)),
            _ => (MINUTES, Duration::minutes(1)),
        }
    }
}

/// Minimum, average and maximum of one measure over a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct Stats {
    /// Lowest sample.
    pub min: f64,
    /// Mean of the samples.
    pub avg: f64,
    /// Highest sample.
    pub max: f64,
}

/// One bucket of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ChartPoint {
    /// Start of the bucket (UTC).
    pub at: DateTime<Utc>,
    /// Heartbeats in it; 0 when the server sent none (then `tps` and `players` are null).
    pub samples: i64,
    /// Ticks per second.
    pub tps: Option<Stats>,
    /// Players online.
    pub players: Option<Stats>,
}

/// A server's chart over one range.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerChart {
    /// The server and its status now.
    pub server: ServerStatus,
    /// The range shown.
    pub range: ChartRange,
    /// Start of the first bucket.
    pub from: DateTime<Utc>,
    /// End of the last bucket.
    pub to: DateTime<Utc>,
    /// Width of a bucket, in seconds.
    pub bucket_seconds: i64,
    /// Every bucket of the window, oldest first ([`ChartRange::buckets`] of them).
    pub points: Vec<ChartPoint>,
    /// Times it was down, oldest first.
    pub downtime: Vec<Downtime>,
    /// Spells of low TPS, oldest first.
    pub low_tps: Vec<LowTpsSpell>,
}

/// One aggregated bucket as read.
#[derive(Debug, sqlx::FromRow)]
struct BucketRow {
    at: DateTime<Utc>,
    samples: i64,
    tps_min: f64,
    tps_avg: f64,
    tps_max: f64,
    players_min: f64,
    players_avg: f64,
    players_max: f64,
}

/// The server's status with the first heartbeat the spells need.
#[derive(Debug, sqlx::FromRow)]
struct ServerRow {
    #[sqlx(flatten)]
    status: ServerStatus,
    first_seen: DateTime<Utc>,
}

/// The chart of `server_id` over `range` as of `now`; `None` when the account has no such
/// server (another account's server included).
pub async fn server_chart(
    reads: &PgPool,
    account_id: Uuid,
    server_id: Uuid,
    range: ChartRange,
    now: DateTime<Utc>,
) -> Result<Option<ServerChart>, sqlx::Error> {
    let settings = AccountSettings::load(reads, account_id).await?;
    let Some(row) = sqlx::query_as::<_, ServerRow>(&format!(
        "WITH {SERVER_STATUS_CTE} \
         SELECT ss.id, ss.name, ss.role, ss.is_online, ss.tps, ss.player_count, ss.max_players, \
                ss.version, ss.last_heartbeat_at, s.first_seen \
         FROM server_status ss JOIN servers s ON s.account_id = $1 AND s.id = ss.id \
         WHERE ss.id = $3"
    ))
    .bind(account_id)
    .bind(settings.offline_after_seconds())
    .bind(server_id)
    .fetch_optional(reads)
    .await?
    else {
        return Ok(None);
    };
    let (from, to) = range.window(now);
    let rows = buckets(reads, account_id, server_id, range, (from, to)).await?;
    let (spell_source, width) = range.spell_source();
    let slots = slots(reads, account_id, server_id, spell_source, (from, to)).await?;
    let live = Liveness {
        first_seen: row.first_seen,
        last_heartbeat_at: row.status.last_heartbeat_at,
        is_online: row.status.is_online,
    };
    let offline_after = Duration::milliseconds((settings.offline_after_seconds() * 1000.0) as i64);
    Ok(Some(ServerChart {
        server: row.status,
        range,
        from,
        to,
        bucket_seconds: range.bucket().num_seconds(),
        points: fill(&rows, range, from),
        downtime: downtime(&slots, width, offline_after, (from, to), live),
        low_tps: low_tps_spells(&slots, width),
    }))
}

/// The buckets of the window that hold samples, aggregated from the range's rollup.
async fn buckets(
    reads: &PgPool,
    account_id: Uuid,
    server_id: Uuid,
    range: ChartRange,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<BucketRow>, sqlx::Error> {
    let Source { table, time } = range.chart_source();
    // Constants of this module are formatted in; every value is bound.
    sqlx::query_as::<_, BucketRow>(&format!(
        "SELECT date_bin(make_interval(secs => $5), {time}, $3) AS at, \
                sum(samples)::int8 AS samples, \
                min(tps_min) AS tps_min, sum(tps_sum) / sum(samples) AS tps_avg, \
                max(tps_max) AS tps_max, \
                min(player_count_min)::float8 AS players_min, \
                sum(player_count_sum)::float8 / sum(samples) AS players_avg, \
                max(player_count_max)::float8 AS players_max \
         FROM {table} \
         WHERE account_id = $1 AND server_id = $2 AND {time} >= $3 AND {time} < $4 \
         GROUP BY 1 ORDER BY 1"
    ))
    .bind(account_id)
    .bind(server_id)
    .bind(from)
    .bind(to)
    .bind(range.bucket().num_seconds() as f64)
    .fetch_all(reads)
    .await
}

/// The slots of the window that hold samples, with their average TPS.
async fn slots(
    reads: &PgPool,
    account_id: Uuid,
    server_id: Uuid,
    Source { table, time }: Source,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<Slot>, sqlx::Error> {
    let rows: Vec<(DateTime<Utc>, f64)> = sqlx::query_as(&format!(
        "SELECT {time}, tps_sum / samples FROM {table} \
         WHERE account_id = $1 AND server_id = $2 AND {time} >= $3 AND {time} < $4 \
         ORDER BY {time}"
    ))
    .bind(account_id)
    .bind(server_id)
    .bind(from)
    .bind(to)
    .fetch_all(reads)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(at, avg_tps)| Slot { at, avg_tps })
        .collect())
}

/// Every bucket of the window from `from`, with the read rows in place and empty buckets
/// between them.
fn fill(rows: &[BucketRow], range: ChartRange, from: DateTime<Utc>) -> Vec<ChartPoint> {
    let mut rows = rows.iter().peekable();
    (0..range.buckets())
        .map(|i| {
            let at = from + range.bucket() * i32::try_from(i).unwrap_or(i32::MAX);
            match rows.next_if(|row| row.at == at) {
                Some(row) => ChartPoint {
                    at,
                    samples: row.samples,
                    tps: Some(Stats {
                        min: row.tps_min,
                        avg: row.tps_avg,
                        max: row.tps_max,
                    }),
                    players: Some(Stats {
                        min: row.players_min,
                        avg: row.players_avg,
                        max: row.players_max,
                    }),
                },
                None => ChartPoint {
                    at,
                    samples: 0,
                    tps: None,
                    players: None,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_has_a_few_hundred_to_fifteen_hundred_buckets() {
        let counts: Vec<usize> = ChartRange::ALL.iter().map(|r| r.buckets()).collect();
        assert_eq!(counts, [60, 1440, 672, 360]);
        for range in ChartRange::ALL {
            assert_eq!(ChartRange::parse(range.as_str()), Some(range));
        }
        assert_eq!(ChartRange::parse("2h"), None);
    }

    #[test]
    fn the_window_ends_with_the_bucket_holding_now() {
        let now: DateTime<Utc> = "2025-03-01T10:17:42Z".parse().expect("time");
        let (from, to) = ChartRange::Day.window(now);
        assert_eq!(
            to,
            "2025-03-01T10:18:00Z"
                .parse::<DateTime<Utc>>()
                .expect("time")
        );
        assert_eq!(to - from, Duration::hours(24));
        let (from, to) = ChartRange::Month.window(now);
        assert_eq!(
            to,
            "2025-03-01T12:00:00Z"
                .parse::<DateTime<Utc>>()
                .expect("time")
        );
        assert_eq!(
            from,
            "2025-01-30T12:00:00Z"
                .parse::<DateTime<Utc>>()
                .expect("time")
        );
        let (_, to) = ChartRange::Week.window(now);
        assert_eq!(
            to,
            "2025-03-01T10:30:00Z"
                .parse::<DateTime<Utc>>()
                .expect("time")
        );
    }
}
