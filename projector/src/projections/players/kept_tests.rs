use super::*;
use uuid::Uuid;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).map_or(DateTime::UNIX_EPOCH, |t| t.to_utc())
}

fn key(player: u128) -> PlayerKey {
    (Uuid::nil(), Uuid::from_u128(player))
}

fn row(player: u128, seen: &str) -> PlayerRow {
    let mut row = PlayerRow::first(&super::super::Sighting {
        account_id: Uuid::nil(),
        player: Uuid::from_u128(player),
        at: at(seen),
        seq: 1,
        name: None,
        change: super::super::Change::Seen,
    });
    row.username = Some("Alex".to_owned());
    row.username_at = Some(at(seen));
    row.username_seq = Some(1);
    row.names = vec!["Alex".to_owned()];
    row
}

/// Keeps `rows` as a chunk that wrote them all.
fn stored(kept: &KeptRows, rows: Vec<PlayerRow>) {
    let written = rows.iter().map(|r| (r.account_id, r.uuid)).collect();
    kept.put_back(Taken::default(), rows, &HashSet::new(), &written);
}

fn keys(taken: &Taken) -> Vec<PlayerKey> {
    taken.rows.keys().copied().collect()
}

#[test]
fn times_are_kept_to_the_microsecond_cut_towards_postgresqls_epoch() {
    assert_eq!(
        as_stored(at("2026-11-01T10:00:00.0000009Z")),
        at("2026-11-01T10:00:00Z")
    );
    assert_eq!(
        as_stored(at("2026-11-01T10:00:00.123456Z")),
        at("2026-11-01T10:00:00.123456Z")
    );
    // Before 2000 the cut goes up, towards the epoch, as the driver's.
    assert_eq!(
        as_stored(at("1999-12-31T23:59:59.0000005Z")),
        at("1999-12-31T23:59:59.000001Z")
    );
    let kept = row(1, "2026-11-01T10:00:00.0000004Z").into_stored();
    assert_eq!(kept.username_at, Some(at("2026-11-01T10:00:00Z")));
    assert_eq!(kept.last_seen, at("2026-11-01T10:00:00Z"));
}

#[test]
fn a_chunk_takes_its_players_out_and_puts_back_what_it_stored_less_the_erased() {
    let kept = KeptRows::default();
    let (a, b) = (key(1), key(2));
    stored(
        &kept,
        vec![
            row(1, "2026-11-01T10:00:00Z"),
            row(2, "2026-11-01T10:00:00Z"),
        ],
    );
    assert_eq!(kept.len(), 2);
    let (taken, missing) = kept.take([a, key(3)]);
    assert_eq!(keys(&taken), [a]);
    assert_eq!(missing, [], "3 was never stored: nothing to read back");
    assert_eq!(kept.len(), 1, "taken out while the chunk applies");
    // Erased: b (kept from an earlier chunk) and a (this chunk's).
    kept.put_back(taken, Vec::new(), &HashSet::from([a, b]), &HashSet::new());
    assert_eq!(kept.len(), 0);
    // Read back by a later chunk (maybe before the scrub committed): not kept again.
    stored(
        &kept,
        vec![
            row(1, "2026-11-01T12:00:00Z"),
            row(3, "2026-11-01T12:00:00Z"),
        ],
    );
    assert_eq!(kept.len(), 1, "only the player never erased is kept");
    let (taken, missing) = kept.take([a]);
    assert_eq!(missing, [a], "an erased player is read back");
    assert_eq!(taken.erased, HashSet::from([a]), "and written at once");
}

#[test]
fn once_a_stored_row_may_not_be_kept_every_player_not_kept_is_read_back() {
    // Past the bound: the last row is stored, not kept.
    let kept = KeptRows::default();
    let rows: Vec<PlayerRow> = (0..MAX_PLAYERS as u128 + 1)
        .map(|p| row(p, "2026-11-01T10:00:00Z"))
        .collect();
    stored(&kept, rows);
    let (taken, missing) = kept.take([key(0), key(MAX_PLAYERS as u128 + 7)]);
    assert_eq!(keys(&taken), [key(0)]);
    assert_eq!(missing, [key(MAX_PLAYERS as u128 + 7)]);

    // Forgotten (a rolled-back chunk kept rows it no longer stores).
    let kept = KeptRows::default();
    stored(&kept, vec![row(1, "2026-11-01T10:00:00Z")]);
    assert_eq!(kept.take([key(2)]).1, []);
    kept.forget();
    assert_eq!(kept.take([key(1), key(2)]).1, [key(1), key(2)]);
    assert!(kept.unwritten().is_ok(), "nothing unwritten was lost");
}

#[test]
fn a_chunk_that_failed_puts_back_the_rows_it_took_as_they_were() {
    let kept = KeptRows::default();
    kept.defer();
    stored(&kept, vec![row(1, "2026-11-01T10:00:00Z")]);
    // Left unwritten by a chunk.
    kept.put_back(
        Taken::default(),
        vec![row(2, "2026-11-01T10:00:00Z")],
        &HashSet::new(),
        &HashSet::new(),
    );
    let (taken, _) = kept.take([key(1), key(2)]);
    assert_eq!(kept.len(), 0);
    kept.restore(taken);
    let (taken, missing) = kept.take([key(1), key(2), key(3)]);
    assert_eq!(missing, [], "still every stored row kept");
    assert_eq!(
        taken.rows[&key(1)].last_seen,
        at("2026-11-01T10:00:00Z"),
        "the row as it was stored"
    );
    assert_eq!(taken.unwritten, HashSet::from([key(2)]), "still unwritten");
}

