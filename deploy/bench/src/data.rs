//! Synthetic records: chat batches as plugins send them, and the log messages ingest would
//! append for them (same envelope, same sizes).

use chrono::{DateTime, Utc};
use rand::Rng;
use rand::seq::IndexedRandom;
use serde_json::value::RawValue;
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::records::{ChatEntry, ChatEntryType, CustomEvent, Session, SessionEvent};
use uuid::Uuid;

/// Records per chat batch, as the issue specifies.
pub(crate) const CHAT_BATCH: usize = 100;

/// The words chat lines are made of (each in about a quarter of the lines).
pub(crate) const WORDS: &[&str] = &[
    "gg",
    "anyone",
    "trade",
    "diamonds",
    "for",
    "my",
    "netherite",
    "lol",
    "where",
    "is",
    "the",
    "spawn",
    "shop",
    "lag",
    "again",
    "nice",
    "build",
    "who",
    "wants",
    "to",
    "party",
    "up",
    "boss",
    "raid",
    "tonight",
    "sell",
    "emeralds",
    "cheap",
    "thanks",
    "help",
    "base",
    "griefed",
];
const CHANNELS: &[&str] = &["global", "local", "trade", "staff"];
/// Custom event names the generators use; the funnel reads the first three in order.
pub(crate) const EVENT_NAMES: &[&str] = &[
    "quest_started",
    "quest_progress",
    "quest_completed",
    "crate_opened",
    "shop_purchase",
    "level_up",
    "vote_cast",
    "kit_claimed",
];

/// A chat line of 3..=14 words.
pub(crate) fn chat_text(rng: &mut impl Rng) -> String {
    let words = rng.random_range(3..=14);
    let mut text = String::with_capacity(words * 7);
    for i in 0..words {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(WORDS.choose(rng).unwrap_or(&"gg"));
    }
    text
}

/// A player's name derived from its index.
pub(crate) fn player_name(index: usize) -> String {
    format!("Player{index}")
}

/// One chat entry by one of `players` on `server`.
pub(crate) fn chat_entry(
    rng: &mut impl Rng,
    server: Uuid,
    players: &[Uuid],
    now: DateTime<Utc>,
) -> ChatEntry {
    let index = rng.random_range(0..players.len().max(1));
    ChatEntry {
        server_id: server,
        player_uuid: players.get(index).copied().unwrap_or_else(Uuid::nil),
        player_name: Some(player_name(index)),
        entry_type: if rng.random_bool(0.1) {
            ChatEntryType::Command
        } else {
            ChatEntryType::Chat
        },
        message: chat_text(rng),
        channel: Some((*CHANNELS.choose(rng).unwrap_or(&"global")).to_owned()),
        sent_at: Some(now),
    }
}

/// A chat entry with its client id, as a plugin sends it.
#[derive(serde::Serialize)]
struct ChatWithId {
    id: Uuid,
    #[serde(flatten)]
    entry: ChatEntry,
}

/// 100-record chat batches with client ids, as plugins post them (`POST /api/plugin/chat`),
/// made ahead of the timed load: the texts, players and servers of a few templates, each
/// request getting fresh ids stamped in place. The raw publish baseline builds its payloads
/// before its clock starts too, so neither side pays for generating data while measured.
pub(crate) struct ChatBodies {
    /// Each template's JSON and the byte offset of each record's id in it.
    templates: Vec<(Vec<u8>, Vec<usize>)>,
    /// Distinct players in the templates.
    speakers: usize,
}

/// Templates made per run; requests cycle through them.
pub(crate) const CHAT_TEMPLATES: usize = 64;
/// A hyphenated UUID's length.
const UUID_TEXT: usize = 36;

impl ChatBodies {
    /// Makes the templates (each from its own simulated server).
    pub(crate) fn new(rng: &mut impl Rng, players: &[Uuid]) -> anyhow::Result<ChatBodies> {
        Self::with_templates(rng, players, CHAT_TEMPLATES)
    }

