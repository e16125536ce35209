//! What the service answers about a write, and why a call failed.

use serde::{Deserialize, Serialize};

/// The body of a write's `202 Accepted` (contract §5).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteReport {
    /// Records stored.
    pub accepted: u64,
    /// Records recognised at once as already stored (an earlier attempt got through).
    #[serde(default)]
    pub duplicates: u64,
    /// Records refused, with the reasons.
    #[serde(default)]
    pub rejected: Vec<RejectedRecord>,
    /// Attempts beyond the first that this write needed (client-side, not from the service).
    #[serde(skip)]
    pub retries: u32,
}

/// One record of a batch that the service refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RejectedRecord {
    /// Its position in the batch (0-based).
    pub index: usize,
    /// Stable snake_case reason, e.g. `validation_failed`.
    #[serde(default)]
    pub code: String,
    /// Field-level problems.
    #[serde(default)]
    pub errors: Vec<FieldProblem>,
}

/// One field-level problem.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FieldProblem {
    /// The field, e.g. `player_uuid`.
    #[serde(default)]
    pub field: String,
    /// Stable snake_case reason, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What is wrong, for people.
    #[serde(default)]
    pub message: String,
}

/// An RFC 9457 problem-details body, as every error response carries (contract §2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type", default)]
    pub problem_type: String,
    /// Short summary.
    #[serde(default)]
    pub title: String,
    /// The HTTP status.
    #[serde(default)]
    pub status: u16,
    /// Stable snake_case identifier, e.g. `rate_limited`.
    #[serde(default)]
    pub code: String,
    /// What is wrong and how to fix it.
    #[serde(default)]
    pub detail: String,
    /// Field-level problems.
    #[serde(default)]
    pub errors: Vec<FieldProblem>,
    /// For a write where every record was refused: each record's reasons.
    #[serde(default)]
    pub rejected: Vec<RejectedRecord>,
}

/// Why a call did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// The service refused the request; sending it again unchanged cannot help.
    #[error("{status} {}: {}", problem.code, problem.detail)]
    Api {
        /// HTTP status.
        status: u16,
        /// The problem-details body (fields empty when the body was not one).
        problem: Box<Problem>,
    },
    /// Every attempt failed with a retryable error (network, 429, 5xx).
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last error.
        last: String,
    },
    /// A batch must hold 1..=1,000 records.
    #[error("a batch holds 1 to 1000 records; this one has {0}")]
    BatchSize(usize),
    /// A 2xx body that is not the documented JSON.
    #[error("unexpected response body: {0}")]
    Decode(#[source] serde_json::Error),
    /// The HTTP client could not be built, or the base URL is not a URL.
    #[error("invalid client configuration: {0}")]
    Config(String),
}

impl SdkError {
    /// The HTTP status the service answered with, when it was a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            SdkError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The problem-details body of a refusal.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            SdkError::Api { problem, .. } => Some(problem),
            _ => None,
        }
    }
}
