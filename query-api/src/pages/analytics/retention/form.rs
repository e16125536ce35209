//! The Retention page's form: read leniently from the query string (a value the page does not
//! know falls back to its default), turned into the API's request, and written back into the
//! links that open a cohort.

use super::PATH;
use crate::queries::retention::{Period, ReturnMode, StartKind};
use crate::routes::retention::{DEFAULT_DAYS, RetentionEvents, RetentionRequest};
use chrono::NaiveDate;

/// The form as filled in (text as typed, so a wrong value is shown back).
#[derive(Debug, Clone, Default)]
pub(super) struct Filters {
    pub(super) period: Period,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) days: String,
    pub(super) mode: ReturnMode,
    pub(super) start: String,
    pub(super) returned: String,
    pub(super) kind: StartKind,
    pub(super) cohort: Option<NaiveDate>,
}

impl Filters {
    pub(super) fn read(raw: Option<&str>) -> Filters {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(raw.unwrap_or("")).unwrap_or_default();
        let mut f = Filters {
            days: DEFAULT_DAYS.map(|d| d.to_string()).join(", "),
            ..Filters::default()
        };
        for (key, value) in pairs {
            let value = value.trim().to_owned();
            match key.as_str() {
                "period" => {
                    f.period = match value.as_str() {
                        "week" => Period::Week,
                        "month" => Period::Month,
                        _ => Period::Day,
                    }
                }
                "from" => f.from = value,
                "to" => f.to = value,
                "days" => f.days = value,
                "mode" if value == "on_or_after" => f.mode = ReturnMode::OnOrAfter,
                "start" => f.start = value,
                "return" => f.returned = value,
                "kind" if value == "recurring" => f.kind = StartKind::Recurring,
                "cohort" => f.cohort = value.parse().ok(),
                _ => {}
            }
        }
        f
    }

    pub(super) fn period(&self) -> &'static str {
        match self.period {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    pub(super) fn on_or_after(&self) -> bool {
        self.mode == ReturnMode::OnOrAfter
    }

    pub(super) fn recurring(&self) -> bool {
        self.kind == StartKind::Recurring
    }

    /// The API's request, or what is wrong with what only the form has (dates, the list
    /// of days, one event of the pair without the other).
    pub(super) fn request(&self) -> Result<RetentionRequest, Vec<String>> {
        let mut errors = Vec::new();
        let mut date = |label: &str, text: &str| {
            if text.is_empty() {
                return None;
            }
            let parsed = text.parse::<NaiveDate>().ok();
            if parsed.is_none() {
                errors.push(format!("{label}: not a date (YYYY-MM-DD)"));
            }
            parsed
        };
        let from = date("From", &self.from);
        let to = date("To", &self.to);
        let days: Result<Vec<i64>, _> = self
            .days
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|part| !part.is_empty())
            .map(str::parse)
            .collect();
        let days = days.unwrap_or_else(|_| {
            errors.push("Days: whole numbers separated by commas, e.g. 1, 7, 30".into());
            DEFAULT_DAYS.map(i64::from).to_vec()
        });
        let events = match (self.start.is_empty(), self.returned.is_empty()) {
            (true, true) => None,
            (false, false) => Some(RetentionEvents {
                start: self.start.clone(),
                return_event: self.returned.clone(),
                kind: self.kind,
            }),
            _ => {
                errors
                    .push("Events: give both a start event and a return event, or neither".into());
                None
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(RetentionRequest {
            period: self.period,
            from,
            to,
            days,
            mode: self.mode,
            events,
        })
    }

    /// This page's query string with `cohort` opened.
    pub(super) fn link(&self, cohort: NaiveDate) -> String {
        let mut pairs = vec![
            ("period", self.period().to_owned()),
            ("from", self.from.clone()),
            ("to", self.to.clone()),
            ("days", self.days.clone()),
            (
                "mode",
                if self.on_or_after() {
                    "on_or_after"
                } else {
                    "on"
                }
                .to_owned(),
            ),
        ];
        if !self.start.is_empty() {
            pairs.push(("start", self.start.clone()));
            pairs.push(("return", self.returned.clone()));
            pairs.push((
                "kind",
                if self.recurring() {
                    "recurring"
                } else {
                    "first_time"
                }
                .to_owned(),
            ));
        }
        pairs.push(("cohort", cohort.to_string()));
        let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
        format!("{PATH}?{query}#cohort-players")
    }
}
