//! Custom events (votes, crates, the quest funnel, the shop), rank purchases and Discord links.

use super::content::pick;
use super::{Quest, Simulation};
use crate::records;
use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use serde_json::{Value, json};
use shared::records::RecordKind;

/// Rates per second at speed 1, per online player.
mod rate {
    pub(super) const RANK_PURCHASE: f64 = 1.0 / 3000.0;
    pub(super) const LINK: f64 = 1.0 / 1200.0;
    pub(super) const UNLINK: f64 = 1.0 / 30000.0;
}

const QUESTS: &[(&str, &str)] = &[
    ("slay_the_wither", "hard"),
    ("gather_100_logs", "easy"),
    ("build_a_farm", "easy"),
    ("nether_expedition", "medium"),
    ("fishing_frenzy", "easy"),
    ("end_raid", "hard"),
];
const VOTE_SITES: &[&str] = &[
    "minecraft-server-list.com",
    "planetminecraft.com",
    "topg.org",
    "minecraftservers.org",
];
const CRATES: &[(&str, &[(&str, u32)])] = &[
    (
        "vote",
        &[("diamond", 3), ("iron_ingot", 16), ("golden_apple", 2)],
    ),
    (
        "rare",
        &[
            ("netherite_scrap", 1),
            ("enchanted_book", 1),
            ("diamond", 8),
        ],
    ),
    (
        "legendary",
        &[("elytra", 1), ("beacon", 1), ("netherite_ingot", 2)],
    ),
];
const SHOP: &[(&str, u32, &str)] = &[
    ("diamond_sword", 250, "weapons"),
    ("golden_apple", 40, "food"),
    ("firework_rocket", 5, "travel"),
    ("shulker_box", 900, "storage"),
    ("rare_crate_key", 500, "keys"),
];

/// `quest_started`: a random quest on `server`; returns the quest's index and the properties.
pub(crate) fn quest_started(rng: &mut impl Rng, server: &str) -> (usize, Value) {
    let quest = rng.random_range(0..QUESTS.len());
    let (id, difficulty) = QUESTS[quest];
    (
        quest,
        json!({"quest": id, "difficulty": difficulty, "server": server}),
    )
}

/// `quest_completed` of the quest with index `quest`.
pub(crate) fn quest_completed(rng: &mut impl Rng, quest: usize) -> Value {
    let (id, difficulty) = QUESTS[quest % QUESTS.len()];
    let coins = match difficulty {
        "hard" => 500,
        "medium" => 200,
        _ => 75,
    };
    let duration = rng.random_range(60..1800);
    let reward = json!({"coins": coins, "xp": coins / 5});
    json!({"quest": id, "duration_seconds": duration, "reward": reward})
}

/// `shop_purchase`, tagged `quest_reward` when it follows a completed quest.
pub(crate) fn shop_purchase(rng: &mut impl Rng, after_quest: bool) -> Value {
    let (item, price, category) = pick(rng, SHOP);
    let quantity = if price < 50 {
        rng.random_range(1..=16)
    } else {
        1
    };
    json!({
        "item": item,
        "quantity": quantity,
        "price": {"amount": price * quantity, "currency": "coins"},
        "tags": [category, if after_quest { "quest_reward" } else { "regular" }],
    })
}

/// `vote_received`, the player's `streak`-th vote.
pub(crate) fn vote_received(rng: &mut impl Rng, streak: u32) -> Value {
    let site = pick(rng, VOTE_SITES);
    json!({"site": site, "streak": streak})
}

/// `crate_opened`: mostly `default_crate`, now and then any crate.
pub(crate) fn crate_opened(rng: &mut impl Rng, default_crate: &str) -> Value {
    let (name, rewards) = if rng.random_bool(0.7) {
        CRATES
            .iter()
            .find(|(c, _)| *c == default_crate)
            .copied()
            .unwrap_or(CRATES[0])
    } else {
        pick(rng, CRATES)
    };
    let (item, amount) = pick(rng, rewards);
    json!({"crate": name, "reward": {"item": item, "amount": amount}})
}

