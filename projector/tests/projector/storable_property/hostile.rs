//! Hostile plugin records as JSON text, the way a plugin would send them: hostile unicode
//! (NUL, RTL overrides, emoji and other 4-byte characters, controls), lengths at and past
//! every limit, extreme integers and floats, timestamps at the edges of what chrono and
//! PostgreSQL represent, and custom-event `properties` that are deep, wide, large, or escape
//! NUL and unpaired surrogates in keys and strings.

use chrono::{Duration, SecondsFormat, Utc};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};
use shared::records::RecordKind;

/// Two servers and three players, so records of one case fold into the same rows.
pub(super) const SERVERS: [&str; 2] = [
    "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10",
    "0b2f5e8a-3c41-4d7e-8f60-1a2b3c4d5e6f",
];
const PLAYERS: [&str; 3] = [
    "069a79f4-44e9-4726-a5be-fca90e38aaf5",
    "853c80ef-3c37-49fd-aa49-938b674adae6",
    "f84c6a79-0a4e-45e0-879b-cd49ebd4c4e2",
];

/// One record: its kind and its JSON text.
pub(super) type RawRecord = (RecordKind, String);

fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        40 => proptest::char::range('a', 'z'),
        1 => Just('\0'),
        8 => select(vec![
            '\u{202e}', '\u{200f}', '\u{1f600}', '\u{10ffff}', '\u{feff}', '\u{1}', '\u{1f}',
            '\u{7f}', '\u{2028}', '\u{fffd}', '\u{301}', '\u{200d}', '"', '\\', '\'', '%',
            '\n', '\u{e9}', '\u{4e2d}', '\u{d7ff}', '\u{e000}',
        ]),
        4 => any::<char>(),
    ]
}

/// Text of any length that matters: short and hostile, or one character repeated up to and
/// past every limit (32, 64, 128, 2048, 4096 characters).
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::collection::vec(hostile_char(), 1..12).prop_map(String::from_iter),
        2 => (
            hostile_char(),
            select(vec![32usize, 33, 64, 65, 128, 129, 2048, 2049, 4096, 4097]),
        )
            .prop_map(|(c, n)| c.to_string().repeat(n)),
    ]
}

/// A record time, as text: mostly recent, often at an edge.
fn time() -> impl Strategy<Value = String> {
    let now = Utc::now();
    let stamp = move |seconds: i64| {
        (now + Duration::seconds(seconds)).to_rfc3339_opts(SecondsFormat::AutoSi, true)
    };
    prop_oneof![
        6 => (-10 * 365 * 86_400i64..0).prop_map(stamp),
        1 => Just(stamp(599)),
        1 => Just(stamp(601)),
        3 => select(vec![
            "0000-01-01T00:00:00Z",
            "0000-01-01T00:00:00+23:59",
            "1969-12-31T23:59:59Z",
            "1999-12-31T23:59:59.999999Z",
            "2000-01-01T00:00:00Z",
            "2000-01-01T00:00:00.000001+00:00",
            "9999-12-31T23:59:59.999999999Z",
            "9999-12-31T23:59:59-23:59",
        ])
        .prop_map(str::to_owned),
    ]
}

/// An expiry, as text: a year or so ahead, or at an edge half the time.
fn expiry() -> impl Strategy<Value = String> {
    let now = Utc::now();
    prop_oneof![
        1 => (60..400 * 86_400i64).prop_map(move |seconds| {
            (now + Duration::seconds(seconds)).to_rfc3339_opts(SecondsFormat::AutoSi, true)
        }),
        1 => time(),
    ]
}

fn integer() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0..500i64,
        1 => select(vec![
            i64::MIN, -1, i64::from(i32::MAX), i64::from(i32::MAX) + 1, 1 << 40, i64::MAX,
        ]),
    ]
}

fn float(max: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..max,
        1 => select(vec![
            -0.0, 5e-324, f64::MIN_POSITIVE, max, max * 1.000_001, 1e12, 1e308, -1e308, f64::MAX,
        ]),
    ]
}

/// An optional field: present half the time.
fn opt<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    proptest::option::of(s)
}

