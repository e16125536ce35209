use super::*;
use crate::activity::MAX_BATCH;
use crate::world::DEFAULT_WORLD_SEED;
use chrono::Timelike;
use shared::records::RecordKind;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

const LIVE: usize = 40;
const DAYS: u32 = 30;

/// A Wednesday afternoon: the history covers 2026-05-27 ..= 2026-06-25.
fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-06-26T15:30:00Z")
        .expect("time")
        .to_utc()
}

fn world() -> World {
    World::grown(
        DEFAULT_WORLD_SEED,
        3,
        LIVE,
        world_size(LIVE, DAYS, now().date_naive()),
    )
}

fn demo_plan(world: &World) -> Plan {
    plan(world, LIVE, DAYS, now(), DEFAULT_WORLD_SEED)
}

#[test]
fn every_time_is_inside_the_window_and_each_players_sessions_are_ordered() {
    let world = world();
    let plan = demo_plan(&world);
    assert_eq!(plan.start.to_rfc3339(), "2026-05-27T00:00:00+00:00");
    assert_eq!(plan.end.to_rfc3339(), "2026-06-26T00:00:00+00:00");
    assert!(
        plan.sessions.len() > 500,
        "{} sessions",
        plan.sessions.len()
    );
    let mut last_quit: HashMap<usize, DateTime<Utc>> = HashMap::new();
    for s in &plan.sessions {
        assert!(plan.start <= s.join && s.join < s.quit && s.quit < plan.end);
        if let Some(previous) = last_quit.insert(s.player, s.quit) {
            assert!(previous < s.join, "player {} overlaps itself", s.player);
        }
        let inside = |at: &DateTime<Utc>| s.join < *at && *at < s.quit;
        let chat: Vec<_> = s.chat.iter().map(|c| c.0).collect();
        let events: Vec<_> = s.events.iter().map(|e| e.0).collect();
        let flags: Vec<_> = s.flags.iter().map(|f| f.0).collect();
        for times in [chat, events, flags] {
            assert!(times.iter().all(inside));
            assert!(times.is_sorted());
        }
    }
    assert!(plan.sessions.is_sorted_by_key(|s| s.join));
    for (at, p) in &plan.punishments {
        assert!(plan.start <= *at && *at < plan.end);
        assert!(p.expires_at.is_none_or(|until| until > *at));
    }
    assert!(!plan.punishments.is_empty());
}

/// (first day, set of active day numbers) per player, from the sessions' join days.
fn activity(plan: &Plan) -> BTreeMap<usize, (u32, BTreeSet<u32>)> {
    let mut days: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    for s in &plan.sessions {
        let day = (s.join.date_naive() - plan.start.date_naive()).num_days() as u32;
        days.entry(s.player).or_default().insert(day);
    }
    days.into_iter()
        .map(|(player, days)| {
            let first = days.first().copied().unwrap_or_default();
            (player, (first, days))
        })
        .collect()
}

#[test]
fn a_cohort_arrives_every_day_and_returns_thin_out() {
    let world = world();
    let plan = demo_plan(&world);
    let active = activity(&plan);
    // Everyone with a past plays on their first day; newcomers come after the live players.
    for (player, first) in plan.first_days.iter().enumerate() {
        let first = first.expect("every player of the history's world has a past");
        assert_eq!(active.get(&player).map(|a| a.0), Some(first), "{player}");
    }
    let sizes = cohort_sizes(LIVE, DAYS, now().date_naive());
    let newcomers: Vec<usize> = (0..DAYS)
        .map(|d| {
            (LIVE..world.players.len())
                .filter(|&p| active[&p].0 == d)
                .count()
        })
        .collect();
    assert_eq!(newcomers, sizes);
    assert!(sizes.iter().all(|&n| n >= 4));
    // Returning on day N, over the newcomers' cohorts old enough to have a day N.
    let returned = |n: u32| -> f64 {
        let cohort: Vec<_> = (LIVE..world.players.len())
            .filter(|p| active[p].0 + n < DAYS)
            .collect();
        let back = cohort
            .iter()
            .filter(|p| active[p].1.contains(&(active[p].0 + n)))
            .count();
        back as f64 / cohort.len() as f64
    };
    let (d1, d7, d14) = (returned(1), returned(7), returned(14));
    assert!((0.25..0.7).contains(&d1), "D1 {d1}");
    assert!(d7 < d1 && d14 < d1, "D1 {d1} D7 {d7} D14 {d14}");
    assert!(d7 > 0.0 && d14 > 0.0, "D7 {d7} D14 {d14}");
    // The live players are regulars: back on most days since they arrived.
    let regular: f64 = (0..LIVE)
        .map(|p| active[&p].1.len() as f64 / f64::from(DAYS - active[&p].0))
        .sum::<f64>()
        / LIVE as f64;
    assert!(regular > 0.4, "{regular}");
}

