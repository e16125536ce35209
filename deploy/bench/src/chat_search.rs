//! Chat keyword search (`GET /api/chat?q=`) over the read dataset's chat lines, for the last
//! 7 days and over all time, with keywords of every frequency: the words every line is made
//! of, words in about 1% of lines, rare ones, and words no line holds.

use crate::data::{WORDS, chat_text};
use crate::stats::Measurement;
use crate::timed::time_gets;
use chrono::{Duration as Span, SecondsFormat, Utc};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

/// Words in about 1% of the dataset's lines each.
const UNCOMMON: &[&str] = &["xray", "refund", "hacker", "duping", "ddos"];
/// Words in about 0.02% of the lines each (1,000 of 5M).
const RARE: &[&str] = &["herobrine", "chargeback", "doxxing", "swatted", "bitcoin"];
/// In about 0.002% of the lines (100 of 5M).
const VERY_RARE: &str = "discord.gg/freenitro";
/// In no line: a search that finds nothing must still answer in time.
const ABSENT: &[&str] = &["zyzzyva", "qwertyuiop", "antidisestablish"];

/// A chat line of the read dataset: common words, sometimes one of the rarer ones.
pub(crate) fn dataset_line(rng: &mut impl Rng) -> String {
    let mut line = chat_text(rng);
    let roll: f64 = rng.random();
    let extra = if roll < 0.05 {
        UNCOMMON.choose(rng).copied()
    } else if roll < 0.051 {
        RARE.choose(rng).copied()
    } else if roll < 0.051_02 {
        Some(VERY_RARE)
    } else {
        None
    };
    if let Some(word) = extra {
        line.push(' ');
        line.push_str(word);
    }
    line
}

/// A keyword as a moderator types it: 40% common words (and 2-word phrases), 25% uncommon,
/// 20% rare, 5% very rare, 10% absent; sometimes capitalised (the search ignores case).
fn keyword(rng: &mut impl Rng) -> String {
    let roll = rng.random_range(0..100);
    let word = if roll < 30 {
        (*WORDS.choose(rng).unwrap_or(&"trade")).to_owned()
    } else if roll < 40 {
        let first = WORDS.choose(rng).unwrap_or(&"where");
        format!("{first} {}", WORDS.choose(rng).unwrap_or(&"is"))
    } else if roll < 65 {
        (*UNCOMMON.choose(rng).unwrap_or(&"xray")).to_owned()
    } else if roll < 85 {
        (*RARE.choose(rng).unwrap_or(&"herobrine")).to_owned()
    } else if roll < 90 {
        VERY_RARE.to_owned()
    } else {
        (*ABSENT.choose(rng).unwrap_or(&"zyzzyva")).to_owned()
    };
    if rng.random_bool(0.2) {
        let mut chars = word.chars();
        chars.next().map_or(word.clone(), |c| {
            c.to_uppercase().chain(chars).collect::<String>()
        })
    } else {
        word
    }
}

/// `text` as a query-string value.
fn query_value(text: &str) -> String {
    text.replace('%', "%25")
        .replace(' ', "%20")
        .replace('+', "%2B")
        .replace('&', "%26")
        .replace('/', "%2F")
}

/// Times keyword searches over the last 7 days and over all time (`count` each).
pub(crate) async fn measure(
    http: &reqwest::Client,
    base_url: &str,
    keys: &[String],
    count: usize,
) -> Vec<Measurement> {
    let mut rng = StdRng::seed_from_u64(11);
    let week_ago = (Utc::now() - Span::days(7)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let week = time_gets(
        http,
        keys,
        (
            "chat_search_7d",
            "GET /api/chat?q=<keyword>&from=<7 days ago> (first page, 50 lines), keywords of \
             every frequency: common words and phrases, ~1%, ~0.02%, ~0.002% of lines, absent",
        ),
        count,
        || {
            format!(
                "{base_url}/api/chat?q={}&from={week_ago}",
                query_value(&keyword(&mut rng))
            )
        },
    )
    .await;
    let all = time_gets(
        http,
        keys,
        (
            "chat_search_all_time",
            "GET /api/chat?q=<keyword> over all time (first page, 50 lines), the same keyword mix",
        ),
        count,
        || format!("{base_url}/api/chat?q={}", query_value(&keyword(&mut rng))),
    )
    .await;
    vec![week, all]
}