/// A JSON object from `(field, value)` pairs, leaving out the absent ones.
fn object(fields: Vec<(&str, Option<Value>)>) -> String {
    let map: Map<String, Value> = fields
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect();
    Value::Object(map).to_string()
}

fn uuid_of(pool: &'static [&'static str]) -> impl Strategy<Value = Value> {
    select(pool).prop_map(|id| json!(id))
}

fn s<T: Into<Value>>(v: Option<T>) -> Option<Value> {
    v.map(Into::into)
}

fn heartbeat() -> impl Strategy<Value = RawRecord> {
    (
        (
            uuid_of(&SERVERS),
            float(1000.0),
            integer(),
            integer(),
            opt(time()),
        ),
        (
            opt(text()),
            opt(text()),
            opt(float(1e9)),
            opt(float(1e9)),
            opt(any::<bool>()),
        ),
    )
        .prop_map(
            |((server, tps, count, max, at), (name, version, used, cap, online))| {
                let record = object(vec![
                    ("server_id", Some(server)),
                    ("tps", Some(json!(tps))),
                    ("player_count", Some(json!(count))),
                    ("max_players", Some(json!(max))),
                    ("timestamp", s(at)),
                    ("name", s(name)),
                    ("version", s(version)),
                    ("memory_used_mb", s(used)),
                    ("memory_max_mb", s(cap)),
                    ("online", s(online)),
                ]);
                (RecordKind::Heartbeat, record)
            },
        )
}

fn chat() -> impl Strategy<Value = RawRecord> {
    (
        uuid_of(&SERVERS),
        uuid_of(&PLAYERS),
        opt(text()),
        select(vec!["chat", "command"]),
        text(),
        opt(text()),
        opt(time()),
    )
        .prop_map(|(server, player, name, kind, message, channel, at)| {
            let record = object(vec![
                ("server_id", Some(server)),
                ("player_uuid", Some(player)),
                ("player_name", s(name)),
                ("entry_type", Some(json!(kind))),
                ("message", Some(json!(message))),
                ("channel", s(channel)),
                ("sent_at", s(at)),
            ]);
            (RecordKind::Chat, record)
        })
}

fn punishment() -> impl Strategy<Value = RawRecord> {
    let external_id =
        prop_oneof![3 => select(vec!["17", "18"]).prop_map(str::to_owned), 1 => text()];
    (
        (uuid_of(&SERVERS), uuid_of(&PLAYERS), opt(text())),
        (
            select(vec!["ban", "mute", "kick", "warning"]),
            select(vec!["issue", "issue", "revoke"]),
            opt(text()),
            opt(uuid_of(&PLAYERS)),
            opt(text()),
        ),
        (opt(time()), opt(expiry()), opt(any::<bool>()), opt(text())),
        (
            opt(select(vec!["litebans".to_owned(), "\u{1f600}".repeat(64)])),
            opt(external_id),
            opt(text()),
        ),
    )
        .prop_map(
            |((server, player, name), (kind, action, reason, staff, staff_name), times, ids)| {
                let (issued, expires, ip_based, scope) = times;
                let (source, external_id, revoke_reason) = ids;
                let record = object(vec![
                    ("server_id", Some(server)),
                    ("player_uuid", Some(player)),
                    ("player_name", s(name)),
                    ("type", Some(json!(kind))),
                    ("action", Some(json!(action))),
                    ("reason", s(reason)),
                    ("staff_uuid", staff),
                    ("staff_name", s(staff_name)),
                    ("issued_at", s(issued)),
                    ("expires_at", s(expires)),
                    ("ip_based", s(ip_based)),
                    ("scope", s(scope)),
                    ("source_plugin", s(source)),
                    ("external_id", s(external_id)),
                    ("revoke_reason", s(revoke_reason)),
                ]);
                (RecordKind::Punishment, record)
            },
        )
}

