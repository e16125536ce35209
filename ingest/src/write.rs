//! The write path shared by every plugin endpoint: decode, validate, normalize, then append
//! one log message per subject (merged with other requests' for the same subject, see
//! [`crate::coalesce`]) and wait for every ack.

use crate::coalesce::Part;
use crate::decode::{RecordError, decode_body};
use crate::error::IngestError;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::envelope::{LogMessage, Logged};
use shared::keys::Caller;
use shared::privacy::{KeyringError, PrivacyPolicy};
use shared::problem::RejectedRecord;
use shared::records::{PluginRecord, RecordKind};
use std::collections::HashSet;
use std::sync::Arc;
use utoipa::ToSchema;
use uuid::Uuid;

/// The 202 body of a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[schema(as = WriteAccepted)]
pub struct WriteReport {
    /// Records durably appended to the log by this request.
    pub accepted: usize,
    /// Records recognised at once as already received (a repeated id).
    pub duplicates: usize,
    /// Records refused, with their problems.
    pub rejected: Vec<RejectedRecord>,
}

/// Records ready for the log.
#[derive(Debug)]
pub struct Prepared<T> {
    /// Valid, normalized records with their event ids, in request order.
    pub records: Vec<Logged<T>>,
    /// True when every record's id came from the client (so a retry has the same ids).
    pub client_ids: bool,
    /// Records that repeated an id seen earlier in the same request.
    pub duplicates: usize,
    /// Refused records.
    pub rejected: Vec<RejectedRecord>,
    /// When the request arrived.
    pub received_at: DateTime<Utc>,
    /// True when the body was an array (a batch), even of one record.
    pub is_batch: bool,
}

/// Decodes, validates and normalizes every record of `caller`'s account; refuses the request
/// when none is usable.
pub fn prepare<T: PluginRecord>(
    state: &AppState,
    caller: &Caller,
    body: &[u8],
) -> Result<Prepared<T>, IngestError> {
    let received_at = Utc::now();
    // IPs hash with the account's own key: the same address never links two accounts.
    let ip_hasher = state.ip_hasher.for_account(caller.account_id);
    let body = decode_body::<T>(body, received_at)?;
    let mut prepared = Prepared {
        records: Vec::new(),
        client_ids: true,
        duplicates: 0,
        rejected: Vec::new(),
        received_at,
        is_batch: body.is_batch,
    };
    let mut seen = HashSet::new();
    for (index, decoded) in body.records.into_iter().enumerate() {
        match decoded {
            Ok(decoded) => {
                let id = match decoded.id {
                    Some(id) if !seen.insert(id) => {
                        prepared.duplicates += 1;
                        continue;
                    }
                    Some(id) => id,
                    None => {
                        prepared.client_ids = false;
                        Uuid::now_v7()
                    }
                };
                let mut record = decoded.record;
                record.normalize(received_at, &ip_hasher);
                prepared.records.push(Logged { id, record });
            }
            Err(error) if !body.is_batch => return Err(single_record_error(error)),
            Err(error) => prepared.rejected.push(RejectedRecord {
                index,
                code: error.code(),
                errors: error.errors().to_vec(),
            }),
        }
    }
    metrics::counter!("ingest_records_total", "kind" => T::KIND.as_str(), "outcome" => "rejected")
        .increment(prepared.rejected.len() as u64);
    if prepared.records.is_empty() && prepared.duplicates == 0 {
        return Err(IngestError::Rejected {
            code: "validation_failed".into(),
            detail: format!(
                "all {} records were rejected; see `rejected`",
                prepared.rejected.len()
            ),
            rejected: prepared.rejected,
        });
    }
    Ok(prepared)
}

fn single_record_error(error: RecordError) -> IngestError {
    let detail = error
        .errors()
        .first()
        .map(|e| {
            if e.field.is_empty() {
                e.message.clone()
            } else {
                format!("{}: {}", e.field, e.message)
            }
        })
        .unwrap_or_else(|| "the record is invalid".into());
    match error {
        RecordError::Shape(errors) => IngestError::Malformed { detail, errors },
        RecordError::Rules(_) => IngestError::Rejected {
            code: error.code(),
            detail,
            rejected: vec![RejectedRecord {
                index: 0,
                code: error.code(),
                errors: error.errors().to_vec(),
            }],
        },
    }
}

