//! What keeping the players rows between a rebuild's chunks saves (`BulkState`), and writing
//! them once at the load's end: the players fold over the same four chunks (250,000 joins
//! each, of 93,000 players: the benchmark rebuild's shape), into tables shaped as a rebuild's
//! copy loads them (unlogged, only the unique indexes), reading each chunk's rows back from the
//! table (the live projector's way), keeping them, or keeping them and writing them after the
//! last chunk. The sides take turns over three rounds, each in a fresh database; the best time
//! of each side counts, over every chunk (and the write at the end).
//!
//! `TEST_DATABASE_URL=postgres://... cargo bench -p projector --bench players_kept` (the
//! cluster `./deploy/test.sh` starts will do).

use chrono::{DateTime, TimeZone, Utc};
use projector::projections::{BulkState, Positioned, ReadModel, players::Players};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::records::{Session, SessionEvent};
use sqlx::PgPool;
use std::time::{Duration, Instant};
use test_support::TestDb;
use uuid::Uuid;

const PLAYERS: usize = 93_000;
const CHUNKS: usize = 4;
const MESSAGES_PER_CHUNK: usize = 100;
const JOINS_PER_MESSAGE: usize = 2_500;
const ROUNDS: usize = 3;

/// Chunk `chunk` of the log: every player joins two or three times, named as before.
fn chunk(account: Uuid, players: &[Uuid], chunk: usize, base: DateTime<Utc>) -> Vec<Positioned> {
    (0..MESSAGES_PER_CHUNK)
        .map(|m| {
            let joins = (0..JOINS_PER_MESSAGE)
                .map(|i| {
                    let player = players[(m * JOINS_PER_MESSAGE + i * 7 + chunk * 13) % PLAYERS];
                    let offset = (chunk * MESSAGES_PER_CHUNK + m) * JOINS_PER_MESSAGE + i;
                    Logged {
                        id: Uuid::now_v7(),
                        record: Session {
                            server_id: Uuid::nil(),
                            player_uuid: player,
                            player_name: format!("P{}", player.as_u128() % 1_000),
                            event: SessionEvent::Join,
                            at: Some(base + chrono::TimeDelta::milliseconds(offset as i64)),
                            client_version: None,
                            ip: None,
                            ip_hash: None,
                        },
                    }
                })
                .collect();
            Positioned {
                stream_sequence: (chunk * MESSAGES_PER_CHUNK + m + 1) as u64,
                message: LogMessage::new(account, base, RecordBatch::Session(joins)),
            }
        })
        .collect()
}

/// A fresh database whose players tables are shaped as a rebuild's copy loads them.
async fn copy_shaped() -> anyhow::Result<TestDb> {
    let db = TestDb::create().await?;
    projector::MIGRATOR.run(&db.pool).await?;
    for sql in [
        "DO $$ DECLARE i text; BEGIN
           FOR i IN SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
                    AND tablename IN ('players', 'player_names')
                    AND indexdef NOT LIKE 'CREATE UNIQUE INDEX%'
           LOOP EXECUTE 'DROP INDEX ' || quote_ident(i); END LOOP; END $$",
        "ALTER TABLE players SET UNLOGGED",
        "ALTER TABLE player_names SET UNLOGGED",
    ] {
        sqlx::query(sql).execute(&db.pool).await?;
    }
    Ok(db)
}

/// How the fold stores its rows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    /// Reads each chunk's rows back (the live projector's way).
    ReadBack,
    /// Keeps them between chunks, and writes each chunk's.
    Kept,
    /// Keeps them, and writes them once after the last chunk (a rebuild's load).
    WrittenAtTheEnd,
}

impl Side {
    const ALL: [Side; 3] = [Side::ReadBack, Side::Kept, Side::WrittenAtTheEnd];

    fn name(self) -> &'static str {
        match self {
            Side::ReadBack => "read back",
            Side::Kept => "kept",
            Side::WrittenAtTheEnd => "kept, written at the end",
        }
    }
}

/// Applies `chunks` one transaction each (and, written at the end, writes what is left in
/// one more); returns how long each took.
async fn fold(
    pool: &PgPool,
    chunks: &[Vec<Positioned>],
    side: Side,
) -> anyhow::Result<Vec<Duration>> {
    let state = BulkState::default();
    if side == Side::WrittenAtTheEnd {
        state.defer_writes();
    }
    let mut took = Vec::new();
    for chunk in chunks {
        let messages: Vec<&Positioned> = chunk.iter().collect();
        let started = Instant::now();
        let mut tx = pool.begin().await?;
        match side {
            Side::ReadBack => Players.apply(&mut tx, &messages).await?,
            Side::Kept | Side::WrittenAtTheEnd => {
                Players.apply_bulk(&mut tx, &messages, &state).await?
            }
        };
        tx.commit().await?;
        took.push(started.elapsed());
    }
    if side == Side::WrittenAtTheEnd {
        let started = Instant::now();
        let mut tx = pool.begin().await?;
        state.write_kept(&mut tx).await?;
        tx.commit().await?;
        state.kept_written();
        took.push(started.elapsed());
    }
    Ok(took)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let account = Uuid::now_v7();
    let players: Vec<Uuid> = (0..PLAYERS).map(|_| Uuid::now_v7()).collect();
    let base = Utc
        .with_ymd_and_hms(2026, 11, 1, 0, 0, 0)
        .single()
        .ok_or_else(|| anyhow::anyhow!("no such time"))?;
    let chunks: Vec<_> = (0..CHUNKS)
        .map(|c| chunk(account, &players, c, base))
        .collect();
    let mut best = [Duration::MAX; 3];
    for round in 0..ROUNDS {
        for turn in 0..Side::ALL.len() {
            let side = Side::ALL[(round + turn) % Side::ALL.len()];
            let db = copy_shaped().await?;
            let took = fold(&db.pool, &chunks, side).await?;
            let all: Duration = took.iter().sum();
            println!(
                "round {round}, {}: {took:.2?}, in all {all:.2?}",
                side.name()
            );
            let index = Side::ALL.iter().position(|s| *s == side).unwrap_or(0);
            best[index] = best[index].min(all);
        }
    }
    let ratio = |side: usize| best[side].as_secs_f64() / best[0].as_secs_f64();
    println!(
        "players fold over {CHUNKS} chunks (best of {ROUNDS}): read back {:.2?}; kept {:.2?} \
         ({:.2} x); kept, written at the end {:.2?} ({:.2} x)",
        best[0],
        best[1],
        ratio(1),
        best[2],
        ratio(2)
    );
    Ok(())
}