#[test]
fn cohorts_grow_and_weekends_are_busier() {
    let sizes = cohort_sizes(LIVE, DAYS, now().date_naive());
    assert_eq!(sizes.len(), DAYS as usize);
    // 2026-05-27 is a Wednesday; days 3 and 4 are a weekend, 5 a Monday.
    assert!(sizes[3] > sizes[2] && sizes[4] > sizes[5]);
    assert!(sizes[DAYS as usize - 2] > sizes[1]);
}

#[test]
fn players_join_mostly_in_the_evening_and_events_follow_the_quest_funnel() {
    let world = world();
    let plan = demo_plan(&world);
    let evening = plan
        .sessions
        .iter()
        .filter(|s| (17..23).contains(&s.join.hour()))
        .count();
    let night = plan
        .sessions
        .iter()
        .filter(|s| (3..9).contains(&s.join.hour()))
        .count();
    assert!(evening > 3 * night, "evening {evening}, night {night}");

    let known: HashSet<&str> = [
        "quest_started",
        "quest_completed",
        "shop_purchase",
        "vote_received",
        "crate_opened",
    ]
    .into();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for s in &plan.sessions {
        let mut started = false;
        for (_, name, _) in &s.events {
            assert!(known.contains(name), "{name}");
            *counts.entry(name).or_default() += 1;
            match *name {
                "quest_started" => started = true,
                "quest_completed" => assert!(started, "completed before started"),
                _ => {}
            }
        }
    }
    // A funnel with drop-off at each step.
    assert!(counts["quest_started"] > counts["quest_completed"]);
    assert!(counts["quest_completed"] > 0 && counts["vote_received"] > 0);
}

