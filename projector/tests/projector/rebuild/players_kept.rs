//! A rebuild's players fold keeps its rows between chunks (`BulkState`) instead of reading
//! them back, and ends with exactly the rows its statements store chunk after chunk: with
//! names, ranks and links changing across chunks at times finer than PostgreSQL keeps, an
//! erasure between two chunks (the erased player seen again, their name read as erased, first
//! before the erasure model has scrubbed their row), a player new to the log in a later chunk
//! (stored without reading back), a chunk PostgreSQL refuses (its players put back as they
//! were), and a chunk applied in bulk and then rolled back by its caller (everything kept
//! forgotten: every player is read back from then on).

use super::copy_load::{apply, database};
use crate::harness::logged;
use crate::workload::contents;
use chrono::{DateTime, TimeZone, Utc};
use projector::projections::{
    BulkState, Positioned, ReadModel, erasure::Erasure, players::Players,
};
use shared::envelope::{LogMessage, RecordBatch};
use shared::records::{AccountLink, PlayerErasure, RankChange, Session};
use uuid::Uuid;

/// A join of `player` named `name` at `at`.
fn join(player: Uuid, name: &str, at: &str) -> RecordBatch {
    RecordBatch::Session(vec![logged::<Session>(&format!(
        r#"{{"server_id":"{}","player_uuid":"{player}","player_name":"{name}","event":"join",
            "at":"{at}"}}"#,
        Uuid::nil()
    ))])
}

/// The log, chunk by chunk (the fourth is refused: a NUL in a name; the sixth is rolled back),
/// of three players.
fn chunks(account: Uuid, players: [Uuid; 3]) -> Vec<Vec<Positioned>> {
    let [alex, bo, cy] = players;
    let received = Utc
        .with_ymd_and_hms(2026, 11, 1, 12, 0, 0)
        .single()
        .unwrap_or_else(Utc::now);
    let chunks = vec![
        vec![
            // 0.4 us past the second: PostgreSQL keeps the second.
            join(alex, "Alex", "2026-11-01T10:00:00.0000004Z"),
            join(bo, "Bo", "2026-11-01T10:00:01Z"),
            RecordBatch::RankChange(vec![logged::<RankChange>(&format!(
                r#"{{"player_uuid":"{alex}","action":"set","group":"vip",
                    "expires_at":"2026-12-01T00:00:00.0000009Z",
                    "changed_at":"2026-11-01T10:00:02Z"}}"#
            ))]),
        ],
        vec![
            // Later in the log, 0.1 us earlier than the first name: newer as stored.
            join(alex, "Alexa", "2026-11-01T10:00:00.0000003Z"),
            RecordBatch::Erasure(vec![logged::<PlayerErasure>(&format!(
                r#"{{"player_uuid":"{bo}","erased_at":"2026-11-01T11:00:00Z","by":"admin"}}"#
            ))]),
        ],
        // Applied before the erasure model scrubs the chunk before (it runs behind); a
        // player new to the log.
        vec![
            join(bo, "", "2026-11-01T11:10:00Z"),
            join(cy, "Cy", "2026-11-01T11:10:01Z"),
        ],
        vec![join(alex, "Ale\\u0000x", "2026-11-01T11:30:00Z")],
        vec![
            // The erased player seen again: their sealed name reads as erased.
            join(bo, "", "2026-11-01T12:00:00Z"),
            RecordBatch::AccountLink(vec![logged::<AccountLink>(&format!(
                r#"{{"player_uuid":"{alex}","platform":"discord","external_id":"42",
                    "action":"link","at":"2026-11-01T12:00:01Z"}}"#
            ))]),
            join(alex, "Alexa", "2026-11-01T12:00:02Z"),
        ],
        // Rolled back after it applied: nothing of it is stored.
        vec![
            join(alex, "Xander", "2026-11-01T12:30:00Z"),
            join(cy, "Cyrus", "2026-11-01T12:30:01Z"),
        ],
        // Read back whole: the rank before the change and the names as stored, not as if
        // the player were new.
        vec![
            join(alex, "Al", "2026-11-01T13:00:00Z"),
            join(cy, "Cy", "2026-11-01T13:00:01Z"),
            RecordBatch::RankChange(vec![logged::<RankChange>(&format!(
                r#"{{"player_uuid":"{alex}","action":"set","group":"mvp",
                    "changed_at":"2026-11-01T13:00:02Z"}}"#
            ))]),
        ],
    ];
    let mut sequence = 0;
    chunks
        .into_iter()
        .map(|chunk| {
            chunk
                .into_iter()
                .map(|batch| {
                    sequence += 1;
                    Positioned {
                        stream_sequence: sequence,
                        message: LogMessage::new(account, received, batch),
                    }
                })
                .collect()
        })
        .collect()
}

