//! The plan as plugin records, in the batches the backfill sends.

use super::Plan;
use crate::activity::{Batch, chunked};
use crate::records;
use crate::world::World;
use chrono::{DateTime, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use shared::records::RecordKind;

/// The history's batches, in the order they are sent.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Joins and quits in time order. Sent one batch after another: the sessions model pairs
    /// a quit with the join logged before it, so a quit must never overtake its join.
    pub sessions: Vec<Batch>,
    /// The servers' heartbeats in time order (the projector samples a heartbeat only within a
    /// day of its server's latest), the staff's groups, then chat, flags, custom events and
    /// punishments: each carries its own time, so their order does not matter.
    pub rest: Vec<Batch>,
}

impl History {
    /// Records in all batches.
    pub fn records(&self) -> usize {
        self.sessions
            .iter()
            .chain(&self.rest)
            .map(|b| b.records.len())
            .sum()
    }
}

/// The records of `plan` (made for `world`). Ids are UUIDv7 of each record's own time with
/// random bits drawn from `seed`, so the same plan gives the same ids: a repeated backfill is
/// recognised as duplicates and stored once.
pub fn batches(world: &World, plan: &Plan, seed: u64) -> History {
    let mut ids = StdRng::seed_from_u64(seed ^ 0x1D5);
    let mut stamp = |mut record: Value, at: DateTime<Utc>| {
        let millis = at.timestamp_millis().unsigned_abs();
        let id = uuid::Builder::from_unix_timestamp_millis(millis, &ids.random()).into_uuid();
        if let Some(fields) = record.as_object_mut() {
            fields.insert("id".to_owned(), Value::String(id.to_string()));
        }
        record
    };
    let mut sessions = Vec::new();
    let (mut chat, mut flags, mut events) = (Vec::new(), Vec::new(), Vec::new());
    for s in &plan.sessions {
        let (server, player) = (&world.servers[s.server], &world.players[s.player]);
        sessions.push((s.join, records::session(server, player, true, s.join)));
        sessions.push((s.quit, records::session(server, player, false, s.quit)));
        for (at, entry, text) in &s.chat {
            let record = records::chat(server, player, *entry, text, "global", *at);
            chat.push(stamp(record, *at));
        }
        for (at, flag) in &s.flags {
            flags.push(stamp(
                records::anticheat_flag(server, player, flag, *at),
                *at,
            ));
        }
        for (at, name, properties) in &s.events {
            let record = records::custom_event(player, name, properties.clone(), *at);
            events.push(stamp(record, *at));
        }
    }
    // Stable: at equal times a join stays before its quit.
    sessions.sort_by_key(|(at, _)| *at);
    let sessions: Vec<Value> = sessions
        .into_iter()
        .map(|(at, record)| stamp(record, at))
        .collect();
    let punishments = plan
        .punishments
        .iter()
        .map(|(at, p)| stamp(records::punishment(world, p, *at), *at))
        .collect();
    let mut noise = StdRng::seed_from_u64(seed ^ 0xBEA7);
    let beats = super::heartbeats::heartbeats(world, plan, &mut noise)
        .into_iter()
        .map(|(at, record)| stamp(record, at))
        .collect();
    // The staff had their groups from the start, so the boards read them as staff with a group.
    let groups = world
        .staff()
        .filter_map(|i| {
            let role = world.players[i].staff?;
            let record = records::rank_change(
                &world.players[i],
                "set",
                role.group(),
                Some("default"),
                None,
                plan.start,
            );
            Some(stamp(record, plan.start))
        })
        .collect();
    let mut rest = chunked(RecordKind::Heartbeat, beats);
    rest.extend(chunked(RecordKind::RankChange, groups));
    rest.extend(chunked(RecordKind::Chat, chat));
    rest.extend(chunked(RecordKind::AnticheatFlag, flags));
    rest.extend(chunked(RecordKind::Custom, events));
    rest.extend(chunked(RecordKind::Punishment, punishments));
    History {
        sessions: chunked(RecordKind::Session, sessions),
        rest,
    }
}
