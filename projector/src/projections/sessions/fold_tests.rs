use super::*;
use crate::projections::sessions::happenings_of;
use shared::envelope::{LogMessage, Logged, RecordBatch};
use std::collections::BTreeMap;

const A: Uuid = Uuid::from_u128(0xA);
const B: Uuid = Uuid::from_u128(0xB);
const P1: Uuid = Uuid::from_u128(0x101);
const P2: Uuid = Uuid::from_u128(0x102);
const S1: Uuid = Uuid::from_u128(0x201);
const S2: Uuid = Uuid::from_u128(0x202);

fn t(second: i64) -> DateTime<Utc> {
    let base: DateTime<Utc> = "2025-03-01T12:00:00Z".parse().expect("valid time");
    base + Duration::seconds(second)
}

fn session(
    account: Uuid,
    id: u128,
    event: &str,
    player: Uuid,
    server: Uuid,
    at: i64,
) -> LogMessage {
    let record = serde_json::from_str(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"p","event":"{event}",
            "client_version":"1.21.4","ip_hash":"h","at":"{}"}}"#,
        t(at).to_rfc3339()
    ))
    .expect("well-formed session");
    let logged = Logged {
        id: Uuid::from_u128(id),
        record,
    };
    LogMessage::new(account, t(at), RecordBatch::Session(vec![logged]))
}

fn join(account: Uuid, id: u128, player: Uuid, server: Uuid, at: i64) -> LogMessage {
    session(account, id, "join", player, server, at)
}

fn quit(account: Uuid, player: Uuid, server: Uuid, at: i64) -> LogMessage {
    session(account, 0, "quit", player, server, at)
}

fn beat(account: Uuid, server: Uuid, at: i64, online: bool) -> LogMessage {
    let record = serde_json::from_str(&format!(
        r#"{{"server_id":"{server}","tps":20,"player_count":1,"max_players":9,"online":{online},
            "timestamp":"{}"}}"#,
        t(at).to_rfc3339()
    ))
    .expect("well-formed heartbeat");
    let logged = Logged {
        id: Uuid::now_v7(),
        record,
    };
    LogMessage::new(account, t(at), RecordBatch::Heartbeat(vec![logged]))
}

/// What the tables would hold: sessions by (account, id) and last heartbeats.
#[derive(Debug, Default, Clone, PartialEq)]
struct Db {
    sessions: BTreeMap<Key, SessionRow>,
    heartbeats: BTreeMap<Key, DateTime<Utc>>,
    intervals: HashMap<Uuid, i32>,
}

impl Db {
    /// Applies one chunk the way `apply` does, loading everything (a superset of what it
    /// loads), and returns how many rows it would write.
    fn apply(&mut self, chunk: &[(u64, &LogMessage)]) -> usize {
        let happenings: Vec<Happening<'_>> = chunk
            .iter()
            .flat_map(|(sequence, m)| happenings_of(*sequence, m))
            .collect();
        let stored = Stored {
            sync_intervals: self.intervals.clone(),
            last_heartbeats: self.heartbeats.iter().map(|(k, v)| (*k, *v)).collect(),
            open: (self.sessions.values())
                .filter(|s| s.left_at.is_none())
                .cloned()
                .collect(),
            known_ids: self.sessions.keys().copied().collect(),
        };
        let folded = fold(stored, &happenings);
        let written = folded.opened.len() + folded.closed.len() + folded.heartbeats.len();
        for s in folded.opened {
            assert!(s.left_at.is_none_or(|left| left >= s.joined_at));
            self.sessions.entry((s.account_id, s.id)).or_insert(s);
        }
        for s in folded.closed {
            let stored = self
                .sessions
                .get_mut(&(s.account_id, s.id))
                .expect("stored");
            assert!(stored.left_at.is_none(), "closing a closed session");
            assert!(s.left_at.is_some_and(|left| left >= stored.joined_at));
            (stored.left_at, stored.closed_by) = (s.left_at, s.closed_by);
        }
        for (account, server, at) in folded.heartbeats {
            self.heartbeats.insert((account, server), at);
        }
        written
    }