/// Appends the records (one log message per subject) and waits for every ack. Also returns
/// the time of receipt the log holds for them: the request's own, or the earliest of the
/// requests merged with it ([`crate::coalesce`]); the earliest over subjects.
#[tracing::instrument(name = "append", skip_all, fields(account_id = %caller.account_id, kind = T::KIND.as_str()))]
pub async fn append<T: PluginRecord>(
    state: &AppState,
    caller: &Caller,
    prepared: Prepared<T>,
) -> Result<(WriteReport, DateTime<Utc>), IngestError> {
    let Prepared {
        records,
        client_ids,
        mut duplicates,
        rejected,
        received_at,
        ..
    } = prepared;
    let mut groups: Vec<(Option<String>, Vec<Logged<T>>)> = Vec::new();
    for logged in records {
        let name = logged.record.subject_name().map(str::to_owned);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, group)) => group.push(logged),
            None => groups.push((name, vec![logged])),
        }
    }
    // Every group is sealed before anything is published: a keyring failure appends nothing.
    let mut messages = Vec::with_capacity(groups.len());
    for (name, group) in groups {
        let subject = state
            .subjects
            .for_records(caller.account_id, T::KIND, name.as_deref());
        let client_ids = client_ids.then(|| group.iter().map(|logged| logged.id).collect());
        let count = group.len();
        let message = LogMessage::new(caller.account_id, received_at, T::into_batch(group));
        messages.push(Outgoing {
            subject,
            client_ids,
            count,
            message,
        });
    }
    seal_all::<T>(state, caller.account_id, &mut messages).await?;
    let publishes = messages.into_iter().map(|outgoing| {
        let count = outgoing.count;
        let part = Part {
            account_id: caller.account_id,
            kind: T::KIND,
            subject: outgoing.subject,
            received_at,
            records: count,
            client_ids: outgoing.client_ids,
            payload: outgoing.message.encode(),
        };
        async move { (count, state.coalescer.append(part).await) }
    });
    let mut accepted = 0;
    let mut logged_at = received_at;
    // One after the other, in the order of the request's records: each subject has its own
    // publish lane (crate::coalesce), so publishing them at once could put a later subject's
    // records (quest_completed) in the log before an earlier one's (quest_started), and
    // readers order equal timestamps by log position. Most requests have one subject.
    let mut results = Vec::with_capacity(publishes.len());
    for publish in publishes {
        let (count, result) = publish.await;
        let failed = result.is_err();
        results.push((count, result));
        if failed {
            // The request fails (503); what follows is not appended.
            break;
        }
    }
    for (count, result) in results {
        let published = result.map_err(IngestError::Unavailable)?;
        logged_at = logged_at.min(published.received_at);
        let appended = published.appended;
        tracing::debug!(
            sequence = appended.sequence,
            records = count,
            duplicate = appended.duplicate,
            "appended"
        );
        if appended.duplicate {
            duplicates += count
        } else {
            accepted += count
        }
    }
    let kind = T::KIND.as_str();
    metrics::counter!("ingest_records_total", "kind" => kind, "outcome" => "accepted")
        .increment(accepted as u64);
    metrics::counter!("ingest_records_total", "kind" => kind, "outcome" => "duplicate")
        .increment(duplicates as u64);
    let report = WriteReport {
        accepted,
        duplicates,
        rejected,
    };
    Ok((report, logged_at))
}

/// One log message of a write, before its append.
struct Outgoing {
    subject: String,
    /// The records' ids, when every one came from the client: its message id is derived from
    /// them (never from the sealed bytes, which differ on every attempt), so a retried request
    /// keeps it.
    client_ids: Option<Vec<Uuid>>,
    /// Records it holds.
    count: usize,
    message: LogMessage,
}

/// Seals the personal fields of every message ([`shared::privacy`]). Only custom events
/// need the account's policy (which properties stay in clear), so only they read it; the
/// other kinds seal fixed fields. A key bucket that cannot be reached refuses the write like
/// an unavailable log: nothing is appended.
async fn seal_all<T: PluginRecord>(
    state: &AppState,
    account_id: Uuid,
    messages: &mut [Outgoing],
) -> Result<(), IngestError> {
    if !state.keyring.seals() {
        return Ok(());
    }
    // Fail fast while disconnected, as the publish would: a key fetch would wait it out.
    if !state.publisher.is_connected() {
        return Err(IngestError::Unavailable("not connected to NATS".into()));
    }
    let unavailable = |error: KeyringError| IngestError::Unavailable(format!("sealing: {error}"));
    let policy = match T::KIND {
        RecordKind::Custom => state
            .keyring
            .policy(account_id)
            .await
            .map_err(unavailable)?,
        _ => Arc::new(PrivacyPolicy::default()),
    };
    let seals = messages
        .iter_mut()
        .map(|outgoing| state.keyring.seal(&mut outgoing.message, &policy));
    futures::future::try_join_all(seals)
        .await
        .map_err(unavailable)?;
    Ok(())
}
