//! What players say and type.

use super::Simulation;
use crate::records::{self, EntryType};
use chrono::{DateTime, Utc};
use rand::Rng;
use rand::seq::IndexedRandom;

pub(crate) const LINES: &[&str] = &[
    "gg",
    "gg wp",
    "lol",
    "anyone want to trade?",
    "how do i get to the shop?",
    "is the server lagging for anyone else?",
    "brb",
    "who wants to team up?",
    "selling 64 iron, dm me",
    "where is spawn",
    "just found diamonds!!",
    "does anyone have a spare elytra",
    "what's the ip for the discord?",
    "nice build",
    "can someone help me with the quest?",
    "creeper blew up my house again",
    "first time here, hi all",
    "ty!",
    "what does /kit daily give?",
    "how many votes for a vote key?",
];

const TO_SOMEONE: &[&str] = &[
    "wb {}",
    "hi {}",
    "{} come to my base",
    "{} ty for the help",
    "{} gg",
];

const STAFF_LINES: &[&str] = &[
    "keeping an eye on {}",
    "{} is flagging Reach again",
    "can someone check {}'s base for griefing?",
    "on it",
    "reports queue is clear",
    "heads up: restart in 10 minutes",
];

pub(crate) const COMMANDS: &[&str] = &[
    "/spawn",
    "/home",
    "/home base",
    "/sethome base",
    "/warp shop",
    "/ah",
    "/kit daily",
    "/bal",
    "/vote",
    "/rules",
    "/discord",
    "/baltop",
    "/jobs",
    "/quests",
    "/trash",
];

const MODE_COMMANDS: &[(&str, &[&str])] = &[
    (
        "SkyBlock",
        &["/is go", "/is upgrade", "/is top", "/is invite {}"],
    ),
    (
        "Factions",
        &["/f home", "/f map", "/f claim", "/f invite {}"],
    ),
    ("Prison", &["/rankup", "/mine A", "/prestige"]),
    (
        "BedWars",
        &["/bw join solo", "/bw join doubles", "/party invite {}"],
    ),
    ("Lobby", &["/server survival", "/server skyblock", "/menu"]),
];

const STAFF_COMMANDS: &[&str] = &["/vanish", "/invsee {}", "/history {}", "/tp {}", "/alts {}"];

impl Simulation {
    /// Queues a chat message for the server's next sync (muted players stay silent).
    pub(super) fn say(&mut self, player: usize, server: usize, at: DateTime<Utc>) {
        if self.players[player]
            .muted_until
            .is_some_and(|until| until > at)
        {
            return;
        }
        let other = self.someone_else_online(player, server);
        let staff = self.world.players[player].staff.is_some();
        let (template, channel) = if staff && self.rng.random_bool(0.3) {
            (pick(&mut self.rng, STAFF_LINES), "staff")
        } else if other.is_some() && self.rng.random_bool(0.2) {
            (pick(&mut self.rng, TO_SOMEONE), "global")
        } else {
            (pick(&mut self.rng, LINES), "global")
        };
        let message = fill(template, other.as_deref());
        self.queue_chat(player, server, EntryType::Chat, &message, channel, at);
    }

    /// Queues a command for the server's next sync.
    pub(super) fn run_command(&mut self, player: usize, server: usize, at: DateTime<Utc>) {
        let other = self.someone_else_online(player, server);
        let name = self.world.servers[server].name.as_str();
        let mode = MODE_COMMANDS
            .iter()
            .find(|(m, _)| name.starts_with(m))
            .map(|(_, c)| *c);
        let staff = self.world.players[player].staff.is_some();
        let template = match mode {
            _ if staff && self.rng.random_bool(0.3) => pick(&mut self.rng, STAFF_COMMANDS),
            Some(mode) if self.rng.random_bool(0.5) => pick(&mut self.rng, mode),
            _ => pick(&mut self.rng, COMMANDS),
        };
        let command = fill(template, other.as_deref().or(Some("Notch")));
        self.queue_chat(player, server, EntryType::Command, &command, "global", at);
    }

    fn queue_chat(
        &mut self,
        player: usize,
        server: usize,
        entry_type: EntryType,
        message: &str,
        channel: &str,
        at: DateTime<Utc>,
    ) {
        let (s, p) = (&self.world.servers[server], &self.world.players[player]);
        let record = records::chat(s, p, entry_type, message, channel, at);
        self.servers[server].pending_chat.push(record);
    }

    /// The name of a random other player on the same server, if there is one.
    pub(super) fn someone_else_online(&mut self, player: usize, server: usize) -> Option<String> {
        if self.servers[server].online < 2 {
            return None;
        }
        // A few random probes are enough; the network is small and busy servers are full.
        for _ in 0..8 {
            let other = self.rng.random_range(0..self.players.len());
            if other != player && self.players[other].server == Some(server) {
                return Some(self.world.players[other].name.clone());
            }
        }
        None
    }
}

pub(crate) fn pick<T: Copy>(rng: &mut impl Rng, items: &[T]) -> T {
    *items.choose(rng).unwrap_or(&items[0])
}

fn fill(template: &str, name: Option<&str>) -> String {
    template.replace("{}", name.unwrap_or("someone"))
}