    /// Runs `log` (stream sequences 1, 2, ...) one message per chunk, then checks that every
    /// prefix re-applied, in one chunk and message by message, writes nothing.
    fn run(log: &[LogMessage]) -> Db {
        let mut db = Db::default();
        db.run_with(log);
        db
    }

    fn run_with(&mut self, log: &[LogMessage]) {
        let numbered: Vec<(u64, &LogMessage)> = log
            .iter()
            .enumerate()
            .map(|(i, m)| (i as u64 + 1, m))
            .collect();
        for message in &numbered {
            self.apply(&[*message]);
        }
        for end in 1..=numbered.len() {
            let mut again = self.clone();
            assert_eq!(again.apply(&numbered[..end]), 0, "replaying {end} messages");
            for message in &numbered[..end] {
                assert_eq!(again.apply(&[*message]), 0, "replaying {message:?}");
            }
        }
    }

    fn get(&self, account: Uuid, id: u128) -> &SessionRow {
        &self.sessions[&(account, Uuid::from_u128(id))]
    }
}

fn ended(s: &SessionRow) -> Option<(DateTime<Utc>, ClosedBy)> {
    s.left_at.zip(s.closed_by)
}

#[test]
fn a_join_and_a_quit_make_a_session() {
    let db = Db::run(&[join(A, 1, P1, S1, 0), quit(A, P1, S1, 60)]);
    let s = db.get(A, 1);
    assert_eq!(s.joined_at, t(0));
    assert_eq!(ended(s), Some((t(60), ClosedBy::Quit)));
    assert_eq!(s.client_version.as_deref(), Some("1.21.4"));
    assert_eq!(s.ip_hash.as_deref(), Some("h"));
}

#[test]
fn switching_servers_closes_the_previous_session() {
    let db = Db::run(&[join(A, 1, P1, S1, 0), join(A, 2, P1, S2, 30)]);
    assert_eq!(ended(db.get(A, 1)), Some((t(30), ClosedBy::Switched)));
    assert_eq!(ended(db.get(A, 2)), None);
}

#[test]
fn rejoining_while_open_closes_the_old_session_and_a_repeated_join_is_ignored() {
    let db = Db::run(&[
        join(A, 1, P1, S1, 0),
        join(A, 2, P1, S1, 10),
        join(A, 2, P1, S1, 20),
    ]);
    assert_eq!(db.sessions.len(), 2);
    assert_eq!(ended(db.get(A, 1)), Some((t(10), ClosedBy::Switched)));
    assert_eq!(db.get(A, 2).joined_at, t(10));
    assert_eq!(ended(db.get(A, 2)), None);
}

#[test]
fn a_quit_without_a_join_or_on_another_server_does_nothing() {
    let db = Db::run(&[
        quit(A, P1, S1, 5),
        join(A, 1, P1, S1, 10),
        quit(A, P1, S2, 20),
    ]);
    assert_eq!(db.sessions.len(), 1);
    assert_eq!(ended(db.get(A, 1)), None);
}

#[test]
fn a_quit_before_the_join_time_leaves_the_session_open() {
    let db = Db::run(&[join(A, 1, P1, S1, 10), quit(A, P1, S1, 5)]);
    assert_eq!(ended(db.get(A, 1)), None);
}

#[test]
fn a_graceful_shutdown_closes_the_servers_sessions_only() {
    let db = Db::run(&[
        beat(A, S1, 0, true),
        join(A, 1, P1, S1, 1),
        join(A, 2, P2, S2, 2),
        beat(A, S1, 10, false),
    ]);
    assert_eq!(ended(db.get(A, 1)), Some((t(10), ClosedBy::ServerOffline)));
    assert_eq!(ended(db.get(A, 2)), None);
    assert_eq!(db.heartbeats[&(A, S1)], t(10));
}

