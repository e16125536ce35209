//! How pages write times, durations and numbers: one place, so every page reads alike. Times
//! are UTC (the dashboard serves people in many zones; the label says which).

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// `2025-03-01 10:17 UTC`.
pub fn date_time(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// `10:17:42`, for lists of recent things.
pub fn clock(at: &DateTime<Utc>) -> String {
    at.format("%H:%M:%S").to_string()
}

/// The machine-readable form for `<time datetime>`.
pub fn iso(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A length of time as people say it: `45 s`, `12 min`, `3 h 05 min`, `2 d 4 h`.
pub fn duration(seconds: i64) -> String {
    let seconds = seconds.max(0);
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60);
    if seconds < 60 {
        format!("{seconds} s")
    } else if seconds < 3600 {
        format!("{minutes} min")
    } else if days == 0 {
        format!("{hours} h {minutes:02} min")
    } else {
        format!("{days} d {hours} h")
    }
}

/// One decimal (`19.7`); `-` when there is no value.
pub fn one_decimal(value: &Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

/// A whole number (`42`); `-` when there is no value.
pub fn whole(value: &Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// A player count (`12`); `-` when there is none.
pub fn count(value: &Option<i32>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// A server's name, or a short form of its id when it has not sent one.
pub fn server_name(name: Option<&str>, id: &Uuid) -> String {
    match name {
        Some(name) => name.to_owned(),
        None => format!("Unnamed server {}", &id.simple().to_string()[..8]),
    }
}

/// A chart's data as JSON text, for a `data-chart` attribute (the template escapes it).
pub fn json(value: &impl serde::Serialize) -> String {
    // Plain data with string keys: serializing cannot fail; an empty chart if it ever did.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_say_them() {
        assert_eq!(duration(-5), "0 s");
        assert_eq!(duration(45), "45 s");
        assert_eq!(duration(12 * 60 + 30), "12 min");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3 h 05 min");
        assert_eq!(duration(2 * 86_400 + 4 * 3600 + 59), "2 d 4 h");
    }

    #[test]
    fn unnamed_servers_get_a_short_id() {
        let id = Uuid::nil();
        assert_eq!(server_name(None, &id), "Unnamed server 00000000");
        assert_eq!(server_name(Some("Lobby"), &id), "Lobby");
    }
}
