//! Plausible names for players and servers.

use rand::Rng;
use rand::seq::IndexedRandom;

const SERVER_NAMES: &[&str] = &[
    "Lobby", "Survival", "SkyBlock", "Factions", "Creative", "Prison", "BedWars", "SkyWars",
    "KitPvP", "OneBlock", "Towny", "Parkour",
];

const WORDS: &[&str] = &[
    "Shadow", "Creeper", "Pixel", "Dragon", "Frost", "Blaze", "Ender", "Wolf", "Luna", "Storm",
    "Nova", "Block", "Craft", "Diamond", "Ninja", "Ghost", "Toast", "Panda", "Cookie", "Nether",
    "Redstone", "Slime", "Potato", "Sky", "Fire", "Iron", "Obsidian", "Raven", "Fox", "Moon",
    "Cactus", "Lava", "Turtle", "Axolotl", "Golem", "Bee", "Zombie", "Sniper", "Viking", "Wizard",
];

const SUFFIXES: &[&str] = &[
    "Slayer", "Miner", "King", "Queen", "Lord", "Master", "Gamer", "Builder", "Hunter", "Knight",
    "Boi", "Girl", "Dude", "YT", "TV", "PvP", "Pro", "Rider", "Walker", "Smith",
];

const SHORT_PREFIXES: &[&str] = &["xX", "ii", "Its", "The", "Mr", "Not", "Real", "Lil", "oO"];

/// Longest Minecraft name.
pub const MAX_NAME_LEN: usize = 16;
/// Shortest Minecraft name.
pub const MIN_NAME_LEN: usize = 3;

/// The display name of server `index`: the classic network modes, numbered once they run out.
pub fn server_name(index: usize) -> String {
    let base = SERVER_NAMES[index % SERVER_NAMES.len()];
    match index / SERVER_NAMES.len() {
        0 => base.to_owned(),
        round => format!("{base}-{}", round + 1),
    }
}

/// A Minecraft-style player name: 3..=16 characters of `[A-Za-z0-9_]`.
pub fn player_name(rng: &mut impl Rng) -> String {
    let word = pick(rng, WORDS);
    let name = match rng.random_range(0..6) {
        0 => format!("{word}{}", pick(rng, SUFFIXES)),
        1 => format!("{word}_{}", pick(rng, SUFFIXES)),
        2 => format!("{word}{}", rng.random_range(1..=999)),
        3 => format!("{}{word}", pick(rng, SHORT_PREFIXES)),
        4 => format!("xX{word}Xx"),
        _ => format!(
            "{}{word}{}",
            lower(pick(rng, WORDS)),
            rng.random_range(0..100)
        ),
    };
    truncate(name)
}

/// True when `name` is a valid Minecraft name.
pub fn is_valid_player_name(name: &str) -> bool {
    (MIN_NAME_LEN..=MAX_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn pick<'a>(rng: &mut impl Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).copied().unwrap_or("Steve")
}

fn lower(word: &str) -> String {
    word.to_ascii_lowercase()
}

fn truncate(mut name: String) -> String {
    // Every part is ASCII, so byte truncation keeps whole characters.
    name.truncate(MAX_NAME_LEN);
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn player_names_are_valid_minecraft_names() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..5_000 {
            let name = player_name(&mut rng);
            assert!(is_valid_player_name(&name), "{name}");
        }
    }

    #[test]
    fn player_names_vary() {
        let mut rng = StdRng::seed_from_u64(1);
        let names: std::collections::HashSet<_> = (0..200).map(|_| player_name(&mut rng)).collect();
        assert!(names.len() > 150, "only {} distinct names", names.len());
    }

    #[test]
    fn server_names_start_with_the_lobby_and_stay_unique() {
        assert_eq!(server_name(0), "Lobby");
        assert_eq!(server_name(1), "Survival");
        assert_eq!(server_name(12), "Lobby-2");
        let names: std::collections::HashSet<_> = (0..100).map(server_name).collect();
        assert_eq!(names.len(), 100);
    }

    #[test]
    fn validity_check_refuses_bad_names() {
        for bad in ["ab", "has space", "way_too_long_a_name", "ünï"] {
            assert!(!is_valid_player_name(bad), "{bad}");
        }
    }
}
