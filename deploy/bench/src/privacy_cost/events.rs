//! What sealing every custom-event property (the default) costs ingest, against sealing only
//! the one property an operator listed as personal (what an account had before) and against no
//! sealing at all.
//!
//! Two ingest processes of their own (encryption on and off, each appending to a stream of its
//! own, keys in the phase's buckets) get 100-event batches from the phase's player pool, each
//! event with five properties (an e-mail address, a tier, an amount, a crate and a server).
//! Three sides, each with plugin keys of its own:
//!
//! - `all`: encryption on, the default policy: every property value is sealed;
//! - `listed`: encryption on, a second account keeping four properties in clear: only the
//!   e-mail address is sealed, as with the personal list an account had before;
//! - `clear`: encryption off.
//!
//! An equal warm-up (every template once, at least 4 requests per key) makes and caches every
//! player's keys; then timed runs, the sides in turn, rotated round by round.

use super::{BUCKET, Side, WARM_UP_PER_KEY, combined, per_round};
use crate::children::ServiceProcess;
use crate::ingest_load::{LoadOutcome, batches, post};
use crate::projection::last_sequence;
use crate::run::{Bench, phase};
use crate::serve::Service;
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::{PrivacyPolicy, is_sealed};
use std::sync::Arc;
use uuid::Uuid;

/// Durable event ingest with every property sealed (the default).
pub(crate) const EVENTS_ALL: &str = "ingest_events_privacy_all_sealed";
/// The same with one property of five sealed (as under a policy of the old shape that
/// listed one property as personal).
pub(crate) const EVENTS_LISTED: &str = "ingest_events_privacy_one_sealed";
/// The same with `PRIVACY_ENCRYPTION=off`.
pub(crate) const EVENTS_CLEAR: &str = "ingest_events_privacy_off";

/// Events per request.
const EVENT_BATCH: usize = 100;
/// The properties the `listed` side keeps in clear: all but `email`.
const KEPT_CLEAR: [&str; 4] = ["tier", "amount", "crate", "server"];

/// One side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sealing {
    Clear,
    Listed,
    All,
}

impl Sealing {
    const EVERY: [Sealing; 3] = [Sealing::Clear, Sealing::Listed, Sealing::All];

    /// The sides in turn, starting with a different one each round.
    fn order(round: usize) -> [Sealing; 3] {
        let mut order = Sealing::EVERY;
        order.rotate_left(round % 3);
        order
    }

    fn index(self) -> usize {
        self as usize
    }

    fn label(self) -> &'static str {
        match self {
            Sealing::Clear => "encryption off",
            Sealing::Listed => "one property of five sealed",
            Sealing::All => "every property sealed",
        }
    }

    fn measurement(self) -> &'static str {
        match self {
            Sealing::Clear => EVENTS_CLEAR,
            Sealing::Listed => EVENTS_LISTED,
            Sealing::All => EVENTS_ALL,
        }
    }

    /// The ingest process it posts to.
    fn encryption(self) -> Side {
        match self {
            Sealing::Clear => Side::Off,
            Sealing::Listed | Sealing::All => Side::On,
        }
    }
}

/// The stream of events posted with `side`'s encryption setting.
fn stream(side: Side) -> &'static str {
    match side {
        Side::Off => "BENCH_PRIVACY_EVENTS_OFF",
        Side::On => "BENCH_PRIVACY_EVENTS_ON",
    }
}

/// Batches of 100 custom events (`POST /api/v1/plugin/events`) made ahead of the timed load.
struct EventBodies {
    templates: Vec<Vec<u8>>,
}

