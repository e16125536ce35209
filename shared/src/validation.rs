//! Field-level validation errors, collected per record.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How far into the future a client timestamp may be (contract §1).
pub const MAX_CLOCK_SKEW: Duration = Duration::minutes(10);

/// One problem with one field of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FieldError {
    /// The field's name (a dotted path for nested fields).
    pub field: String,
    /// Stable snake_case code, e.g. `required`, `out_of_range`, `reserved_prefix`.
    pub code: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The problems found in one record; empty means valid.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem.
    pub fn push(&mut self, field: &str, code: &str, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_owned(),
            code: code.to_owned(),
            message: message.into(),
        });
    }

    /// `Ok(())` when nothing was recorded.
    pub fn into_result(self) -> Result<(), Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }

    /// Checks an optional text field's length in characters.
    pub fn text(&mut self, field: &str, value: Option<&str>, min: usize, max: usize) {
        if let Some(value) = value {
            let len = value.chars().count();
            if len < min || len > max {
                self.push(
                    field,
                    "invalid_length",
                    format!("must be {min} to {max} characters (got {len})"),
                );
            }
        }
    }

    /// Checks that a number is finite and within `min..=max`.
    pub fn number(&mut self, field: &str, value: Option<f64>, min: f64, max: f64) {
        if let Some(value) = value
            && (!value.is_finite() || value < min || value > max)
        {
            self.push(
                field,
                "out_of_range",
                format!("must be between {min} and {max}"),
            );
        }
    }

    /// Checks that an integer is at least `min`.
    pub fn at_least(&mut self, field: &str, value: Option<i64>, min: i64) {
        if let Some(value) = value
            && value < min
        {
            self.push(field, "out_of_range", format!("must be at least {min}"));
        }
    }

    /// Refuses a timestamp more than [`MAX_CLOCK_SKEW`] ahead of `now`.
    pub fn not_future(&mut self, field: &str, value: Option<DateTime<Utc>>, now: DateTime<Utc>) {
        if let Some(value) = value
            && value > now + MAX_CLOCK_SKEW
        {
            self.push(
                field,
                "in_future",
                "must not be more than 10 minutes in the future; check the server clock",
            );
        }
    }
}
