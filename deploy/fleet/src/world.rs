//! The simulated network: its servers and players, derived from a seed.
//!
//! Each server and player is derived from the seed and its own index alone, so the same network
//! comes back after a restart (the dashboard keeps one "Lobby", not one per run), and growing
//! `--players` keeps the existing players.

use crate::names;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::net::Ipv4Addr;
use uuid::Uuid;

/// The world seed used when none is given: the demo network everyone sees.
pub const DEFAULT_WORLD_SEED: u64 = 0x5741_5244_454e; // "WARDEN"

/// Server software reported in heartbeats.
pub const SERVER_VERSION: &str = "Paper 1.21.4";

const CLIENT_VERSIONS: &[&str] = &["1.21.4", "1.21.4", "1.21.4", "1.21.1", "1.20.6", "1.8.9"];

/// A staff member's permission group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaffRole {
    /// Runs the network.
    Admin,
    /// Moderator: mutes, kicks and bans.
    Mod,
    /// Helper: mostly warnings and mutes.
    Helper,
}

impl StaffRole {
    /// The permission group's name.
    pub fn group(self) -> &'static str {
        match self {
            StaffRole::Admin => "admin",
            StaffRole::Mod => "mod",
            StaffRole::Helper => "helper",
        }
    }
}

/// One game server of the network.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Stable server UUID (`server_id` in every record).
    pub id: Uuid,
    /// Display name, e.g. "Survival".
    pub name: String,
    /// Player capacity.
    pub max_players: u32,
    /// Memory limit in MiB.
    pub memory_max_mb: u32,
    /// Relative share of joins this server attracts.
    pub popularity: f64,
}

/// One player of the network.
#[derive(Debug, Clone, PartialEq)]
pub struct Player {
    /// Stable player UUID.
    pub uuid: Uuid,
    /// Minecraft name, unique in the network.
    pub name: String,
    /// Staff role, for the few staff members.
    pub staff: Option<StaffRole>,
    /// Home address (documentation ranges); alts share one.
    pub ip: Ipv4Addr,
    /// Client version, e.g. "1.21.4".
    pub client_version: &'static str,
    /// Plays unfairly: flagged far more often, and the usual target of bans.
    pub suspicious: bool,
}

/// Every server and player of the simulated network.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// The servers, by index.
    pub servers: Vec<Server>,
    /// The players, by index.
    pub players: Vec<Player>,
}

impl World {
    /// Derives a network of `servers` servers and `players` players from `seed`.
    pub fn generate(seed: u64, servers: usize, players: usize) -> World {
        let servers = (0..servers).map(|index| server(seed, index)).collect();
        let mut taken = HashSet::new();
        let players = (0..players)
            .map(|index| player(seed, index, players, &mut taken))
            .collect();
        World { servers, players }
    }

    /// The live network of `players` players grown to `total` for its history: the same
    /// players first, and the same staff (newcomers are never staff), so the past's
    /// punishments are issued by the staff the live fleet gives their groups.
    pub fn grown(seed: u64, servers: usize, players: usize, total: usize) -> World {
        let mut world = World::generate(seed, servers, total.max(players));
        for (index, player) in world.players.iter_mut().enumerate() {
            player.staff = staff_role(index, players);
        }
        world
    }

    /// Indexes of the staff members.
    pub fn staff(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.players.len()).filter(|&i| self.players[i].staff.is_some())
    }
}

/// A random generator that depends only on the seed, what is generated and its index.
fn stable_rng(seed: u64, what: u64, index: usize) -> StdRng {
    let mut x = seed ^ what.rotate_left(32) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser: neighbouring indexes get unrelated streams.
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StdRng::seed_from_u64(x ^ (x >> 31))
}

fn random_uuid(rng: &mut StdRng) -> Uuid {
    uuid::Builder::from_random_bytes(rng.random()).into_uuid()
}

fn server(seed: u64, index: usize) -> Server {
    let mut rng = stable_rng(seed, 1, index);
    let id = random_uuid(&mut rng);
    let lobby = index == 0;
    Server {
        id,
        name: names::server_name(index),
        max_players: if lobby {
            200
        } else {
            [60, 80, 100, 150][rng.random_range(0..4)]
        },
        memory_max_mb: if lobby {
            4096
        } else {
            [6144, 8192, 12288][rng.random_range(0..3)]
        },
        popularity: if lobby {
            2.0
        } else {
            rng.random_range(0.5..1.5)
        },
    }
}

