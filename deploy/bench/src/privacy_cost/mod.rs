//! What sealing personal fields costs (the target: at most 15% of durable ingest throughput).
//!
//! Two ingest processes run side by side, one with `PRIVACY_ENCRYPTION=on` and one with `off`,
//! each appending to a stream of its own, both with keys in one privacy bucket of this phase.
//! They get the very same load as `ingest_chat` (simulated servers posting 100-record chat
//! batches, each awaiting its durable 202), made from a pool of players reused across records
//! as on a real network: every player's data key is created once, by the warm-up (the same
//! requests for both sides), and then comes from ingest's cache. The timed loads alternate
//! sides round by round. Then a projector catches up on each stream's backlog (opening the
//! sealed fields, or reading them clear) into a fresh database, alternated the same way.
//! Last, custom events: every property sealed, one of five, and none
//! ([`events`]).

mod catch_up;
mod events;

pub(crate) use events::{EVENTS_ALL, EVENTS_CLEAR, EVENTS_LISTED};

use crate::children::ServiceProcess;
use crate::data::{CHAT_BATCH, CHAT_TEMPLATES, ChatBodies, uuids};
use crate::ingest_load::{LoadOutcome, chat_bodies, post};
use crate::projection::last_sequence;
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::stats::Latencies;
use futures::StreamExt;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::is_sealed;
use std::sync::Arc;
use std::time::Duration;

/// Durable chat ingest with personal fields sealed.
pub(crate) const INGEST_ON: &str = "ingest_chat_privacy_on";
/// The same ingest with `PRIVACY_ENCRYPTION=off`.
pub(crate) const INGEST_OFF: &str = "ingest_chat_privacy_off";
/// The projector's catch-up over the sealed backlog.
pub(crate) const PROJECTOR_ON: &str = "projector_catch_up_privacy_on";
/// The projector's catch-up over the clear backlog.
pub(crate) const PROJECTOR_OFF: &str = "projector_catch_up_privacy_off";

/// The phase's own privacy buckets (`<name>_PLAYERS`, `<name>_ACCOUNTS`).
const BUCKET: &str = "BENCH_PRIVACY";
/// Requests per plugin key in the warm-up at least (besides one pass over every template).
const WARM_UP_PER_KEY: usize = 4;

/// One side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Off,
    On,
}

impl Side {
    const BOTH: [Side; 2] = [Side::Off, Side::On];

    /// Alternated so that neither side always runs first.
    fn order(round: usize) -> [Side; 2] {
        if round.is_multiple_of(2) {
            [Side::Off, Side::On]
        } else {
            [Side::On, Side::Off]
        }
    }

    fn index(self) -> usize {
        usize::from(self == Side::On)
    }

    /// `PRIVACY_ENCRYPTION`.
    fn setting(self) -> &'static str {
        match self {
            Side::Off => "off",
            Side::On => "on",
        }
    }

    fn stream(self) -> &'static str {
        match self {
            Side::Off => "BENCH_PRIVACY_OFF",
            Side::On => "BENCH_PRIVACY_ON",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Side::Off => "benchprivoff",
            Side::On => "benchprivon",
        }
    }

    fn database(self) -> &'static str {
        match self {
            Side::Off => "warden_bench_privacy_off",
            Side::On => "warden_bench_privacy_on",
        }
    }

    /// The services' environment pointed at this side's stream, buckets and setting (and at
    /// `database` when given).
    fn env(self, b: &Bench, database: Option<String>) -> Vec<(&'static str, String)> {
        let replaced = |key: &str| {
            matches!(
                key,
                "EVENT_STREAM" | "SUBJECT_PREFIX" | "PRIVACY_BUCKET" | "PRIVACY_ENCRYPTION"
            ) || (key == "DATABASE_URL" && database.is_some())
        };
        let mut env: Vec<(&'static str, String)> = b
            .env
            .iter()
            .filter(|(key, _)| !replaced(key))
            .cloned()
            .collect();
        env.push(("EVENT_STREAM", self.stream().to_owned()));
        env.push(("SUBJECT_PREFIX", self.prefix().to_owned()));
        env.push(("PRIVACY_BUCKET", BUCKET.to_owned()));
        env.push(("PRIVACY_ENCRYPTION", self.setting().to_owned()));
        env.extend(database.map(|url| ("DATABASE_URL", url)));
        env
    }
}

