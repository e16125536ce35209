//! Player search (`GET /api/players?search=`) over a large account: players and their names
//! loaded straight into PostgreSQL (generate_series, the read measures the search, not the
//! load), then searched with what moderators type: 2-character prefixes, common 3-letter
//! fragments, full names, past names and UUIDs.

use crate::stats::Measurement;
use crate::timed::time_gets;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use sqlx::PgPool;
use uuid::Uuid;

/// First halves of generated names.
const HEADS: &[&str] = &[
    "Dark", "Shadow", "Steve", "Alex", "Pro", "Epic", "Mine", "Craft", "Ender", "Blaze", "Creeper",
    "Sky", "Iron", "Gold", "Diamond", "Night", "Fire", "Ice", "Storm", "Wolf", "Ninja", "Dragon",
    "Pixel", "Lava", "Block", "Toxic", "Silent", "Lucky", "Frost", "Ghost", "Cyber", "Turbo",
    "Mega", "Super", "Happy", "Crazy", "Red", "Blue", "Green", "xX",
];
/// Second halves.
const TAILS: &[&str] = &[
    "Hunter", "Slayer", "Miner", "Gamer", "King", "Queen", "Lord", "Boy", "Girl", "Master",
    "Knight", "Warrior", "Wizard", "Rider", "Walker", "Builder", "Digger", "Fox", "Cat", "Bear",
    "Tiger", "Panda", "Bunny", "Duck", "Shark", "Bee", "Potato", "Taco", "Cookie", "Noob", "Pvp",
    "Legend", "Star", "Moon", "Sun", "Rex", "Bot", "Dude", "Guy", "_YT",
];

/// Share of players with one past name.
const PAST_NAME_SHARE: f64 = 0.3;
/// Names and UUIDs sampled from the loaded players for the searches.
const SAMPLES: i64 = 300;

/// A name of a head, a tail and, for 60%, a number; at most 16 characters like a Minecraft
/// name. `$1` heads, `$2` tails; `a`, `b`, `c` columns of random numbers.
fn name_sql(a: &str, b: &str, c: &str) -> String {
    format!(
        "left(($1::text[])[1 + floor({a} * cardinality($1::text[]))::int] \
         || ($2::text[])[1 + floor({b} * cardinality($2::text[]))::int] \
         || CASE WHEN {c} < 0.6 THEN floor({c} * 16666)::int::text ELSE '' END, 16)"
    )
}

/// What the searches pick from.
pub(crate) struct Searchable {
    current: Vec<String>,
    past: Vec<String>,
    uuids: Vec<Uuid>,
}

/// Loads `count` players of `account` into `players` and `player_names` (every current name,
/// plus a past name for 30% of them); returns samples to search for.
pub(crate) async fn load(pool: &PgPool, account: Uuid, count: usize) -> anyhow::Result<Searchable> {
    let (heads, tails) = (HEADS.to_vec(), TAILS.to_vec());
    // `players.names` repeats every name of the player (byte order, no repeats), as the
    // players read model keeps it for search.
    sqlx::query(&format!(
        "INSERT INTO players \
           (account_id, uuid, username, username_at, first_seen, last_seen, names) \
         SELECT $3, gen_random_uuid(), cur, first + (last - first) * r4, first, last, \
           CASE WHEN past IS NULL OR past = cur THEN ARRAY[cur] \
             WHEN past COLLATE \"C\" < cur COLLATE \"C\" THEN ARRAY[past, cur] \
             ELSE ARRAY[cur, past] END \
         FROM (SELECT {} AS cur, CASE WHEN r8 < $5 THEN {} END AS past, r4, first, last \
           FROM (SELECT random() AS r1, random() AS r2, random() AS r3, random() AS r4, \
               random() AS r5, random() AS r6, random() AS r7, random() AS r8, \
               now() - make_interval(days => 60 + floor(random() * 600)::int) AS first, \
               now() - make_interval(mins => floor(random() * 86400)::int) AS last \
             FROM generate_series(1, $4)) AS r) AS n",
        name_sql("r1", "r2", "r3"),
        name_sql("r5", "r6", "r7"),
    ))
    .bind(&heads)
    .bind(&tails)
    .bind(account)
    .bind(i64::try_from(count)?)
    .bind(PAST_NAME_SHARE)
    .execute(pool)
    .await?;
    // The current name was held from username_at on; the past one before it.
    sqlx::query(
        "INSERT INTO player_names (account_id, player_uuid, name, first_seen, last_seen) \
         SELECT account_id, uuid, n.name, \
           CASE WHEN n.name = username THEN username_at ELSE first_seen END, \
           CASE WHEN n.name = username THEN last_seen ELSE username_at END \
         FROM players, unnest(names) AS n(name) WHERE account_id = $1",
    )
    .bind(account)
    .execute(pool)
    .await?;
    sqlx::query("VACUUM (ANALYZE) players, player_names")
        .execute(pool)
        .await?;
    let sampled: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT uuid, username FROM players WHERE account_id = $1 ORDER BY random() LIMIT $2",
    )
    .bind(account)
    .bind(SAMPLES)
    .fetch_all(pool)
    .await?;
    let past: Vec<String> = sqlx::query_scalar(
        "SELECT n.name FROM player_names n JOIN players p \
           ON p.account_id = n.account_id AND p.uuid = n.player_uuid \
         WHERE n.account_id = $1 AND n.name <> p.username ORDER BY random() LIMIT $2",
    )
    .bind(account)
    .bind(SAMPLES)
    .fetch_all(pool)
    .await?;
    let (uuids, current) = sampled.into_iter().unzip();
    Ok(Searchable {
        current,
        past,
        uuids,
    })
}

/// A head or a tail.
fn part(rng: &mut impl Rng) -> &'static str {
    let list = if rng.random_bool(0.5) { HEADS } else { TAILS };
    list.choose(rng).copied().unwrap_or("Steve")
}

/// What a moderator types: 20% a 2-character prefix, 25% a 3-letter fragment of a common
/// name part, 20% a full current name, 20% a past name, 15% a UUID.
fn fragment(rng: &mut impl Rng, from: &Searchable) -> String {
    let roll = rng.random_range(0..100);
    if roll < 20 {
        part(rng).chars().take(2).collect()
    } else if roll < 45 {
        let word: Vec<char> = part(rng).chars().collect();
        let start = rng.random_range(0..=word.len().saturating_sub(3));
        word.iter().skip(start).take(3).collect()
    } else if roll < 65 {
        from.current.choose(rng).cloned().unwrap_or_default()
    } else if roll < 85 {
        from.past.choose(rng).cloned().unwrap_or_default()
    } else {
        from.uuids
            .choose(rng)
            .map(Uuid::to_string)
            .unwrap_or_default()
    }
}

/// Times `count` searches (first page, 50 players).
pub(crate) async fn measure(
    http: &reqwest::Client,
    base_url: &str,
    keys: &[String],
    from: &Searchable,
    count: usize,
) -> Measurement {
    let mut rng = StdRng::seed_from_u64(13);
    time_gets(
        http,
        keys,
        (
            "player_search",
            "GET /api/players?search=<fragment> (first page, 50 players): 2-character \
             prefixes, common 3-letter fragments, full names, past names, UUIDs",
        ),
        count,
        || {
            // Names are letters, digits and '_', UUIDs hex and '-': nothing to escape.
            format!("{base_url}/api/players?search={}", fragment(&mut rng, from))
        },
    )
    .await
}
