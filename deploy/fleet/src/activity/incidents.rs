//! Incidents that give the dashboard something to mark: one server restarts on a cycle
//! (players leave, it says offline, no heartbeat for three minutes, then it is back), and
//! another has a TPS dip from time to time. Both follow the simulation's clock (seconds of
//! activity), so a demo shows each within its first quarter of an hour.

use super::Simulation;
use chrono::{DateTime, Utc};

/// The restart cycle: every 15 minutes, starting 10 minutes in, down for 3 minutes.
const OUTAGE_PERIOD: f64 = 900.0;
const OUTAGE_START: f64 = 600.0;
const OUTAGE_LENGTH: f64 = 180.0;

/// The TPS dip cycle: every 10 minutes, starting 4 minutes in, 4 minutes of 12-16 TPS
/// (longer than the dashboard's 3-minute low-TPS threshold).
const DIP_PERIOD: f64 = 600.0;
const DIP_START: f64 = 240.0;
const DIP_LENGTH: f64 = 240.0;

/// Whether the restarting server is down at `clock` seconds.
pub(super) fn in_outage(clock: f64) -> bool {
    let t = clock.rem_euclid(OUTAGE_PERIOD);
    (OUTAGE_START..OUTAGE_START + OUTAGE_LENGTH).contains(&t)
}

/// Whether the lagging server is in a TPS dip at `clock` seconds.
pub(super) fn in_dip(clock: f64) -> bool {
    let t = clock.rem_euclid(DIP_PERIOD);
    (DIP_START..DIP_START + DIP_LENGTH).contains(&t)
}

impl Simulation {
    /// The server that restarts on a cycle: the last one, when there are at least two (a
    /// network of one would go dark entirely).
    pub(super) fn restarting_server(&self) -> Option<usize> {
        (self.servers.len() >= 2).then(|| self.servers.len() - 1)
    }

    /// Whether `server` lags now (the first server, during a dip).
    pub(super) fn lagging(&self, server: usize) -> bool {
        server == 0 && in_dip(self.clock)
    }

    /// Takes the restarting server down (its players leave, it says offline) or brings it
    /// back (a heartbeat at once), as the clock says.
    pub(super) fn incidents_tick(&mut self, at: DateTime<Utc>) {
        let Some(server) = self.restarting_server() else {
            return;
        };
        let down = in_outage(self.clock);
        if down && !self.servers[server].down {
            for player in 0..self.players.len() {
                if self.players[player].server == Some(server) {
                    self.leave(player, at);
                }
            }
            self.sync(server, false, at);
            self.servers[server].down = true;
        } else if !down && self.servers[server].down {
            self.servers[server].down = false;
            self.sync(server, true, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycles_are_down_three_minutes_in_fifteen_and_dip_four_in_ten() {
        let seconds = |f: fn(f64) -> bool, from: u32, to: u32| {
            (from..to).filter(|&s| f(f64::from(s))).count()
        };
        assert_eq!(seconds(in_outage, 0, 900), 180);
        assert!(!in_outage(599.0) && in_outage(600.0) && !in_outage(780.0));
        assert_eq!(seconds(in_dip, 0, 600), 240);
        assert!(in_dip(240.0) && !in_dip(480.0));
    }
}