fn anticheat_flag() -> impl Strategy<Value = RawRecord> {
    (
        (
            uuid_of(&SERVERS),
            uuid_of(&PLAYERS),
            opt(text()),
            text(),
            opt(text()),
        ),
        (float(1e12), opt(text()), opt(text()), opt(any::<bool>())),
        (opt(float(1e7)), opt(float(1000.0)), opt(time())),
    )
        .prop_map(|((server, player, name, check, check_type), rest, more)| {
            let (level, detail, source, experimental) = rest;
            let (ping, tps, at) = more;
            let record = object(vec![
                ("server_id", Some(server)),
                ("player_uuid", Some(player)),
                ("player_name", s(name)),
                ("check_name", Some(json!(check))),
                ("check_type", s(check_type)),
                ("violation_level", Some(json!(level))),
                ("detail", s(detail)),
                ("source_plugin", s(source)),
                ("is_experimental", s(experimental)),
                ("ping_ms", s(ping)),
                ("tps", s(tps)),
                ("flagged_at", s(at)),
            ]);
            (RecordKind::AnticheatFlag, record)
        })
}

fn session() -> impl Strategy<Value = RawRecord> {
    (
        uuid_of(&SERVERS),
        uuid_of(&PLAYERS),
        text(),
        select(vec!["join", "quit"]),
        opt(time()),
        opt(text()),
        opt(select(vec!["203.0.113.7", "::ffff:1.2.3.4", "not-an-ip"])),
    )
        .prop_map(|(server, player, name, event, at, version, ip)| {
            let record = object(vec![
                ("server_id", Some(server)),
                ("player_uuid", Some(player)),
                ("player_name", Some(json!(name))),
                ("event", Some(json!(event))),
                ("at", s(at)),
                ("client_version", s(version)),
                ("ip", s(ip)),
            ]);
            (RecordKind::Session, record)
        })
}

fn rank_change() -> impl Strategy<Value = RawRecord> {
    (
        (
            uuid_of(&PLAYERS),
            opt(text()),
            select(vec!["add", "remove", "set"]),
            text(),
        ),
        (
            opt(text()),
            opt(uuid_of(&SERVERS)),
            opt(uuid_of(&PLAYERS)),
            opt(text()),
        ),
        (opt(expiry()), opt(time())),
    )
        .prop_map(|((player, name, action, group), rest, (expires, at))| {
            let (previous, server, staff, staff_name) = rest;
            let record = object(vec![
                ("player_uuid", Some(player)),
                ("player_name", s(name)),
                ("action", Some(json!(action))),
                ("group", Some(json!(group))),
                ("previous_group", s(previous)),
                ("server_id", server),
                ("staff_uuid", staff),
                ("staff_name", s(staff_name)),
                ("expires_at", s(expires)),
                ("changed_at", s(at)),
            ]);
            (RecordKind::RankChange, record)
        })
}

fn account_link() -> impl Strategy<Value = RawRecord> {
    (
        uuid_of(&PLAYERS),
        text(),
        text(),
        opt(text()),
        select(vec!["link", "unlink"]),
        opt(time()),
    )
        .prop_map(
            |(player, platform, external_id, external_name, action, at)| {
                let record = object(vec![
                    ("player_uuid", Some(player)),
                    ("platform", Some(json!(platform))),
                    ("external_id", Some(json!(external_id))),
                    ("external_name", s(external_name)),
                    ("action", Some(json!(action))),
                    ("at", s(at)),
                ]);
                (RecordKind::AccountLink, record)
            },
        )
}

