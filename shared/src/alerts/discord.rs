//! A notification as a Discord webhook message: one readable embed.
//!
//! Every string that came from a plugin or an admin (player names, reasons, group names, rule
//! names) is escaped: Discord markdown is neutralised and `@` is broken with a zero-width space,
//! so a player called `@everyone` or a reason holding `[click](https://...)` shows as typed and
//! pings nobody; `allowed_mentions: {"parse": []}` backs that up on Discord's side. Texts are
//! clipped to Discord's embed limits (an over-long embed is refused with a 400, which would
//! retry forever for nothing).

use chrono::DateTime;
use serde_json::{Map, Value, json};

/// Discord's limits on one embed, in characters.
pub const MAX_TITLE: usize = 256;
/// The description's limit.
pub const MAX_DESCRIPTION: usize = 4096;
/// A field name's limit.
pub const MAX_FIELD_NAME: usize = 256;
/// A field value's limit.
pub const MAX_FIELD_VALUE: usize = 1024;
/// The most fields an embed may have.
pub const MAX_FIELDS: usize = 25;
/// The limit on all of an embed's texts together.
pub const MAX_EMBED_TOTAL: usize = 6000;

/// How one event type reads: its title (with `{key}` replaced by a data value), colour,
/// description, fields (label, data key) and the data key of when it happened.
struct Layout {
    title: &'static str,
    color: u32,
    description: &'static str,
    fields: &'static [(&'static str, &'static str)],
    time: Option<&'static str>,
}

const RED: u32 = 0xE7_4C_3C;
const GREEN: u32 = 0x2E_CC_71;
const ORANGE: u32 = 0xE6_7E_22;
const BLUE: u32 = 0x34_98_DB;
const GREY: u32 = 0x95_A5_A6;
const PURPLE: u32 = 0x9B_59_B6;

const PUNISHMENT_FIELDS: &[(&str, &str)] = &[
    ("Player", "player_name"),
    ("Player UUID", "player_uuid"),
    ("Staff", "staff_name"),
    ("Server", "server_id"),
    ("Issued", "issued_at"),
    ("Expires", "expires_at"),
    ("Revoke reason", "revoke_reason"),
    ("Punishment ID", "punishment_id"),
];

const RANK_FIELDS: &[(&str, &str)] = &[
    ("Player UUID", "player_uuid"),
    ("Group", "group"),
    ("Previous group", "previous_group"),
    ("Changed by", "staff_name"),
];

fn layout(event_type: &str) -> Layout {
    let (title, color, description, fields, time): (_, _, _, &[(&str, &str)], _) = match event_type
    {
        "punishment.issued" => (
            "{punishment_type} issued: {player_name}",
            RED,
            "{reason}",
            PUNISHMENT_FIELDS,
            Some("issued_at"),
        ),
        "punishment.revoked" => (
            "{punishment_type} revoked: {player_name}",
            GREEN,
            "{reason}",
            PUNISHMENT_FIELDS,
            None,
        ),
        "anticheat.threshold" => (
            "Anti-cheat: {player_name}",
            ORANGE,
            "{flags} flags within {window_seconds} seconds",
            &[
                ("Checks", "checks"),
                ("Player UUID", "player_uuid"),
                ("Server", "server_id"),
            ],
            None,
        ),
        "server.offline" => (
            "Server offline: {server_name}",
            RED,
            "No heartbeat since {last_heartbeat_at}",
            &[
                ("Server ID", "server_id"),
                ("Last heartbeat", "last_heartbeat_at"),
            ],
            Some("last_heartbeat_at"),
        ),
        "server.online" => (
            "Server back online: {server_name}",
            GREEN,
            "Offline since {offline_since}",
            &[("Server ID", "server_id")],
            None,
        ),
        "server.tps_low" => (
            "Low TPS: {server_name}",
            ORANGE,
            "TPS {tps}, below {below} for {minutes} minutes",
            &[("Server ID", "server_id"), ("Since", "since")],
            Some("since"),
        ),
        "server.tps_recovered" => (
            "TPS recovered: {server_name}",
            GREEN,
            "TPS {tps}, back at or above {below}",
            &[("Server ID", "server_id"), ("Low since", "since")],
            None,
        ),
        "player.banned_alt_joined" => (
            "Banned player's alt joined: {player_name}",
            PURPLE,
            "Shares an address with a banned player",
            &[
                ("Banned alts", "banned_alts"),
                ("Player UUID", "player_uuid"),
                ("Server", "server_id"),
            ],
            None,
        ),
        "rank.staff_joined" => ("Joined staff: {player_name}", BLUE, "", RANK_FIELDS, None),
        "rank.staff_left" => ("Left staff: {player_name}", GREY, "", RANK_FIELDS, None),
        "event.custom" => (
            "Event: {name}",
            BLUE,
            "",
            &[
                ("Player UUID", "player_uuid"),
                ("Properties", "properties"),
                ("Occurred", "occurred_at"),
            ],
            Some("occurred_at"),
        ),
        "test" => (
            "Test event",
            GREY,
            "{message}",
            &[("Destination", "destination_id")],
            None,
        ),
        _ => ("", GREY, "", &[], None),
    };
    Layout {
        title,
        color,
        description,
        fields,
        time,
    }
}