    /// Makes `count` templates (at least one), so that more records, and so more of a large
    /// player pool, appear in the load.
    pub(crate) fn with_templates(
        rng: &mut impl Rng,
        players: &[Uuid],
        count: usize,
    ) -> anyhow::Result<ChatBodies> {
        let now = Utc::now();
        let count = count.max(1);
        let mut templates = Vec::with_capacity(count);
        let mut speakers = std::collections::HashSet::new();
        for _ in 0..count {
            let server = Uuid::new_v4();
            let records: Vec<ChatWithId> = (0..CHAT_BATCH)
                .map(|_| ChatWithId {
                    id: Uuid::new_v4(),
                    entry: chat_entry(rng, server, players, now),
                })
                .collect();
            speakers.extend(records.iter().map(|r| r.entry.player_uuid));
            let body = serde_json::to_vec(&records)?;
            let text = String::from_utf8_lossy(&body).into_owned();
            let offsets = records
                .iter()
                .map(|r| {
                    let id = format!("\"id\":\"{}\"", r.id.hyphenated());
                    text.find(&id)
                        .map(|at| at + "\"id\":\"".len())
                        .ok_or_else(|| anyhow::anyhow!("a template lost a record id"))
                })
                .collect::<anyhow::Result<Vec<usize>>>()?;
            templates.push((body, offsets));
        }
        Ok(ChatBodies {
            templates,
            speakers: speakers.len(),
        })
    }

    /// How many templates there are (a pass over them posts each once).
    pub(crate) fn len(&self) -> usize {
        self.templates.len()
    }

    /// How many distinct players speak in the templates.
    pub(crate) fn speakers(&self) -> usize {
        self.speakers
    }

    /// The `n`th body: a template with a fresh id stamped on every record.
    pub(crate) fn body(&self, n: usize) -> Vec<u8> {
        let (template, offsets) = &self.templates[n % self.templates.len()];
        let mut body = template.clone();
        for &at in offsets {
            Uuid::now_v7()
                .hyphenated()
                .encode_lower(&mut body[at..at + UUID_TEXT]);
        }
        body
    }
}

/// The log message ingest appends for a 100-record chat batch.
pub(crate) fn chat_log_message(
    rng: &mut impl Rng,
    account: Uuid,
    server: Uuid,
    players: &[Uuid],
) -> LogMessage {
    let now = Utc::now();
    let records = (0..CHAT_BATCH)
        .map(|_| Logged {
            id: Uuid::now_v7(),
            record: chat_entry(rng, server, players, now),
        })
        .collect();
    LogMessage::new(account, now, RecordBatch::Chat(records))
}

/// One custom event (properties as a plugin would send them).
pub(crate) fn custom_event(
    rng: &mut impl Rng,
    player: Uuid,
    name: &str,
    at: DateTime<Utc>,
) -> CustomEvent {
    let properties = format!(r#"{{"tier":"gold","amount":{}}}"#, rng.random_range(1..100));
    CustomEvent {
        player_uuid: player,
        name: name.to_owned(),
        properties: RawValue::from_string(properties).ok(),
        occurred_at: Some(at),
    }
}

/// A log message of the mixed backlog: 70% chat batches, 20% custom-event batches (20 each),
/// 10% join/quit batches (20 each). Returns it with its record count.
pub(crate) fn mixed_log_message(
    rng: &mut impl Rng,
    account: Uuid,
    servers: &[Uuid],
    players: &[Uuid],
) -> (LogMessage, usize) {
    let server = servers.choose(rng).copied().unwrap_or_else(Uuid::nil);
    let now = Utc::now();
    let pick = rng.random_range(0..10);
    let batch = if pick < 7 {
        return {
            let message = chat_log_message(rng, account, server, players);
            (message, CHAT_BATCH)
        };
    } else if pick < 9 {
        let name = EVENT_NAMES.choose(rng).unwrap_or(&"crate_opened");
        RecordBatch::Custom(
            (0..20)
                .map(|_| {
                    let player = players.choose(rng).copied().unwrap_or_else(Uuid::nil);
                    Logged {
                        id: Uuid::now_v7(),
                        record: custom_event(rng, player, name, now),
                    }
                })
                .collect(),
        )
    } else {
        RecordBatch::Session(
            (0..20)
                .map(|i| {
                    let index = rng.random_range(0..players.len().max(1));
                    Logged {
                        id: Uuid::now_v7(),
                        record: Session {
                            server_id: server,
                            player_uuid: players.get(index).copied().unwrap_or_else(Uuid::nil),
                            player_name: player_name(index),
                            event: if i % 2 == 0 {
                                SessionEvent::Join
                            } else {
                                SessionEvent::Quit
                            },
                            at: Some(now),
                            client_version: Some("1.21.4".into()),
                            ip: None,
                            ip_hash: None,
                        },
                    }
                })
                .collect(),
        )
    };
    let records = batch.len();
    (LogMessage::new(account, now, batch), records)
}

/// `count` fresh random ids.
pub(crate) fn uuids(count: usize) -> Vec<Uuid> {
    (0..count).map(|_| Uuid::new_v4()).collect()
}
