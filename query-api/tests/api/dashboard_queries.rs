//! The dashboard's server-chart query (`query_api::queries::server_chart`) and its JSON
//! endpoint, over rows written as the projector writes them, against hand-computed expectations
//! (the Overview and staff queries are in `overview_queries`).

use crate::read_models::{Dashboard, ago, iso, now, server};
use chrono::{DateTime, Duration, DurationRound, Utc};
use query_api::queries::{ChartRange, Downtime, LowTpsSpell, Stats, server_chart};
use reqwest::StatusCode;
use sqlx::PgPool;
use uuid::Uuid;

/// A rollup row: `(samples, tps sum, tps min, tps max, players sum, players min, players max)`.
pub(crate) type Roll = (i32, f64, f64, f64, i64, i32, i32);

pub(crate) async fn rollup(
    pool: &PgPool,
    table: &str,
    (account, server): (Uuid, Uuid),
    at: DateTime<Utc>,
    r: Roll,
) -> anyhow::Result<()> {
    let (time, extra_col, extra_val) = match table {
        "server_minutes" => ("minute", "", ""),
        "server_five_minutes" => ("bucket", "", ""),
        _ => ("hour", ", online_minutes", ", 60"),
    };
    sqlx::query(&format!(
        "INSERT INTO {table} (account_id, server_id, {time}, samples{extra_col}, tps_sum, tps_min, \
           tps_max, player_count_sum, player_count_min, player_count_max) \
         VALUES ($1, $2, $3, $4{extra_val}, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(account)
    .bind(server)
    .bind(at)
    .bind(r.0)
    .bind(r.1)
    .bind(r.2)
    .bind(r.3)
    .bind(r.4)
    .bind(r.5)
    .bind(r.6)
    .execute(pool)
    .await?;
    if table == "server_five_minutes" {
        network_bucket(pool, account, at).await?;
    }
    Ok(())
}

/// Sums the five-minute bucket `at` of `account` into `network_five_minutes` as the
/// projector's servers model does after folding heartbeats into `server_five_minutes`: each
/// game server's average, summed; proxies left out.
pub(crate) async fn network_bucket(
    pool: &PgPool,
    account: Uuid,
    at: DateTime<Utc>,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO network_five_minutes (account_id, bucket, players) \
         SELECT $1, $2, sum(f.player_count_sum::float8 / f.samples) \
                FILTER (WHERE s.role IS DISTINCT FROM 'proxy') \
         FROM server_five_minutes f \
         LEFT JOIN servers s ON s.account_id = f.account_id AND s.id = f.server_id \
         WHERE f.account_id = $1 AND f.bucket = $2 \
         ON CONFLICT (account_id, bucket) DO UPDATE SET players = EXCLUDED.players",
    )
    .bind(account)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

async fn set_first_seen(pool: &PgPool, server: Uuid, at: DateTime<Utc>) -> anyhow::Result<()> {
    sqlx::query("UPDATE servers SET first_seen = $2 WHERE id = $1")
        .bind(server)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_server_chart_has_its_buckets_downtime_and_low_tps_spells() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(now, 5)).await?;
    set_first_seen(pool, lobby, now - Duration::days(40)).await?;
    let key = (account, lobby);
    let (from, to) = ChartRange::Hour.window(now);
    let minute = |m: i64| from + Duration::minutes(m);
    // Minutes 10-12 have no heartbeat (down); 20-24 average 15 TPS (a low spell).
    for m in (0..60).filter(|m| !(10..13).contains(m)) {
        let roll = if (20..25).contains(&m) {
            (4, 60.0, 14.0 - (m - 20) as f64, 16.0, 40, 9, 11)
        } else {
            (4, 80.0, 19.5, 20.0, 40, 9, 11)
        };
        rollup(pool, "server_minutes", key, minute(m), roll).await?;
    }

    let chart = server_chart(pool, account, lobby, ChartRange::Hour, now)
        .await?
        .expect("the account's server");
    assert_eq!((chart.from, chart.to, chart.bucket_seconds), (from, to, 60));
    assert_eq!(chart.points.len(), 60);
    assert_eq!(chart.points[10].samples, 0);
    assert_eq!(chart.points[10].tps, None);
    assert_eq!(chart.points[0].samples, 4);
    assert_eq!(
        chart.points[0].tps,
        Some(Stats {
            min: 19.5,
            avg: 20.0,
            max: 20.0
        })
    );
    assert_eq!(
        chart.points[0].players,
        Some(Stats {
            min: 9.0,
            avg: 10.0,
            max: 11.0
        })
    );
    assert_eq!(
        chart.downtime,
        [Downtime {
            from: minute(10),
            to: Some(minute(13))
        }]
    );
    assert_eq!(
        chart.low_tps,
        [LowTpsSpell {
            from: minute(20),
            to: minute(25),
            lowest_avg_tps: 15.0
        }]
    );
    let day = server_chart(pool, account, lobby, ChartRange::Day, now)
        .await?
        .expect("server");
    assert_eq!(day.points.len(), 1440);
    assert_eq!(
        day.downtime.len(),
        2,
        "a quiet start of the day, then minutes 10-12"
    );

    // 7 days: three five-minute rows make one 15-minute bucket.
    let (week_from, _) = ChartRange::Week.window(now);
    let b = week_from + Duration::minutes(15 * 4);
    for (i, roll) in [
        (10, 200.0, 19.0, 20.0, 30, 2, 4),
        (20, 360.0, 12.0, 20.0, 100, 4, 6),
        (10, 190.0, 18.0, 19.5, 50, 5, 5),
    ]
    .into_iter()
    .enumerate()
    {
        rollup(
            pool,
            "server_five_minutes",
            key,
            b + Duration::minutes(5 * i as i64),
            roll,
        )
        .await?;
    }
    let week = server_chart(pool, account, lobby, ChartRange::Week, now)
        .await?
        .expect("server");
    assert_eq!(week.points.len(), 672);
    assert_eq!(week.points[4].at, b);
    assert_eq!(week.points[4].samples, 40);
    assert_eq!(
        week.points[4].tps,
        Some(Stats {
            min: 12.0,
            avg: 750.0 / 40.0,
            max: 20.0
        })
    );
    assert_eq!(
        week.points[4].players,
        Some(Stats {
            min: 2.0,
            avg: 180.0 / 40.0,
            max: 6.0
        })
    );

    // 30 days: two hours make one 2-hour bucket; whole hours without a row are downtime.
    let (month_from, _) = ChartRange::Month.window(now);
    rollup(
        pool,
        "server_hours",
        key,
        month_from,
        (240, 4800.0, 19.0, 20.0, 2400, 5, 15),
    )
    .await?;
    rollup(
        pool,
        "server_hours",
        key,
        month_from + Duration::hours(1),
        (120, 1800.0, 10.0, 16.0, 600, 1, 9),
    )
    .await?;
    let month = server_chart(pool, account, lobby, ChartRange::Month, now)
        .await?
        .expect("server");
    assert_eq!(month.points.len(), 360);
    assert_eq!(
        month.points[0].tps,
        Some(Stats {
            min: 10.0,
            avg: 6600.0 / 360.0,
            max: 20.0
        })
    );
    assert_eq!(
        month.low_tps,
        [LowTpsSpell {
            from: month_from + Duration::hours(1),
            to: month_from + Duration::hours(2),
            lowest_avg_tps: 15.0
        }]
    );
    // The hour rows stop two hours in (this test wrote no more): down until the hour of the
    // server's last heartbeat.
    assert_eq!(
        month.downtime,
        [Downtime {
            from: month_from + Duration::hours(2),
            to: Some(ago(now, 5).duration_trunc(Duration::hours(1))?)
        }]
    );

    // The JSON endpoint serves the same, and refuses an unknown range.
    let body = dash
        .ok(&format!("/api/servers/{lobby}/history?range=1h"))
        .await?;
    assert_eq!(body["points"].as_array().map(Vec::len), Some(60));
    assert_eq!(body["range"], "1h");
    assert_eq!(body["downtime"][0]["from"], iso(minute(10)));
    let (status, problem) = dash
        .get(&format!("/api/servers/{lobby}/history?range=2h"))
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["code"], "validation_failed");

    // Another account: no such server, by function and over HTTP.
    let other = Dashboard::start().await?;
    assert!(
        server_chart(pool, other.account, lobby, ChartRange::Day, now)
            .await?
            .is_none()
    );
    let (status, _) = other.get(&format!("/api/servers/{lobby}/history")).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn a_server_offline_now_has_open_downtime() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let gone = server(pool, account, Some("Gone"), false, ago(now, 600)).await?;
    let chart = server_chart(pool, account, gone, ChartRange::Hour, now)
        .await?
        .expect("server");
    assert_eq!(
        chart.downtime.last(),
        Some(&Downtime {
            from: ago(now, 600),
            to: None
        })
    );
    assert!(chart.points.iter().all(|p| p.samples == 0));
    Ok(())
}