/// The Discord webhook body for a notification.
pub fn render(event_type: &str, data: &Value) -> Value {
    let empty = Map::new();
    let data = data.as_object().unwrap_or(&empty);
    let layout = layout(event_type);

    let title = if layout.title.is_empty() {
        escape(event_type)
    } else {
        fill(layout.title, data)
    };
    let mut fields: Vec<(String, String)> = layout
        .fields
        .iter()
        .filter_map(|(label, key)| {
            let value = data.get(*key).filter(|v| !is_blank(v))?;
            Some(((*label).to_owned(), field_value(key, value)))
        })
        .collect();
    if layout.fields.is_empty() {
        // An event type this version does not know: show whatever it carries.
        fields.extend(
            data.iter()
                .filter(|(_, v)| !is_blank(v))
                .map(|(k, v)| (escape(k), field_value(k, v))),
        );
    }
    if let Some(rule) = data.get("rule_name").and_then(Value::as_str) {
        fields.push(("Rule".to_owned(), escape(rule)));
    }
    let mut embed = Embed {
        title: clip(&title, MAX_TITLE),
        description: clip(&fill(layout.description, data), MAX_DESCRIPTION),
        fields: fields
            .into_iter()
            .take(MAX_FIELDS)
            .map(|(n, v)| (clip(&n, MAX_FIELD_NAME), clip(&v, MAX_FIELD_VALUE)))
            .collect(),
    };
    embed.fit(MAX_EMBED_TOTAL - FOOTER_PREFIX.len() - MAX_FOOTER_TYPE);

    let mut out = json!({
        "title": embed.title,
        "color": layout.color,
        "fields": embed.fields.iter().map(field_json).collect::<Vec<_>>(),
        "footer": {"text": format!("{FOOTER_PREFIX}{}", clip(event_type, MAX_FOOTER_TYPE))},
    });
    if !embed.description.is_empty() {
        out["description"] = Value::String(embed.description);
    }
    if let Some(time) = layout
        .time
        .and_then(|k| data.get(k))
        .and_then(Value::as_str)
        && let Ok(time) = DateTime::parse_from_rfc3339(time)
    {
        out["timestamp"] = Value::String(time.to_rfc3339());
    }
    json!({
        "username": "Warden",
        "allowed_mentions": {"parse": []},
        "embeds": [out],
    })
}

/// One embed field; short values sit side by side.
fn field_json((name, value): &(String, String)) -> Value {
    json!({"name": name, "value": value, "inline": value.chars().count() <= 40})
}

/// Footer text before the event type.
const FOOTER_PREFIX: &str = "Warden · ";

/// The most characters of the event type shown in the footer.
const MAX_FOOTER_TYPE: usize = 64;

/// An embed's texts, escaped and clipped.
struct Embed {
    title: String,
    description: String,
    fields: Vec<(String, String)>,
}

impl Embed {
    fn total(&self) -> usize {
        self.title.chars().count()
            + self.description.chars().count()
            + self
                .fields
                .iter()
                .map(|(n, v)| n.chars().count() + v.chars().count())
                .sum::<usize>()
    }

    /// Drops fields from the end, then shortens the description, until all fits in `budget`.
    fn fit(&mut self, budget: usize) {
        while self.total() > budget && !self.fields.is_empty() {
            self.fields.pop();
        }
        let over = self.total().saturating_sub(budget);
        if over > 0 {
            let keep = self.description.chars().count().saturating_sub(over);
            self.description = clip(&self.description, keep);
        }
    }
}

/// Whether a value has nothing to show.
fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// `template` with each `{key}` replaced by the escaped text of `data[key]` (`unknown` when
/// absent); the first letter of a punishment type is capitalised (`Ban issued`).
fn fill(template: &str, data: &Map<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let key = &rest[start + 1..start + len];
        let text = match data.get(key).filter(|v| !is_blank(v)) {
            Some(value) => plain(value),
            None if key == "reason" => "No reason given".to_owned(),
            None => "unknown".to_owned(),
        };
        let text = if key == "punishment_type" {
            capitalise(&text)
        } else {
            text
        };
        out.push_str(&escape(&text));
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A value as unescaped text: strings as they are, lists joined, objects as `key: value`.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                // banned_alts: [{uuid, username}]
                Value::Object(o) => o
                    .get("username")
                    .or_else(|| o.get("uuid"))
                    .map(plain)
                    .unwrap_or_else(|| item.to_string()),
                other => plain(other),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}: {}", plain(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A field's value: times as Discord timestamps (shown in each reader's time zone), everything
/// else escaped text.
fn field_value(key: &str, value: &Value) -> String {
    if (key.ends_with("_at") || key == "since" || key == "offline_since")
        && let Some(time) = value
            .as_str()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
    {
        return format!("<t:{}:f>", time.timestamp());
    }
    escape(&plain(value))
}

/// `text` with Discord markdown and mentions neutralised, and control characters (except the
/// newlines of a multi-line value) turned into spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' | '*' | '_' | '~' | '`' | '|' | '>' | '<' | '[' | ']' | '(' | ')' | '#' | '-'
            | ':' => {
                out.push('\\');
                out.push(c);
            }
            // A zero-width space after `@` keeps `@everyone` and `@here` from being mentions.
            '@' => out.push_str("@\u{200B}"),
            '\n' => out.push('\n'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to at most `max` characters, ending in `…` when cut; never ends inside an escape
/// (a lone trailing backslash would escape the ellipsis and leave the cut unmarked).
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept: String = text.chars().take(max - 1).collect();
    let trailing = kept.chars().rev().take_while(|c| *c == '\\').count();
    if trailing % 2 == 1 {
        kept.pop();
    }
    kept.push('…');
    kept
}

#[cfg(test)]
#[path = "discord_tests.rs"]
mod tests;