#[test]
fn past_its_bound_it_keeps_no_new_player_yet_updates_those_it_keeps() {
    let kept = KeptRows::default();
    let rows: Vec<PlayerRow> = (0..MAX_PLAYERS as u128 + 1)
        .map(|p| row(p, "2026-11-01T10:00:00Z"))
        .collect();
    stored(&kept, rows);
    assert_eq!(kept.len(), MAX_PLAYERS);
    let (taken, _) = kept.take([key(0)]);
    let mut renamed = row(0, "2026-11-01T11:00:00Z");
    renamed.username = Some("Alexa".to_owned());
    kept.put_back(
        taken,
        vec![renamed],
        &HashSet::new(),
        &HashSet::from([key(0)]),
    );
    let (taken, _) = kept.take([key(0)]);
    assert_eq!(taken.rows[&key(0)].username.as_deref(), Some("Alexa"));
}

#[test]
fn while_deferring_rows_stay_unwritten_until_written_and_none_is_ever_lost_unseen() {
    let kept = KeptRows::default();
    assert!(!kept.take([key(1)]).0.defer, "statements write at once");
    kept.defer();
    let (taken, _) = kept.take([key(1), key(2), key(3)]);
    assert!(taken.defer);
    // 1 and 2 left unwritten; 3 written (say, erased in a later chunk).
    kept.put_back(
        taken,
        vec![
            row(1, "2026-11-01T10:00:00Z"),
            row(2, "2026-11-01T10:00:00Z"),
            row(3, "2026-11-01T10:00:00Z"),
        ],
        &HashSet::new(),
        &HashSet::from([key(3)]),
    );
    let unwritten: Vec<Uuid> = kept.unwritten().map_or_else(
        |_| Vec::new(),
        |rows| rows.into_iter().map(|r| r.uuid).collect(),
    );
    assert_eq!(unwritten, [Uuid::from_u128(1), Uuid::from_u128(2)]);
    // A later chunk writes 2 (it changed nothing of 1, which stays unwritten).
    let (taken, _) = kept.take([key(1), key(2)]);
    assert_eq!(taken.unwritten, HashSet::from([key(1), key(2)]));
    let mut seen = row(2, "2026-11-01T11:00:00Z");
    seen.names = vec!["Alex".to_owned()];
    kept.put_back(taken, vec![seen], &HashSet::new(), &HashSet::from([key(2)]));
    assert_eq!(kept.unwritten().map(|rows| rows.len()).ok(), Some(1));
    kept.written();
    assert!(!kept.deferring());
    assert_eq!(kept.unwritten().map(|rows| rows.len()).ok(), Some(0));

    // Forgetting an unwritten row loses it, and the copy cannot be completed.
    kept.defer();
    let (taken, _) = kept.take([key(4)]);
    kept.put_back(
        taken,
        vec![row(4, "2026-11-01T10:00:00Z")],
        &HashSet::new(),
        &HashSet::new(),
    );
    kept.forget();
    assert!(kept.unwritten().is_err());
}

#[test]
fn past_its_bound_a_chunk_may_not_defer_yet_its_unwritten_rows_stay_kept() {
    let kept = KeptRows::default();
    kept.defer();
    let (taken, _) = kept.take([key(0)]);
    let rows: Vec<PlayerRow> = (0..MAX_PLAYERS as u128 + 1)
        .map(|p| row(p, "2026-11-01T10:00:00Z"))
        .collect();
    kept.put_back(taken, rows, &HashSet::new(), &HashSet::new());
    assert_eq!(kept.len(), MAX_PLAYERS + 1, "no unwritten row is dropped");
    let (taken, missing) = kept.take([key(1), key(MAX_PLAYERS as u128 + 9)]);
    assert!(!taken.defer, "no room: the chunk writes its rows");
    assert_eq!(missing, [], "every stored row is still kept");
}

#[test]
fn chunks_applying_at_once_never_keep_more_rows_than_the_bound() {
    let kept = KeptRows::with_most(10);
    kept.defer();
    // Two partitions' chunks of six players each: only the first finds room to defer.
    let (first, _) = kept.take((0..6).map(key));
    let (second, _) = kept.take((6..12).map(key));
    assert!(first.defer);
    assert!(
        !second.defer,
        "its six players would not fit beside the first's"
    );
    let rows = |players: std::ops::Range<u128>| -> Vec<PlayerRow> {
        players.map(|p| row(p, "2026-11-01T10:00:00Z")).collect()
    };
    let written: HashSet<PlayerKey> = (6..12).map(key).collect();
    kept.put_back(second, rows(6..12), &HashSet::new(), &written);
    kept.put_back(first, rows(0..6), &HashSet::new(), &HashSet::new());
    assert_eq!(kept.unwritten().map(|r| r.len()).ok(), Some(6));
    assert_eq!(kept.len(), 10);
    assert_eq!(kept.peak(), 10, "never past the bound, even for a moment");
    // A third chunk finds no room: its rows are written, and the bound still holds.
    let (third, missing) = kept.take((12..20).map(key));
    assert!(!third.defer);
    assert_eq!(
        missing.len(),
        8,
        "rows stored and not kept: the others are read back"
    );
    let written: HashSet<PlayerKey> = (12..20).map(key).collect();
    kept.put_back(third, rows(12..20), &HashSet::new(), &written);
    assert_eq!(kept.peak(), 10);
}