impl Simulation {
    /// One custom event; players in the quest funnel tend to take its next step.
    pub(super) fn custom_event(&mut self, player: usize, server: usize, at: DateTime<Utc>) {
        let roll: f64 = self.rng.random();
        let (name, properties) = match self.players[player].quest {
            Quest::Idle if roll < 0.35 => {
                let server = self.world.servers[server].name.clone();
                let (quest, properties) = quest_started(&mut self.rng, &server);
                self.players[player].quest = Quest::Started(quest);
                ("quest_started", properties)
            }
            Quest::Started(quest) if roll < 0.6 => {
                self.players[player].quest = Quest::Completed(quest);
                ("quest_completed", quest_completed(&mut self.rng, quest))
            }
            Quest::Started(_) if roll < 0.7 => {
                // Gave up on the quest: the funnel's drop-off.
                self.players[player].quest = Quest::Idle;
                return;
            }
            Quest::Completed(_) if roll < 0.5 => self.shop_purchase(player),
            Quest::Completed(_) if roll < 0.7 => {
                self.players[player].quest = Quest::Idle;
                return;
            }
            _ if roll < 0.75 => {
                let state = &mut self.players[player];
                state.vote_streak += 1;
                let streak = state.vote_streak;
                ("vote_received", vote_received(&mut self.rng, streak))
            }
            _ if roll < 0.9 => ("crate_opened", crate_opened(&mut self.rng, "vote")),
            _ => self.shop_purchase(player),
        };
        let record = records::custom_event(&self.world.players[player], name, properties, at);
        self.emit(RecordKind::Custom, record);
    }

    fn shop_purchase(&mut self, player: usize) -> (&'static str, Value) {
        let state = &mut self.players[player];
        let after_quest = matches!(state.quest, Quest::Completed(_));
        state.quest = Quest::Idle;
        ("shop_purchase", shop_purchase(&mut self.rng, after_quest))
    }

    /// Store purchases (rank changes) and Discord links among the players online.
    pub(super) fn progress_tick(&mut self, dt: f64, at: DateTime<Utc>) {
        let online = self.online_players() as f64;
        if online == 0.0 {
            return;
        }
        if self.chance(rate::RANK_PURCHASE * online, dt)
            && let Some(player) = self.random_online(|sim, p| sim.world.players[p].staff.is_none())
        {
            self.buy_rank(player, at);
        }
        if self.chance(rate::LINK * online, dt)
            && let Some(player) = self.random_online(|sim, p| sim.players[p].discord.is_none())
        {
            let id = self
                .rng
                .random_range(100_000_000_000_000_000..1_300_000_000_000_000_000);
            self.players[player].discord = Some(id);
            let record = records::account_link(&self.world.players[player], id, true, at);
            self.emit(RecordKind::AccountLink, record);
        }
        if self.chance(rate::UNLINK * online, dt)
            && let Some(player) = self.random_online(|sim, p| sim.players[p].discord.is_some())
            && let Some(id) = self.players[player].discord.take()
        {
            let record = records::account_link(&self.world.players[player], id, false, at);
            self.emit(RecordKind::AccountLink, record);
        }
    }

    /// A player bought a rank: default → vip (sometimes a 30-day trial), vip → mvp.
    fn buy_rank(&mut self, player: usize, at: DateTime<Utc>) {
        let previous = self.players[player].group;
        let (action, group, expires_at) = match previous {
            "default" if self.rng.random_bool(0.3) => ("add", "vip", Some(at + Duration::days(30))),
            "default" => ("add", "vip", None),
            "vip" => ("set", "mvp", None),
            _ => return,
        };
        self.players[player].group = group;
        let p = &self.world.players[player];
        let record = records::rank_change(p, action, group, Some(previous), expires_at, at);
        self.emit(RecordKind::RankChange, record);
    }

    /// A random online player for whom `want` holds.
    fn random_online(&mut self, want: impl Fn(&Simulation, usize) -> bool) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.players.len())
            .filter(|&p| self.players[p].server.is_some() && want(self, p))
            .collect();
        (!candidates.is_empty()).then(|| pick(&mut self.rng, &candidates))
    }
}
