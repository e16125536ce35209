//! The hostile records and what each must come to: refused (422 naming the field) or stored
//! and read back exactly.

use crate::dashboard::{ago, now};
use serde_json::{Value, json};

const SERVER: &str = "0badc0de-0000-4000-8000-000000000001";
pub(super) const PLAYER: &str = "0badc0de-0000-4000-8000-0000000000aa";

/// Right-to-left override, zero-width space and joiner, emoji, and markup that must stay text.
pub(super) const TRICKY: &str =
    "\u{202e}<script>alert(1)</script>\u{200b}\u{200d}\u{1f600}<img src=x onerror=alert(2)>";
/// A 4-byte character: 750 of them are 3,000 bytes, past a btree entry's ~2,700.
const WIDE: &str = "\u{1d54f}";

/// What a hostile record must come to.
pub(super) enum Expect {
    /// 422 naming this field.
    Refused(&'static str),
    /// 202, and the read at `path` shows the record as `holds` describes.
    Stored {
        path: String,
        holds: Box<dyn Fn(&Value) -> bool + Send + Sync>,
    },
}

pub(super) struct Case {
    pub(super) what: &'static str,
    pub(super) path: &'static str,
    pub(super) body: Value,
    pub(super) expect: Expect,
}

fn refused(what: &'static str, path: &'static str, field: &'static str, body: Value) -> Case {
    Case {
        what,
        path,
        body,
        expect: Expect::Refused(field),
    }
}

fn stored(
    what: &'static str,
    path: &'static str,
    body: Value,
    read: String,
    holds: impl Fn(&Value) -> bool + Send + Sync + 'static,
) -> Case {
    Case {
        what,
        path,
        body,
        expect: Expect::Stored {
            path: read,
            holds: Box::new(holds),
        },
    }
}

/// True when some item of the list response at `body` has `field` equal to `value`.
pub(super) fn listed(body: &Value, field: &str, value: &Value) -> bool {
    body["items"]
        .as_array()
        .is_some_and(|items| items.iter().any(|item| &item[field] == value))
}

/// `{"a": {"a": ... leaf ...}}`, `depth` objects deep.
fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |inner, _| json!({ "a": inner }))
}

fn heartbeat(extra: Value) -> Value {
    merge(
        json!({"server_id": SERVER, "tps": 20.0, "player_count": 1, "max_players": 100}),
        extra,
    )
}

pub(super) fn chat(extra: Value) -> Value {
    let base = json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Hostile",
                      "entry_type": "chat", "message": "hello", "channel": "global"});
    merge(base, extra)
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