/// Runs the comparison and adds its four measurements and notes.
pub(crate) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    let rounds = b.plan.privacy_rounds.max(1);
    let pool = uuids(b.plan.privacy_players);
    // About three records per player in the templates, so nearly every player of the pool
    // speaks (and needs a key) however large the pool.
    let templates = (pool.len() * 3).div_ceil(CHAT_BATCH).max(CHAT_TEMPLATES);
    let bodies = Arc::new(ChatBodies::with_templates(
        &mut StdRng::seed_from_u64(18),
        &pool,
        templates,
    )?);
    phase(&format!(
        "privacy: durable chat ingest with PRIVACY_ENCRYPTION=on and off ({} players, {} \
         speaking; {rounds} round(s) per side)",
        pool.len(),
        bodies.speakers()
    ));
    // Streams and keys left by an earlier run on the same server would lengthen the backlogs
    // and skip the key creation; missing ones are what we want, so those errors mean nothing.
    for side in Side::BOTH {
        b.js.delete_stream(side.stream()).await.ok();
    }
    for suffix in ["PLAYERS", "ACCOUNTS"] {
        b.js.delete_key_value(format!("{BUCKET}_{suffix}"))
            .await
            .ok();
    }
    let keys = b
        .admin
        .keys(b.account, "plugin", b.plan.chat_servers)
        .await?;
    let mut ingests = Vec::with_capacity(2);
    for side in Side::BOTH {
        let log = b
            .log_dir
            .join(format!("ingest-privacy-{}.log", side.setting()));
        let env = side.env(b, None);
        ingests.push(ServiceProcess::start_logging_to(Service::Ingest, &env, &log).await?);
    }
    let mut appended = [0u64; 2];
    for side in Side::BOTH {
        let url = &ingests[side.index()].base_url;
        appended[side.index()] += warm_up(&b.http, url, &keys, &bodies).await?;
    }
    let mut outcomes: [Vec<LoadOutcome>; 2] = [Vec::new(), Vec::new()];
    let mut cpu_notes = Vec::new();
    for round in 0..rounds {
        for side in Side::order(round) {
            let ingest = &ingests[side.index()];
            let cpu = b.cpu(&[ingest]);
            let url = &ingest.base_url;
            let duration = b.plan.privacy_duration;
            let load = chat_bodies(&b.http, url, &keys, bodies.clone(), duration).await;
            let used = cpu.since();
            phase(&format!(
                "privacy: round {round}, encryption {}: {:.0} records/s ({used})",
                side.setting(),
                load.accepted as f64 / load.elapsed.as_secs_f64().max(1e-9)
            ));
            cpu_notes.push(format!("{} round {round}: {used}", side.setting()));
            appended[side.index()] += load.accepted;
            outcomes[side.index()].push(load);
        }
    }
    for (side, ingest) in Side::BOTH.into_iter().zip(&ingests) {
        b.memory(
            &format!("privacy phase, encryption {}", side.setting()),
            ingest,
        );
    }
    for ingest in ingests {
        ingest.stop().await;
    }
    let rates = |side: Side| per_round(&outcomes[side.index()]);
    let note = format!(
        "a pool of {} players ({} of them in the {} request templates), each player's key made \
         once in the warm-up ({} records per side, the same requests for both) and cached; \
         records/s per round with encryption off: {}; on: {}; {}",
        pool.len(),
        bodies.speakers(),
        bodies.len(),
        appended[0] - outcomes[0].iter().map(|o| o.accepted).sum::<u64>(),
        rates(Side::Off),
        rates(Side::On),
        cpu_notes.join("; ")
    );
    for side in Side::BOTH {
        let what = format!(
            "{} simulated servers (one plugin key each) posting 100-record chat batches from a \
             pool of {} players to an ingest process with PRIVACY_ENCRYPTION={}, each awaiting \
             its 202 (the durable ack); {rounds} timed run(s) of {:?}, alternated with the other \
             side, after an equal warm-up; latency per request",
            keys.len(),
            pool.len(),
            side.setting(),
            b.plan.privacy_duration
        );
        let name = [INGEST_OFF, INGEST_ON][side.index()];
        b.report
            .measurements
            .push(combined(&outcomes[side.index()]).measurement(name, &what, "records"));
    }
    b.note(INGEST_ON, note);
    for side in Side::BOTH {
        check_log(b, side).await?;
    }
    catch_up::measure(b, rounds, appended).await?;
    events::measure(b, &pool).await
}

/// Posts every template once, and at least [`WARM_UP_PER_KEY`] requests per key, with one
/// request per key in flight; returns the records appended (every request must succeed).
async fn warm_up(
    http: &reqwest::Client,
    ingest_url: &str,
    keys: &[String],
    bodies: &ChatBodies,
) -> anyhow::Result<u64> {
    let url = format!("{ingest_url}/api/plugin/chat");
    let requests = bodies.len().max(keys.len() * WARM_UP_PER_KEY);
    let failed = futures::stream::iter(0..requests)
        .map(|n| post(http, &url, &keys[n % keys.len()], bodies.body(n)))
        .buffer_unordered(keys.len().max(1))
        .filter(|accepted| std::future::ready(!accepted))
        .count()
        .await;
    anyhow::ensure!(
        failed == 0,
        "{failed} of {requests} warm-up requests to {ingest_url} were not accepted"
    );
    Ok((requests * CHAT_BATCH) as u64)
}

/// Every run of one side as one measurement: all records over all the runs' time.
fn combined(runs: &[LoadOutcome]) -> LoadOutcome {
    let mut all = LoadOutcome {
        accepted: 0,
        latencies: Latencies::default(),
        errors: 0,
        elapsed: Duration::ZERO,
    };
    for run in runs {
        all.accepted += run.accepted;
        all.errors += run.errors;
        all.elapsed += run.elapsed;
        all.latencies.merge(run.latencies.clone());
    }
    all
}

fn per_round(runs: &[LoadOutcome]) -> String {
    let rates: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{:.0}",
                r.accepted as f64 / r.elapsed.as_secs_f64().max(1e-9)
            )
        })
        .collect();
    rates.join(", ")
}

/// Checks that the side's last log message holds what the setting says: every chat text
/// sealed with encryption on, none with it off (else the comparison would measure nothing).
async fn check_log(b: &Bench, side: Side) -> anyhow::Result<()> {
    let last = last_sequence(&b.js, side.stream()).await?;
    let stream = b.js.get_stream(side.stream()).await?;
    let raw = stream.get_raw_message(last).await?;
    let message = LogMessage::decode(&raw.payload)?;
    let RecordBatch::Chat(records) = &message.batch else {
        anyhow::bail!(
            "the last log message of {} is not a chat batch",
            side.stream()
        );
    };
    let sealed = records
        .iter()
        .filter(|r| is_sealed(&r.record.message))
        .count();
    let expected = if side == Side::On { records.len() } else { 0 };
    anyhow::ensure!(
        sealed == expected,
        "with PRIVACY_ENCRYPTION={} {sealed} of {} chat texts in the last log message are \
         sealed, expected {expected}",
        side.setting(),
        records.len()
    );
    Ok(())
}