/// The models' steps over the first five chunks. The erasure model applies a chunk after the
/// players model, which may run ahead: the third chunk's players before the second's erasure
/// is scrubbed.
fn steps_to_the_fifth_chunk() -> Vec<(usize, &'static dyn ReadModel)> {
    vec![
        (0, &Players),
        (0, &Erasure),
        (1, &Players),
        (2, &Players),
        (1, &Erasure),
        (2, &Erasure),
        (3, &Players),
        (3, &Erasure),
        (4, &Players),
        (4, &Erasure),
    ]
}

#[tokio::test]
async fn players_kept_between_chunks_end_as_their_statements_store_them() -> anyhow::Result<()> {
    let (by_statements, in_bulk) = (database().await?, database().await?);
    let account = Uuid::now_v7();
    let players = [Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7()];
    let state = BulkState::default();
    let chunks = chunks(account, players);
    let mut steps = steps_to_the_fifth_chunk();
    steps.extend([
        (5, &Players as &'static dyn ReadModel),
        (6, &Players),
        (6, &Erasure),
    ]);
    let mut kept = Vec::new();
    for (index, model) in steps {
        let chunk = &chunks[index];
        if index == 5 {
            rolled_back(&in_bulk.pool, chunk, &state).await?;
            kept.push(state.rows());
            continue;
        }
        let expected = apply(&by_statements.pool, model, chunk, None).await?;
        let actual = apply(&in_bulk.pool, model, chunk, Some(&state)).await?;
        assert_eq!(actual, expected, "chunk {index}, {model:?}");
        assert_eq!(
            expected.is_some(),
            index == 3 && model.name() == "players",
            "chunk {index}, {model:?}: {expected:?}"
        );
        if model.name() == "players" {
            kept.push(state.rows());
        }
        let (expected, actual) = (
            contents(&by_statements.pool).await?,
            contents(&in_bulk.pool).await?,
        );
        assert_eq!(expected, actual, "after chunk {index}, {model:?}");
    }
    // Both players after the first chunk; the erased one forgotten, and never kept again; the
    // new one kept; the refused chunk's put back; all forgotten after the rollback.
    assert_eq!(kept, [2, 1, 2, 2, 2, 0, 2]);
    let stored: (Option<String>, Vec<String>, Option<DateTime<Utc>>) = sqlx::query_as(
        "SELECT username, names, linked_at FROM players WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(players[0])
    .fetch_one(&in_bulk.pool)
    .await?;
    assert_eq!(stored.0.as_deref(), Some("Al"));
    assert_eq!(stored.1, ["Al", "Alex", "Alexa"]);
    assert!(stored.2.is_some(), "the link was stored");
    let erased: (Option<String>, Vec<String>) =
        sqlx::query_as("SELECT username, names FROM players WHERE account_id = $1 AND uuid = $2")
            .bind(account)
            .bind(players[1])
            .fetch_one(&in_bulk.pool)
            .await?;
    assert_eq!(erased, (None, Vec::new()), "the erased name came back");
    Ok(())
}

/// Applies `messages` to the players fold in bulk, then rolls its transaction back, as a
/// caller does when another model of the same savepoint was refused, and forgets what the
/// state kept ([`BulkState`]'s rule).
async fn rolled_back(
    pool: &sqlx::PgPool,
    messages: &[Positioned],
    state: &BulkState,
) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    let messages: Vec<&Positioned> = messages.iter().collect();
    Players.apply_bulk(&mut tx, &messages, state).await?;
    tx.rollback().await?;
    state.forget();
    Ok(())
}

/// What the copy stores of `player`: their row's name and names, and their `player_names`.
async fn stored_of(
    pool: &sqlx::PgPool,
    account: Uuid,
    player: Uuid,
) -> anyhow::Result<(Option<(Option<String>, Vec<String>)>, Vec<String>)> {
    let row =
        sqlx::query_as("SELECT username, names FROM players WHERE account_id = $1 AND uuid = $2")
            .bind(account)
            .bind(player)
            .fetch_optional(pool)
            .await?;
    let names = sqlx::query_scalar(
        "SELECT name FROM player_names WHERE account_id = $1 AND player_uuid = $2 ORDER BY name",
    )
    .bind(account)
    .bind(player)
    .fetch_all(pool)
    .await?;
    Ok((row, names))
}

/// Writes what `state` left to write, as a rebuild does at its load's end.
async fn write_kept(pool: &sqlx::PgPool, state: &BulkState) -> anyhow::Result<(usize, usize)> {
    let mut tx = pool.begin().await?;
    let written = state.write_kept(&mut tx).await?;
    tx.commit().await?;
    state.kept_written();
    Ok(written)
}

#[tokio::test]
async fn players_left_to_write_at_the_loads_end_end_as_their_statements_store_them()
-> anyhow::Result<()> {
    let (by_statements, in_bulk) = (database().await?, database().await?);
    let account = Uuid::now_v7();
    let players = [Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7()];
    let [alex, bo, cy] = players;
    let state = BulkState::default();
    state.defer_writes();
    let chunks = chunks(account, players);
    for (index, model) in steps_to_the_fifth_chunk() {
        let chunk = &chunks[index];
        let expected = apply(&by_statements.pool, model, chunk, None).await?;
        let actual = apply(&in_bulk.pool, model, chunk, Some(&state)).await?;
        assert_eq!(
            actual, expected,
            "chunk {index}, {model:?}: the same refusals"
        );
        // The erased player's row and names are written in the erasure's chunk (the second),
        // so its scrub (and every later one) sees them as the live tables do.
        if index == 0 {
            continue;
        }
        assert_eq!(
            stored_of(&in_bulk.pool, account, bo).await?,
            stored_of(&by_statements.pool, account, bo).await?,
            "chunk {index}, {model:?}"
        );
    }
    // Alex and Cy are not stored yet: they are left to write.
    assert_eq!(
        stored_of(&in_bulk.pool, account, alex).await?,
        (None, vec![])
    );
    assert_eq!(stored_of(&in_bulk.pool, account, cy).await?, (None, vec![]));
    assert_eq!(
        state.unwritten(),
        2 + 3,
        "two rows; Alex's two names and Cy's"
    );
    assert_eq!(write_kept(&in_bulk.pool, &state).await?, (2, 3));
    assert_eq!(
        contents(&by_statements.pool).await?,
        contents(&in_bulk.pool).await?
    );
    // From then on chunks write at once.
    for model in [&Players as &'static dyn ReadModel, &Erasure] {
        apply(&by_statements.pool, model, &chunks[6], None).await?;
        apply(&in_bulk.pool, model, &chunks[6], Some(&state)).await?;
    }
    assert_eq!(state.unwritten(), 0);
    assert_eq!(
        contents(&by_statements.pool).await?,
        contents(&in_bulk.pool).await?
    );
    Ok(())
}

#[tokio::test]
async fn rows_left_to_write_and_rolled_back_are_lost_and_the_copy_refuses_to_complete()
-> anyhow::Result<()> {
    let in_bulk = database().await?;
    let account = Uuid::now_v7();
    let state = BulkState::default();
    state.defer_writes();
    let chunks = chunks(account, [Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7()]);
    apply(&in_bulk.pool, &Players, &chunks[0], Some(&state)).await?;
    rolled_back(&in_bulk.pool, &chunks[2], &state).await?;
    let error = write_kept(&in_bulk.pool, &state)
        .await
        .err()
        .map(|e| e.to_string());
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("must start again")),
        "{error:?}"
    );
    Ok(())
}