pub(super) fn cases() -> Vec<Case> {
    let now = now();
    let wide = |n: usize| WIDE.repeat(n);
    let player = format!("/api/players/{PLAYER}");
    let chatlog = format!("/api/players/{PLAYER}/chatlog?limit=500");
    let flags = format!("/api/players/{PLAYER}/flags");
    let punishments = format!("/api/players/{PLAYER}/punishments");
    let flag = |extra: Value| {
        merge(
            json!({"server_id": SERVER, "player_uuid": PLAYER, "check_name": "Reach",
                   "violation_level": 1.0}),
            extra,
        )
    };
    let punishment = |extra: Value| {
        merge(
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "mute",
                   "issued_at": ago(now, 60)}),
            extra,
        )
    };
    // The latest record naming the player (its name becomes the username).
    let session = |extra: Value| {
        merge(
            json!({"server_id": SERVER, "player_uuid": PLAYER, "event": "join",
                   "at": ago(now, 5)}),
            extra,
        )
    };
    let rank = |extra: Value| {
        merge(
            json!({"player_uuid": PLAYER, "action": "add", "group": "vip"}),
            extra,
        )
    };
    let link = |extra: Value| {
        merge(
            json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "1234",
                   "action": "link", "at": ago(now, 30)}),
            extra,
        )
    };
    let event = |name: &str, properties: Value| json!({"player_uuid": PLAYER, "name": name, "properties": properties});
    let deep_leaf = json!({"huge": 1e308, "tiny": -1e308, "text": TRICKY});
    let deep = nested(60, deep_leaf);
    let deep_sent = deep.clone();
    let events = |name: &str| format!("/api/v1/events?name={name}&player_uuid={PLAYER}");
    vec![
        refused(
            "player_count 2^40",
            "/api/plugin/heartbeat",
            "player_count",
            heartbeat(json!({"player_count": 1_u64 << 40})),
        ),
        refused(
            "tps 1e308",
            "/api/plugin/heartbeat",
            "tps",
            heartbeat(json!({"tps": 1e308})),
        ),
        refused(
            "memory_used_mb -1e308",
            "/api/plugin/heartbeat",
            "memory_used_mb",
            heartbeat(json!({"memory_used_mb": -1e308})),
        ),
        refused(
            "NUL in a server name",
            "/api/plugin/heartbeat",
            "name",
            heartbeat(json!({"name": "lobby\u{0}1"})),
        ),
        refused(
            "heartbeat in year 9999",
            "/api/plugin/heartbeat",
            "timestamp",
            heartbeat(json!({"timestamp": "9999-12-31T23:59:59Z"})),
        ),
        stored(
            "markup and RTL in a server name",
            "/api/plugin/heartbeat",
            heartbeat(json!({"name": TRICKY})),
            "/api/servers".into(),
            |body| listed(body, "name", &json!(TRICKY)),
        ),
        refused(
            "NUL in a chat message",
            "/api/plugin/chat",
            "message",
            chat(json!({"message": "a\u{0}b"})),
        ),
        refused(
            "3,000-byte channel",
            "/api/plugin/chat",
            "channel",
            chat(json!({"channel": wide(750)})),
        ),
        refused(
            "chat sent in year 0001",
            "/api/plugin/chat",
            "sent_at",
            chat(json!({"sent_at": "0001-01-01T00:00:00Z"})),
        ),
        refused(
            "3,000-byte player name in chat",
            "/api/plugin/chat",
            "player_name",
            chat(json!({"player_name": wide(750)})),
        ),
        stored(
            "markup, RTL and emoji in a chat message",
            "/api/plugin/chat",
            chat(json!({"message": TRICKY, "sent_at": ago(now, 50)})),
            chatlog,
            |body| listed(body, "message", &json!(TRICKY)),
        ),
        refused(
            "NUL in a punishment reason",
            "/api/plugin/punishments",
            "reason",
            punishment(json!({"reason": "spam\u{0}"})),
        ),
        refused(
            "3,000-byte staff name",
            "/api/plugin/punishments",
            "staff_name",
            punishment(json!({"staff_name": wide(750)})),
        ),
        stored(
            "a mute until 9999-12-31",
            "/api/plugin/punishments",
            punishment(json!({"expires_at": "9999-12-31T23:59:59Z", "reason": TRICKY})),
            punishments,
            |body| {
                listed(body, "expires_at", &json!("9999-12-31T23:59:59Z"))
                    && listed(body, "reason", &json!(TRICKY))
            },
        ),
        refused(
            "3,000-byte check name",
            "/api/plugin/anticheat-flags",
            "check_name",
            flag(json!({"check_name": wide(750)})),
        ),
        refused(
            "violation level 1e308",
            "/api/plugin/anticheat-flags",
            "violation_level",
            flag(json!({"violation_level": 1e308})),
        ),
        refused(
            "NUL in a check name",
            "/api/plugin/anticheat-flags",
            "check_name",
            flag(json!({"check_name": "Re\u{0}ach"})),
        ),
        stored(
            "a check name of 128 four-byte characters",
            "/api/plugin/anticheat-flags",
            flag(json!({"check_name": wide(128), "detail": TRICKY})),
            flags,
            |body| listed(body, "check_name", &json!(WIDE.repeat(128))),
        ),
        refused(
            "NUL in a session's player name",
            "/api/plugin/sessions",
            "player_name",
            session(json!({"player_name": "Ste\u{0}ve"})),
        ),
        refused(
            "3,000-byte session player name",
            "/api/plugin/sessions",
            "player_name",
            session(json!({"player_name": wide(750)})),
        ),
        stored(
            "RTL and zero-width in a player name",
            "/api/plugin/sessions",
            session(json!({"player_name": "\u{202e}nimdA\u{200b}"})),
            player.clone(),
            |body| body["username"] == json!("\u{202e}nimdA\u{200b}"),
        ),
        refused(
            "3,000-byte rank group",
            "/api/plugin/rank-changes",
            "group",
            rank(json!({"group": wide(750)})),
        ),
        refused(
            "NUL in a rank group",
            "/api/plugin/rank-changes",
            "group",
            rank(json!({"group": "vi\u{0}p"})),
        ),
        refused(
            "rank change in year 9999",
            "/api/plugin/rank-changes",
            "changed_at",
            rank(json!({"changed_at": "9999-12-31T23:59:59Z"})),
        ),
        refused(
            "NUL in a link's external id",
            "/api/plugin/account-links",
            "external_id",
            link(json!({"external_id": "12\u{0}34"})),
        ),
        stored(
            "markup in a link's external name",
            "/api/plugin/account-links",
            link(json!({"external_name": TRICKY})),
            player,
            |body| body["linked_account"]["external_name"] == json!(TRICKY),
        ),
        refused(
            "NUL in a property value",
            "/api/v1/plugin/events",
            "properties",
            event("hostile_nul_value", json!({"note": "a\u{0}b"})),
        ),
        refused(
            "NUL in a property key",
            "/api/v1/plugin/events",
            "properties",
            event("hostile_nul_key", json!({"a\u{0}b": 1})),
        ),
        refused(
            "properties 65 levels deep",
            "/api/v1/plugin/events",
            "properties",
            event("hostile_too_deep", nested(65, json!(1))),
        ),
        refused(
            "event in year 9999",
            "/api/v1/plugin/events",
            "occurred_at",
            merge(
                event("hostile_future", json!({})),
                json!({"occurred_at": "9999-12-31T23:59:59Z"}),
            ),
        ),
        stored(
            "properties 60 deep holding ±1e308 and markup",
            "/api/v1/plugin/events",
            event("hostile_deep", deep),
            events("hostile_deep"),
            move |body| listed(body, "properties", &deep_sent),
        ),
    ]
}