#[test]
fn a_heartbeat_gap_closes_at_the_previous_heartbeat_but_not_later_joins() {
    let db = Db::run(&[
        beat(A, S1, 0, true),
        join(A, 1, P1, S1, 0),
        // Silent for more than 3 x 15 s; P2 joins once it is back, before its heartbeat.
        join(A, 2, P2, S1, 100),
        beat(A, S1, 105, true),
    ]);
    assert_eq!(ended(db.get(A, 1)), Some((t(0), ClosedBy::ServerOffline)));
    assert_eq!(ended(db.get(A, 2)), None);
}

#[test]
fn a_gap_of_at_most_three_intervals_closes_nothing_and_settings_change_the_interval() {
    let log = [
        beat(A, S1, 0, true),
        join(A, 1, P1, S1, 0),
        beat(A, S1, 45, true),
    ];
    assert_eq!(ended(Db::run(&log).get(A, 1)), None);

    let log = [
        beat(A, S1, 0, true),
        join(A, 1, P1, S1, 0),
        beat(A, S1, 100, true),
    ];
    let mut db = Db::default();
    db.intervals.insert(A, 60);
    db.run_with(&log);
    assert_eq!(ended(db.get(A, 1)), None, "3 x 60 s not reached");
}

#[test]
fn accounts_are_separate() {
    let db = Db::run(&[
        join(A, 1, P1, S1, 0),
        join(B, 1, P1, S1, 0),
        join(B, 2, P1, S2, 5),
        beat(A, S1, 6, false),
    ]);
    assert_eq!(
        db.sessions.len(),
        3,
        "the same id in two accounts is two sessions"
    );
    assert_eq!(ended(db.get(A, 1)), Some((t(6), ClosedBy::ServerOffline)));
    assert_eq!(ended(db.get(B, 1)), Some((t(5), ClosedBy::Switched)));
    assert_eq!(ended(db.get(B, 2)), None);
}

#[test]
fn late_joins_are_not_closed_by_replaying_earlier_quits_or_shutdowns() {
    // Logged out of order: the quit and the shutdown come before the joins they would close.
    let db = Db::run(&[
        quit(A, P1, S1, 50),
        beat(A, S2, 60, false),
        join(A, 1, P1, S1, 10),
        join(A, 2, P2, S2, 20),
    ]);
    assert_eq!(ended(db.get(A, 1)), None);
    assert_eq!(ended(db.get(A, 2)), None);
}

#[test]
fn several_records_in_one_chunk_fold_in_log_order() {
    let log = [
        beat(A, S1, 0, true),
        join(A, 1, P1, S1, 1),
        join(A, 2, P1, S2, 2),
        quit(A, P1, S2, 3),
        join(A, 3, P1, S1, 4),
        beat(A, S1, 5, false),
    ];
    let numbered: Vec<(u64, &LogMessage)> = log
        .iter()
        .enumerate()
        .map(|(i, m)| (i as u64 + 1, m))
        .collect();
    let mut one_chunk = Db::default();
    one_chunk.apply(&numbered);
    let by_message = Db::run(&log);
    assert_eq!(one_chunk, by_message);
    assert_eq!(
        ended(by_message.get(A, 1)),
        Some((t(2), ClosedBy::Switched))
    );
    assert_eq!(ended(by_message.get(A, 2)), Some((t(3), ClosedBy::Quit)));
    assert_eq!(
        ended(by_message.get(A, 3)),
        Some((t(5), ClosedBy::ServerOffline))
    );
}

#[test]
fn offline_after_defaults_to_three_times_fifteen_seconds() {
    let mut intervals = HashMap::new();
    assert_eq!(offline_after(&intervals, A), Duration::seconds(45));
    intervals.insert(A, 30);
    assert_eq!(offline_after(&intervals, A), Duration::seconds(90));
}