/// A JSON string literal: plain (hostile) text and raw escapes, NUL and surrogates included.
fn string_literal() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        12 => text().prop_map(|t| {
            let quoted = Value::String(t.chars().take(40).collect()).to_string();
            quoted[1..quoted.len() - 1].to_owned()
        }),
        1 => select(vec![
            r"\u0000", r"\ud800", r"\udfff", r"\ud83d\ude00", r"\\u0000", r"\u202E", r"\n",
            r#"\""#, r"\\", r"\/", r"\u00e9",
        ])
        .prop_map(str::to_owned),
    ];
    proptest::collection::vec(piece, 0..4).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        select(vec![
            "0",
            "-0",
            "1.50",
            "1E+2",
            "12345678901234567890123",
            "1e308",
            "-1e-308",
            "5e-324",
            "true",
            "false",
            "null",
        ])
        .prop_map(str::to_owned),
        string_literal(),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6)
                .prop_map(|items| format!("[{}]", items.join(","))),
            proptest::collection::vec((string_literal(), inner), 0..6).prop_map(|fields| {
                let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// `properties` as raw JSON text: an object (ordinary, nested 60..70 deep, or about 64 KiB), or
/// null or a non-object now and then.
fn properties() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => proptest::collection::vec((string_literal(), json_value()), 0..8).prop_map(|fields| {
            let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", fields.join(","))
        }),
        1 => (60usize..70, string_literal()).prop_map(|(levels, leaf)| {
            format!("{}{leaf}{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
        }),
        1 => (65_520usize..65_540).prop_map(|n| format!(r#"{{"f":"{}"}}"#, "x".repeat(n - 8))),
        1 => select(vec!["null", "[1]", "\"text\""]).prop_map(str::to_owned),
    ]
}

fn custom_event() -> impl Strategy<Value = RawRecord> {
    let name = prop_oneof![
        6 => select(vec!["crate_opened", "level_up", "a"]).prop_map(str::to_owned),
        1 => Just("x".repeat(64)),
        1 => select(vec!["chat_spam", "Bad-Name", "", "a\u{0}"]).prop_map(str::to_owned),
    ];
    (uuid_of(&PLAYERS), name, opt(properties()), opt(time())).prop_map(
        |(player, name, properties, at)| {
            let mut record = object(vec![
                ("player_uuid", Some(player)),
                ("name", Some(json!(name))),
                ("occurred_at", s(at)),
            ]);
            if let Some(properties) = properties {
                record.pop();
                record = format!(r#"{record},"properties":{properties}}}"#);
            }
            (RecordKind::Custom, record)
        },
    )
}

/// An evidence link: a web link with hostile text in it, at and past the 500-character limit,
/// or no web link at all.
fn link() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => text().prop_map(|path| format!("https://clips.example/{path}")),
        1 => select(vec![482usize, 483])
            .prop_map(|n| format!("https://a.example/{}", "x".repeat(n))),
        1 => select(vec![
            "javascript:alert(1)", "https://", "ftp://a.example", "https://a.example/\u{0}",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A staff note as query-api logs it (the projector validates notes itself: only the
/// dashboard writes them, yet a hostile one must never stop it).
fn note() -> impl Strategy<Value = RawRecord> {
    let body = prop_oneof![
        4 => text(),
        1 => (hostile_char(), select(vec![2000usize, 2001]))
            .prop_map(|(c, n)| c.to_string().repeat(n)),
    ];
    (
        (uuid_of(&PLAYERS), opt(uuid_of(&PLAYERS)), body),
        (
            prop_oneof![
                4 => proptest::collection::vec(link(), 0..3),
                1 => proptest::collection::vec(link(), 5..7),
            ],
            uuid_of(&PLAYERS),
            prop_oneof![
                3 => select(vec!["Mia", "Ops \u{1f600}"]).prop_map(str::to_owned),
                1 => text(),
            ],
            time(),
        ),
    )
        .prop_map(
            |((player, punishment, body), (evidence, member, author, at))| {
                let record = object(vec![
                    ("player_uuid", Some(player)),
                    ("punishment_id", punishment),
                    ("text", Some(json!(body))),
                    ("evidence", Some(json!(evidence))),
                    ("author", Some(json!({"member_id": member, "name": author}))),
                    ("written_at", Some(json!(at))),
                ]);
                (RecordKind::Note, record)
            },
        )
}

/// Any record of any kind.
pub(super) fn record() -> impl Strategy<Value = RawRecord> {
    prop_oneof![
        2 => heartbeat().boxed(),
        2 => chat().boxed(),
        3 => punishment().boxed(),
        2 => anticheat_flag().boxed(),
        2 => session().boxed(),
        3 => rank_change().boxed(),
        2 => account_link().boxed(),
        2 => custom_event().boxed(),
        2 => note().boxed(),
    ]
}