#[test]
fn records_are_bounded_batches_with_stable_unique_ids_and_joins_before_quits() {
    let world = world();
    let plan = demo_plan(&world);
    let history = batches(&world, &plan, DEFAULT_WORLD_SEED);
    let again = batches(&world, &demo_plan(&world), DEFAULT_WORLD_SEED);
    let ids = |h: &History| -> Vec<String> {
        h.sessions
            .iter()
            .chain(&h.rest)
            .flat_map(|b| &b.records)
            .map(|r| r["id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(
        ids(&history),
        ids(&again),
        "the same day gives the same ids"
    );
    assert_eq!(
        ids(&history).into_iter().collect::<HashSet<_>>().len(),
        history.records()
    );
    let mut kinds = HashSet::new();
    for batch in history.sessions.iter().chain(&history.rest) {
        assert!(!batch.records.is_empty() && batch.records.len() <= MAX_BATCH);
        kinds.insert(batch.kind);
    }
    assert!(
        history
            .sessions
            .iter()
            .all(|b| b.kind == RecordKind::Session)
    );
    for kind in [
        RecordKind::Heartbeat,
        RecordKind::RankChange,
        RecordKind::Chat,
        RecordKind::AnticheatFlag,
        RecordKind::Custom,
        RecordKind::Punishment,
    ] {
        assert!(kinds.contains(&kind), "no {kind:?}");
    }
    // In send order, each player's session records alternate join, quit, join, ...
    let mut online: HashMap<String, bool> = HashMap::new();
    let mut last = String::new();
    for record in history.sessions.iter().flat_map(|b| &b.records) {
        let at = record["at"].as_str().expect("at").to_owned();
        assert!(at >= last, "sessions out of time order");
        last = at;
        let player = record["player_uuid"].as_str().expect("player").to_owned();
        let join = record["event"] == "join";
        let was = online.insert(player, join).unwrap_or(false);
        assert_ne!(was, join, "two {} in a row", record["event"]);
    }
    assert!(online.values().all(|on| !on), "everyone quits");
}

#[test]
fn every_history_record_is_a_valid_sdk_record() {
    use warden_sdk::{
        AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session,
    };
    let world = world();
    let history = batches(&world, &demo_plan(&world), 1);
    for batch in history.sessions.into_iter().chain(history.rest) {
        let records = batch.records;
        let converted = match batch.kind {
            RecordKind::Session => crate::send::to_typed::<Session>(records).map(|_| ()),
            RecordKind::Chat => crate::send::to_typed::<ChatEntry>(records).map(|_| ()),
            RecordKind::AnticheatFlag => {
                crate::send::to_typed::<AnticheatFlag>(records).map(|_| ())
            }
            RecordKind::Custom => crate::send::to_typed::<CustomEvent>(records).map(|_| ()),
            RecordKind::Punishment => crate::send::to_typed::<Punishment>(records).map(|_| ()),
            RecordKind::Heartbeat => crate::send::to_typed::<Heartbeat>(records).map(|_| ()),
            RecordKind::RankChange => crate::send::to_typed::<RankChange>(records).map(|_| ()),
            other => panic!("the history made {other:?}"),
        };
        converted.expect("the SDK type reads the record");
    }
}

#[test]
fn servers_beat_every_minute_over_the_last_day_with_an_evening_crowd() {
    let world = world();
    let plan = demo_plan(&world);
    let history = batches(&world, &plan, DEFAULT_WORLD_SEED);
    let beats: Vec<&Value> = history
        .rest
        .iter()
        .filter(|b| b.kind == RecordKind::Heartbeat)
        .flat_map(|b| &b.records)
        .collect();
    let at = |r: &Value| {
        DateTime::parse_from_rfc3339(r["timestamp"].as_str().expect("timestamp"))
            .expect("time")
            .to_utc()
    };
    assert!(
        beats.windows(2).all(|w| at(w[0]) <= at(w[1])),
        "in time order"
    );
    assert_eq!(at(beats[0]), plan.start);
    let last_minute = now() - Duration::minutes(1);
    assert_eq!(
        at(beats[beats.len() - 1]),
        last_minute,
        "up to the backfill"
    );
    // Over the last 24 hours every server beats every minute (the 1 h and 24 h charts).
    for server in &world.servers {
        let id = server.id.to_string();
        let minutes: BTreeSet<DateTime<Utc>> = beats
            .iter()
            .filter(|r| r["server_id"] == id.as_str() && at(r) >= now() - Duration::hours(24))
            .map(|r| at(r))
            .collect();
        assert_eq!(minutes.len(), 24 * 60, "{}", server.name);
    }
    // The network's crowd: more in the evening than at dawn, never past a server's capacity.
    let network = |hour: u32| -> u64 {
        beats
            .iter()
            .filter(|r| {
                let t = at(r);
                t > now() - Duration::hours(24) && t.hour() == hour && t.minute() == 0
            })
            .map(|r| r["player_count"].as_u64().expect("count"))
            .sum()
    };
    assert!(
        network(20) > 2 * network(5).max(1),
        "{} vs {}",
        network(20),
        network(5)
    );
    assert!(network(20) <= LIVE as u64);
    // The last minutes run into the live fleet's crowd (about 65% of its players online).
    let last: u64 = beats
        .iter()
        .filter(|r| at(r) == last_minute)
        .map(|r| r["player_count"].as_u64().expect("count"))
        .sum();
    assert!(
        (20..=32).contains(&last),
        "{last} online as the live fleet starts"
    );
    assert!(beats.iter().all(|r| r["online"] == true));
}

#[test]
fn the_past_is_moderated_by_the_live_staff_who_have_their_groups() {
    let world = world();
    let live = World::generate(DEFAULT_WORLD_SEED, 3, LIVE);
    let live_staff: Vec<usize> = live.staff().collect();
    assert_eq!(world.staff().collect::<Vec<_>>(), live_staff);
    let plan = demo_plan(&world);
    assert!(
        plan.punishments
            .iter()
            .filter_map(|(_, p)| p.staff)
            .all(|s| live_staff.contains(&s)),
        "a punishment by someone the live fleet never makes staff"
    );
    let history = batches(&world, &plan, DEFAULT_WORLD_SEED);
    let groups: Vec<(String, String)> = history
        .rest
        .iter()
        .filter(|b| b.kind == RecordKind::RankChange)
        .flat_map(|b| &b.records)
        .map(|r| (r["player_name"].to_string(), r["group"].to_string()))
        .collect();
    assert_eq!(groups.len(), live_staff.len(), "{groups:?}");
}
