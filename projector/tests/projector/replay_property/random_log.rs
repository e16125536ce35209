//! Random event logs for the replay property: mixed record batches over a small pool of
//! 3 accounts (each in its own partition of the log) x 3 players x 2 servers, timed within
//! the last hour, some on the legacy (pre-partition) subjects.

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Accounts in a case: each in a partition of its own.
pub(super) const ACCOUNTS: usize = 3;

/// Record ids are drawn from a small pool now and then, so duplicates and revokes by
/// `punishment_id` meet their targets.
const ID_POOL: usize = 6;

const CHECKS: [&str; 2] = ["Reach", "Fly"];
const RANK_ACTIONS: [&str; 3] = ["add", "remove", "set"];
const GROUPS: [&str; 4] = ["admin", "mod", "vip", "default"];

/// The kinds of log message generated.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Session,
    Heartbeat,
    Chat,
    Punishment,
    AnticheatFlag,
    RankChange,
    AccountLink,
    Custom,
}

/// The random choices behind one record; each kind reads them its own way.
#[derive(Debug, Clone)]
pub(super) struct Knobs {
    server: usize,
    player: usize,
    flag: bool,
    pick: u8,
    a: usize,
    b: usize,
    id: Option<usize>,
    /// Seconds after the case's base time (within the last hour).
    seconds: i64,
}

/// One log message: an account and 1..=3 records of one kind.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    account: usize,
    kind: Kind,
    records: Vec<Knobs>,
    /// Wait for the projector to apply it before publishing the next: the first pass gets
    /// random chunk boundaries, unlike the replay, which takes the backlog in large chunks.
    pub(crate) settle: bool,
    /// Published on the legacy subject (`<prefix>.ev.<account>.<kind>`), as logs written
    /// before partitions hold them: every partition's reader gets it, and only the account's
    /// keeps it.
    pub(crate) legacy: bool,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Session),
        3 => Just(Kind::Heartbeat),
        2 => Just(Kind::Chat),
        4 => Just(Kind::Punishment),
        1 => Just(Kind::AnticheatFlag),
        1 => Just(Kind::RankChange),
        1 => Just(Kind::AccountLink),
        1 => Just(Kind::Custom),
    ]
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        (0..2usize, 0..3usize, any::<bool>(), 0..8u8),
        (
            0..4usize,
            0..3usize,
            proptest::option::weighted(0.4, 0..ID_POOL),
        ),
        0..3_000i64,
    )
        .prop_map(
            |((server, player, flag, pick), (a, b, id), seconds)| Knobs {
                server,
                player,
                flag,
                pick,
                a,
                b,
                id,
                seconds,
            },
        )
}

pub(crate) fn message() -> impl Strategy<Value = Message> {
    (
        0..ACCOUNTS,
        kind(),
        proptest::collection::vec(knobs(), 1..=3),
        any::<bool>(),
        proptest::bool::weighted(0.25),
    )
        .prop_map(|(account, kind, records, settle, legacy)| Message {
            account,
            kind,
            records,
            settle,
            legacy,
        })
}

/// Builds one record's JSON from its knobs, time, server and player.
type RecordJson<'a> = &'a dyn Fn(&Knobs, DateTime<Utc>, Uuid, Uuid) -> Value;

/// The fixed pools one case draws from: 3 accounts, 3 players, 2 servers, a few record ids.
pub(crate) struct Pools {
    accounts: [Uuid; ACCOUNTS],
    players: [Uuid; 3],
    servers: [Uuid; 2],
    ids: Vec<Uuid>,
    base: DateTime<Utc>,
}

impl Pools {
    /// Pools whose accounts fall in distinct partitions of a log of `partitions` (at least
    /// [`ACCOUNTS`]).
    pub(crate) fn new(partitions: u16) -> Pools {
        let id = |_| Uuid::new_v4();
        let mut by_partition = BTreeMap::new();
        while by_partition.len() < ACCOUNTS {
            let account = Uuid::new_v4();
            by_partition
                .entry(shared::subjects::partition_of(account, partitions))
                .or_insert(account);
        }
        let mut accounts = by_partition.into_values();
        Pools {
            accounts: [0; ACCOUNTS].map(|_| accounts.next().unwrap_or_else(Uuid::new_v4)),
            players: [0; 3].map(id),
            servers: [0; 2].map(id),
            ids: (0..ID_POOL).map(id).collect(),
            // Records fall 55 to 5 minutes ago: recent enough that nothing is pruned.
            base: Utc::now() - Duration::minutes(55),
        }
    }

    fn logged<T: DeserializeOwned>(&self, k: &Knobs, record: Value) -> Logged<T> {
        Logged {
            id: k.id.map_or_else(Uuid::now_v7, |i| self.ids[i]),
            // Through text: a custom event's raw properties cannot come from a `Value`.
            record: serde_json::from_str(&record.to_string())
                .unwrap_or_else(|e| panic!("generated an invalid record: {e}")),
        }
    }