fn player(seed: u64, index: usize, total: usize, taken: &mut HashSet<String>) -> Player {
    let mut rng = stable_rng(seed, 2, index);
    let uuid = random_uuid(&mut rng);
    let mut name = names::player_name(&mut rng);
    while !taken.insert(name.to_ascii_lowercase()) {
        name = names::player_name(&mut rng);
    }
    Player {
        uuid,
        name,
        staff: staff_role(index, total),
        ip: home_ip(seed, index),
        client_version: CLIENT_VERSIONS[rng.random_range(0..CLIENT_VERSIONS.len())],
        suspicious: index % 17 == 11,
    }
}

/// One staff member per ten players (at least one): an admin, then mods and helpers.
fn staff_role(index: usize, total: usize) -> Option<StaffRole> {
    let staff = (total / 10).max(1);
    match index {
        0 => Some(StaffRole::Admin),
        i if i < staff => Some(if i % 2 == 1 {
            StaffRole::Mod
        } else {
            StaffRole::Helper
        }),
        _ => None,
    }
}

/// Addresses from the documentation ranges (RFC 5737). Every seventh player is an alt of the
/// one before and shares its address, so alt detection has something to find.
fn home_ip(seed: u64, index: usize) -> Ipv4Addr {
    let owner = if index % 7 == 6 { index - 1 } else { index };
    let n = stable_rng(seed, 3, owner).random::<u32>();
    let nets: [[u8; 3]; 3] = [[192, 0, 2], [198, 51, 100], [203, 0, 113]];
    let net = nets[(n % 3) as usize];
    Ipv4Addr::new(net[0], net[1], net[2], 1 + (n >> 8) as u8 % 254)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_world() {
        assert_eq!(World::generate(42, 5, 100), World::generate(42, 5, 100));
        assert_ne!(World::generate(42, 5, 100), World::generate(43, 5, 100));
    }

    #[test]
    fn growing_the_world_keeps_existing_servers_and_player_ids() {
        let small = World::generate(DEFAULT_WORLD_SEED, 3, 40);
        let large = World::generate(DEFAULT_WORLD_SEED, 6, 400);
        assert_eq!(small.servers[..], large.servers[..3]);
        for (a, b) in small.players.iter().zip(&large.players) {
            assert_eq!(a.uuid, b.uuid);
        }
    }

    #[test]
    fn players_are_unique_and_validly_named() {
        let world = World::generate(9, 3, 2_000);
        let uuids: HashSet<_> = world.players.iter().map(|p| p.uuid).collect();
        let names: HashSet<_> = world
            .players
            .iter()
            .map(|p| p.name.to_lowercase())
            .collect();
        assert_eq!(uuids.len(), 2_000);
        assert_eq!(names.len(), 2_000);
        assert!(
            world
                .players
                .iter()
                .all(|p| names::is_valid_player_name(&p.name))
        );
    }

    #[test]
    fn a_few_players_are_staff_led_by_an_admin() {
        let world = World::generate(1, 3, 40);
        let staff: Vec<_> = world.staff().map(|i| world.players[i].staff).collect();
        assert_eq!(staff.len(), 4);
        assert_eq!(staff[0], Some(StaffRole::Admin));
        assert!(staff.contains(&Some(StaffRole::Mod)));
        assert!(staff.contains(&Some(StaffRole::Helper)));
    }

    #[test]
    fn alts_share_an_address_in_the_documentation_ranges() {
        let world = World::generate(3, 1, 14);
        assert_eq!(world.players[5].ip, world.players[6].ip);
        for player in &world.players {
            let [a, b, c, _] = player.ip.octets();
            assert!(matches!(
                [a, b, c],
                [192, 0, 2] | [198, 51, 100] | [203, 0, 113]
            ));
        }
    }

    #[test]
    fn servers_have_distinct_ids_and_the_lobby_first() {
        let world = World::generate(DEFAULT_WORLD_SEED, 4, 1);
        assert_eq!(world.servers[0].name, "Lobby");
        let ids: HashSet<_> = world.servers.iter().map(|s| s.id).collect();
        assert_eq!(ids.len(), 4);
    }
}