impl EventBodies {
    fn new(rng: &mut impl Rng, players: &[Uuid], count: usize) -> anyhow::Result<EventBodies> {
        let tiers = ["bronze", "silver", "gold", "diamond"];
        let crates = ["vote_crate", "daily_crate", "legendary_crate"];
        let templates = (0..count.max(1))
            .map(|_| {
                let events: Vec<serde_json::Value> = (0..EVENT_BATCH)
                    .map(|_| {
                        let index = rng.random_range(0..players.len().max(1));
                        let player = players.get(index).copied().unwrap_or_else(Uuid::nil);
                        json!({
                            "player_uuid": player,
                            "name": "crate_opened",
                            "properties": {
                                "email": format!("player{index}@mail.example"),
                                "tier": tiers[rng.random_range(0..tiers.len())],
                                "amount": rng.random_range(1..500),
                                "crate": crates[rng.random_range(0..crates.len())],
                                "server": format!("hub-{}", rng.random_range(1..9)),
                            },
                        })
                    })
                    .collect();
                serde_json::to_vec(&events)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EventBodies { templates })
    }

    fn body(&self, n: usize) -> Vec<u8> {
        self.templates[n % self.templates.len()].clone()
    }
}

/// Runs the comparison over `pool`'s players and adds its three measurements and a note.
pub(super) async fn measure(b: &mut Bench, pool: &[Uuid]) -> anyhow::Result<()> {
    let rounds = b.plan.privacy_rounds.max(1);
    let templates = (pool.len() * 3).div_ceil(EVENT_BATCH).max(16);
    let bodies = Arc::new(EventBodies::new(
        &mut StdRng::seed_from_u64(34),
        pool,
        templates,
    )?);
    phase(&format!(
        "privacy: durable custom-event ingest, every property sealed, one of five sealed, and \
         encryption off ({} players; {rounds} round(s) per side)",
        pool.len()
    ));
    for side in Side::BOTH {
        b.js.delete_stream(stream(side)).await.ok();
    }
    let listed_account = b.admin.account("bench privacy one property sealed").await?;
    let servers = b.plan.chat_servers;
    let keys = [
        b.admin.keys(b.account, "plugin", servers).await?,
        b.admin.keys(listed_account, "plugin", servers).await?,
        b.admin.keys(b.account, "plugin", servers).await?,
    ];
    let mut ingests = Vec::with_capacity(2);
    for side in Side::BOTH {
        let mut env: Vec<(&'static str, String)> = side
            .env(b, None)
            .into_iter()
            .filter(|(key, _)| *key != "EVENT_STREAM" && *key != "SUBJECT_PREFIX")
            .collect();
        env.push(("EVENT_STREAM", stream(side).to_owned()));
        env.push(("SUBJECT_PREFIX", format!("{}ev", side.prefix())));
        let log = b
            .log_dir
            .join(format!("ingest-privacy-events-{}.log", side.setting()));
        ingests.push(ServiceProcess::start_logging_to(Service::Ingest, &env, &log).await?);
    }
    // The listed side's policy, straight into the phase's bucket (the bench's query-api uses
    // buckets of its own); the ingest processes have read no policy yet.
    let policy = PrivacyPolicy {
        clear_properties: KEPT_CLEAR.iter().map(|p| (*p).to_owned()).collect(),
        ..PrivacyPolicy::default()
    };
    b.js.get_key_value(format!("{BUCKET}_ACCOUNTS"))
        .await?
        .put(
            format!("policy.{listed_account}"),
            serde_json::to_vec(&policy)?.into(),
        )
        .await?;
    let url = |sealing: Sealing| {
        format!(
            "{}/api/v1/plugin/events",
            ingests[sealing.encryption().index()].base_url
        )
    };
    for sealing in Sealing::EVERY {
        warm_up(&b.http, &url(sealing), &keys[sealing.index()], &bodies).await?;
    }
    let mut outcomes: [Vec<LoadOutcome>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut cpu_notes = Vec::new();
    for round in 0..rounds {
        for sealing in Sealing::order(round) {
            let ingest = &ingests[sealing.encryption().index()];
            let cpu = b.cpu(&[ingest]);
            let source = bodies.clone();
            let body: Arc<dyn Fn(usize) -> Vec<u8> + Send + Sync> =
                Arc::new(move |n| source.body(n));
            let load = batches(
                &b.http,
                url(sealing),
                &keys[sealing.index()],
                body,
                EVENT_BATCH as u64,
                b.plan.privacy_duration,
            )
            .await;
            let used = cpu.since();
            phase(&format!(
                "privacy: round {round}, events with {}: {:.0} records/s ({used})",
                sealing.label(),
                load.accepted as f64 / load.elapsed.as_secs_f64().max(1e-9)
            ));
            cpu_notes.push(format!("{} round {round}: {used}", sealing.label()));
            outcomes[sealing.index()].push(load);
        }
    }
    for ingest in ingests {
        ingest.stop().await;
    }
    let mut rates = [0f64; 3];
    for sealing in Sealing::EVERY {
        let what = format!(
            "{servers} plugin keys posting 100-event batches (five properties each: e-mail \
             address, tier, amount, crate, server) from a pool of {} players to an ingest \
             process, {}, each awaiting its 202 (the durable ack); {rounds} timed run(s) of \
             {:?}, the three sides in turn, after an equal warm-up; latency per request",
            pool.len(),
            sealing.label(),
            b.plan.privacy_duration
        );
        let measured = combined(&outcomes[sealing.index()]).measurement(
            sealing.measurement(),
            &what,
            "records",
        );
        rates[sealing.index()] = measured.rate_per_s;
        b.report.measurements.push(measured);
    }
    let ratio = |a: Sealing, base: Sealing| rates[a.index()] / rates[base.index()].max(1e-9);
    let note = format!(
        "every property sealed / encryption off = {:.2}x; every property sealed / one of five \
         sealed = {:.2}x; one of five sealed / off = {:.2}x; records/s per round, off: {}; one \
         sealed: {}; all sealed: {}; {}",
        ratio(Sealing::All, Sealing::Clear),
        ratio(Sealing::All, Sealing::Listed),
        ratio(Sealing::Listed, Sealing::Clear),
        per_round(&outcomes[Sealing::Clear.index()]),
        per_round(&outcomes[Sealing::Listed.index()]),
        per_round(&outcomes[Sealing::All.index()]),
        cpu_notes.join("; ")
    );
    b.note(EVENTS_ALL, note);
    check_log(b, b.account, listed_account).await
}

/// Posts every template once, and at least [`WARM_UP_PER_KEY`] requests per key, one request
/// per key in flight; every request must succeed.
async fn warm_up(
    http: &reqwest::Client,
    url: &str,
    keys: &[String],
    bodies: &EventBodies,
) -> anyhow::Result<()> {
    let requests = bodies.templates.len().max(keys.len() * WARM_UP_PER_KEY);
    let failed = futures::stream::iter(0..requests)
        .map(|n| post(http, url, &keys[n % keys.len()], bodies.body(n)))
        .buffer_unordered(keys.len().max(1))
        .filter(|accepted| std::future::ready(!accepted))
        .count()
        .await;
    anyhow::ensure!(
        failed == 0,
        "{failed} of {requests} warm-up requests to {url} were not accepted"
    );
    Ok(())
}

/// Sealed property values per event in the last custom-event message of `account` in
/// `stream`, searched from the newest message back: two accounts share the stream, and the
/// other's last round may have written many thousands of messages after this one's.
async fn sealed_per_event(b: &Bench, stream: &str, account: Uuid) -> anyhow::Result<Vec<usize>> {
    let last = last_sequence(&b.js, stream).await?;
    let log = b.js.get_stream(stream).await?;
    for sequence in (1..=last).rev() {
        let raw = log.get_raw_message(sequence).await?;
        let message = LogMessage::decode(&raw.payload)?;
        if message.account_id != account {
            continue;
        }
        let RecordBatch::Custom(events) = &message.batch else {
            continue;
        };
        return events
            .iter()
            .map(|event| {
                let props = event.record.properties.as_ref().map_or("{}", |p| p.get());
                let values: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(props)?;
                Ok(values
                    .values()
                    .filter(|v| v.as_str().is_some_and(is_sealed))
                    .count())
            })
            .collect();
    }
    anyhow::bail!("no custom-event message of account {account} at the end of {stream}")
}

/// Checks that each side's log holds what it claims (else the comparison measures nothing):
/// five sealed values per event, one, and none.
async fn check_log(b: &Bench, all_account: Uuid, listed_account: Uuid) -> anyhow::Result<()> {
    for (stream, account, expected) in [
        (stream(Side::On), all_account, 5),
        (stream(Side::On), listed_account, 1),
        (stream(Side::Off), all_account, 0),
    ] {
        let counts = sealed_per_event(b, stream, account).await?;
        anyhow::ensure!(
            counts.iter().all(|&n| n == expected),
            "{stream}, account {account}: sealed values per event {counts:?}, expected \
             {expected} each"
        );
    }
    Ok(())
}