    /// The log message for `m`, received `index` seconds after the last record time.
    pub(crate) fn build(&self, index: usize, m: &Message) -> LogMessage {
        let each = |f: RecordJson<'_>| -> Vec<Value> {
            m.records
                .iter()
                .map(|k| {
                    let at = self.base + Duration::seconds(k.seconds);
                    f(k, at, self.servers[k.server], self.players[k.player])
                })
                .collect()
        };
        let records = match m.kind {
            Kind::Session => each(&|k, at, server, player| {
                json!({"server_id": server, "player_uuid": player, "player_name": format!("P{}", k.player),
                       "event": if k.flag { "join" } else { "quit" }, "at": at,
                       "client_version": "1.21.4", "ip_hash": format!("h{}", k.b)})
            }),
            Kind::Heartbeat => each(&|k, at, server, _| {
                let role = [Value::Null, json!("server"), json!("proxy")][k.b].clone();
                json!({"server_id": server, "tps": 20.0 - f64::from(k.pick) / 4.0,
                       "player_count": k.pick, "max_players": 100, "timestamp": at,
                       "name": format!("S{}", k.server), "version": "Paper 1.21.4",
                       "online": k.pick != 0,
                       "role": role})
            }),
            Kind::Chat => each(&|k, at, server, player| {
                json!({"server_id": server, "player_uuid": player,
                       "entry_type": if k.flag { "command" } else { "chat" },
                       "message": format!("m{}", k.pick), "channel": "global", "sent_at": at})
            }),
            Kind::Punishment => {
                each(&|k, at, server, player| self.punishment(k, at, server, player))
            }
            Kind::AnticheatFlag => each(&|k, at, server, player| {
                json!({"server_id": server, "player_uuid": player, "check_name": CHECKS[k.a % 2],
                       "violation_level": f64::from(k.pick) * 1.5, "is_experimental": k.flag,
                       "flagged_at": at})
            }),
            Kind::RankChange => each(&|k, at, server, player| {
                json!({"player_uuid": player, "action": RANK_ACTIONS[k.b],
                       "group": GROUPS[k.a],
                       "previous_group": "default", "server_id": k.flag.then_some(server),
                       "expires_at": (k.pick == 0).then(|| at + Duration::hours(2)),
                       "changed_at": at})
            }),
            Kind::AccountLink => each(&|k, at, _, player| {
                json!({"player_uuid": player, "platform": "discord", "external_id": format!("d{}", k.b),
                       "external_name": format!("D{}", k.b),
                       "action": if k.flag { "link" } else { "unlink" }, "at": at})
            }),
            Kind::Custom => {
                // One name per message: the name is part of a custom message's subject.
                let name = ["vote", "crate_opened"][m.records[0].a % 2];
                each(&|k, at, _, player| {
                    json!({"player_uuid": player, "name": name,
                           "properties": {"n": k.pick, "nested": [k.flag, null]}, "occurred_at": at})
                })
            }
        };
        let batch = self.batch(m, records);
        let received = self.base + Duration::seconds(3_000 + index as i64);
        LogMessage::new(self.accounts[m.account], received, batch)
    }

    /// An issue (5 in 8) or a revoke by external id or by record id.
    fn punishment(&self, k: &Knobs, at: DateTime<Utc>, server: Uuid, player: Uuid) -> Value {
        let kind = ["ban", "ban", "mute", "kick"][k.a];
        let plugin = (k.b != 2).then_some("litebans");
        let external = format!("x{}", k.b % 2);
        if k.pick < 5 {
            json!({"server_id": server, "player_uuid": player, "type": kind, "reason": "r",
                   "staff_uuid": self.players[(k.player + 1) % 3], "issued_at": at,
                   "expires_at": k.flag.then(|| at + Duration::days(1)),
                   "ip_based": k.pick == 0, "source_plugin": plugin,
                   "external_id": (k.flag || k.pick == 1).then_some(external)})
        } else if k.flag {
            json!({"server_id": server, "player_uuid": player, "type": kind, "action": "revoke",
                   "source_plugin": plugin, "external_id": external, "issued_at": at,
                   "revoke_reason": format!("by external id at {}", k.seconds)})
        } else {
            json!({"server_id": server, "player_uuid": player, "type": kind, "action": "revoke",
                   "punishment_id": self.ids[(k.a + k.b) % ID_POOL], "issued_at": at,
                   "staff_name": "Alex", "revoke_reason": format!("by id at {}", k.seconds)})
        }
    }

    fn batch(&self, m: &Message, records: Vec<Value>) -> RecordBatch {
        let zip = |records: Vec<Value>| -> Vec<(Knobs, Value)> {
            m.records.iter().cloned().zip(records).collect()
        };
        macro_rules! logged_all {
            ($variant:ident) => {
                RecordBatch::$variant(
                    zip(records)
                        .into_iter()
                        .map(|(k, r)| self.logged(&k, r))
                        .collect(),
                )
            };
        }
        match m.kind {
            Kind::Session => logged_all!(Session),
            Kind::Heartbeat => logged_all!(Heartbeat),
            Kind::Chat => logged_all!(Chat),
            Kind::Punishment => logged_all!(Punishment),
            Kind::AnticheatFlag => logged_all!(AnticheatFlag),
            Kind::RankChange => logged_all!(RankChange),
            Kind::AccountLink => logged_all!(AccountLink),
            Kind::Custom => logged_all!(Custom),
        }
    }
}
