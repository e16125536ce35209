use super::*;
use crate::world::DEFAULT_WORLD_SEED;
use std::collections::HashMap;

fn simulation(seed: u64, speed: f64) -> Simulation {
    Simulation::new(
        World::generate(DEFAULT_WORLD_SEED, 3, 40),
        Some(seed),
        speed,
        2,
    )
}

/// A fixed wall clock, so two runs are comparable record for record.
fn at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T20:00:00Z")
        .expect("time")
        .to_utc()
}

fn run(sim: &mut Simulation, ticks: usize) -> Vec<Batch> {
    let at = at();
    let mut batches = sim.start(at);
    for _ in 0..ticks {
        batches.extend(sim.tick(1.0, at));
    }
    batches
}

fn count(batches: &[Batch], kind: RecordKind) -> usize {
    batches
        .iter()
        .filter(|b| b.kind == kind)
        .map(|b| b.records.len())
        .sum()
}

/// The records without their ids, which are fresh on every run.
fn strip_ids(batches: &[Batch]) -> Vec<(RecordKind, Vec<Value>)> {
    batches
        .iter()
        .map(|b| {
            let records = b.records.iter().cloned().map(|mut r| {
                if let Some(o) = r.as_object_mut() {
                    o.remove("id");
                }
                r
            });
            (b.kind, records.collect())
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_activity() {
    let a = run(&mut simulation(11, 5.0), 60);
    let b = run(&mut simulation(11, 5.0), 60);
    // External ids follow the clock, so compare everything but punishments.
    let keep = |v: Vec<(RecordKind, Vec<Value>)>| -> Vec<_> {
        v.into_iter()
            .filter(|(k, _)| *k != RecordKind::Punishment)
            .collect()
    };
    assert_eq!(keep(strip_ids(&a)), keep(strip_ids(&b)));
}

#[test]
fn a_busy_network_produces_every_kind_of_record() {
    let mut sim = simulation(3, 20.0);
    let batches = run(&mut sim, 300);
    for kind in RecordKind::PLUGIN {
        assert!(count(&batches, kind) > 0, "no {kind:?} records");
    }
    let revokes = batches
        .iter()
        .flat_map(|b| &b.records)
        .filter(|r| r["action"] == "revoke")
        .count();
    assert!(revokes > 0, "no revokes");
}

#[test]
fn every_record_has_a_unique_id_and_batches_are_bounded() {
    let batches = run(&mut simulation(5, 10.0), 120);
    let mut ids = std::collections::HashSet::new();
    for batch in &batches {
        assert!(!batch.records.is_empty() && batch.records.len() <= MAX_BATCH);
        for record in &batch.records {
            assert!(ids.insert(record["id"].as_str().expect("id").to_owned()));
        }
    }
}

#[test]
fn chat_is_sent_as_one_batch_per_server_sync() {
    let batches = run(&mut simulation(8, 5.0), 30);
    for batch in batches.iter().filter(|b| b.kind == RecordKind::Chat) {
        let server = &batch.records[0]["server_id"];
        assert!(batch.records.iter().all(|r| &r["server_id"] == server));
    }
}

#[test]
fn heartbeats_report_who_is_online_and_shutdown_empties_the_network() {
    let mut sim = simulation(2, 5.0);
    let at = at();
    let start = sim.start(at);
    let reported: u64 = start
        .iter()
        .filter(|b| b.kind == RecordKind::Heartbeat)
        .flat_map(|b| &b.records)
        .map(|r| r["player_count"].as_u64().expect("count"))
        .sum();
    assert_eq!(reported as usize, sim.online_players());
    assert!(reported > 0);

    let joins_minus_quits = |batches: &[Batch]| -> i64 {
        let sessions = batches.iter().filter(|b| b.kind == RecordKind::Session);
        sessions
            .flat_map(|b| &b.records)
            .map(|r| if r["event"] == "join" { 1 } else { -1 })
            .sum()
    };
    let mut all = start;
    for _ in 0..50 {
        all.extend(sim.tick(1.0, at));
    }
    assert_eq!(joins_minus_quits(&all), sim.online_players() as i64);

    let goodbye = sim.shutdown(at);
    all.extend(goodbye.iter().cloned());
    assert_eq!(joins_minus_quits(&all), 0);
    assert_eq!(sim.online_players(), 0);
    let offline: Vec<_> = goodbye
        .iter()
        .filter(|b| b.kind == RecordKind::Heartbeat)
        .flat_map(|b| &b.records)
        .collect();
    assert_eq!(offline.len(), 3);
    assert!(
        offline
            .iter()
            .all(|r| r["online"] == false && r["player_count"] == 0)
    );
}

#[test]
fn players_follow_the_quest_funnel_in_order() {
    let batches = run(&mut simulation(4, 30.0), 400);
    let mut last_step: HashMap<String, &str> = HashMap::new();
    let mut completed = 0;
    for record in batches
        .iter()
        .filter(|b| b.kind == RecordKind::Custom)
        .flat_map(|b| &b.records)
    {
        let player = record["player_uuid"].as_str().expect("player").to_owned();
        let name = record["name"].as_str().expect("name");
        if name == "quest_completed" {
            assert_eq!(
                last_step.get(&player),
                Some(&"quest_started"),
                "completed before started"
            );
            completed += 1;
        }
        if name.starts_with("quest_") {
            last_step.insert(player, name);
        }
    }
    assert!(completed > 0);
}

#[test]
fn batches_are_chunked_at_the_limit() {
    let records = vec![Value::Null; MAX_BATCH * 2 + 1];
    let sizes: Vec<_> = chunked(RecordKind::Chat, records)
        .iter()
        .map(|b| b.records.len())
        .collect();
    assert_eq!(sizes, [MAX_BATCH, MAX_BATCH, 1]);
}

#[test]
fn staff_are_on_duty_one_server_restarts_and_another_dips() {
    let mut sim = simulation(7, 1.0);
    let at = at();
    let start = sim.start(at);
    let staff: Vec<usize> = sim.world().staff().collect();
    let groups: Vec<&Value> = start
        .iter()
        .filter(|b| b.kind == RecordKind::RankChange)
        .flat_map(|b| &b.records)
        .map(|r| &r["group"])
        .collect();
    assert_eq!(groups.len(), staff.len());
    assert!(groups.contains(&&Value::from("admin")));
    assert!(staff.iter().all(|&p| sim.players[p].server.is_some()));

    let restarting = sim.world().servers[2].id.to_string();
    let lagging = sim.world().servers[0].id.to_string();
    // (second, server, online, tps) of every heartbeat over 15 minutes.
    let mut beats = Vec::new();
    for second in 1..=900 {
        for batch in sim.tick(1.0, at) {
            if batch.kind == RecordKind::Heartbeat {
                for r in batch.records {
                    let server = r["server_id"].as_str().unwrap_or_default().to_owned();
                    let tps = r["tps"].as_f64().unwrap_or_default();
                    beats.push((second, server, r["online"] == true, tps));
                }
            }
        }
    }
    let of = |server: &String| -> Vec<(u32, String, bool, f64)> {
        beats.iter().filter(|b| &b.1 == server).cloned().collect()
    };
    let offline: Vec<u32> = of(&restarting)
        .iter()
        .filter(|b| !b.2)
        .map(|b| b.0)
        .collect();
    assert_eq!(offline, [600], "one offline heartbeat as the outage starts");
    assert!(
        of(&restarting).iter().all(|b| !(601..780).contains(&b.0)),
        "silent while down"
    );
    assert!(
        of(&restarting).iter().any(|b| b.0 >= 780 && b.2),
        "back after three minutes"
    );
    assert!(
        of(&lagging)
            .iter()
            .filter(|b| (242..480).contains(&b.0))
            .all(|b| b.3 < 16.0)
    );
    assert!(of(&lagging).iter().any(|b| (242..480).contains(&b.0)));
}
