//! The write path shared by every plugin endpoint: decode, validate, normalize, then append
//! one log message per subject and wait for every ack.

use crate::decode::{RecordError, decode_body};
use crate::error::IngestError;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
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

/// Decodes, validates and normalizes every record; refuses the request when none is usable.
pub fn prepare<T: PluginRecord>(state: &AppState, body: &[u8]) -> Result<Prepared<T>, IngestError> {
    let received_at = Utc::now();
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
                record.normalize(received_at, &state.ip_hasher);
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

/// Appends the records (one log message per subject) and waits for every ack.
#[tracing::instrument(name = "append", skip_all, fields(account_id = %caller.account_id, kind = T::KIND.as_str()))]
pub async fn append<T: PluginRecord>(
    state: &AppState,
    caller: &Caller,
    prepared: Prepared<T>,
) -> Result<WriteReport, IngestError> {
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
        // From the ids only (never the sealed bytes, which differ on every attempt), so a
        // retried request keeps its message id.
        let message_id = client_ids.then(|| message_id(caller.account_id, &group));
        let count = group.len();
        let message = LogMessage::new(caller.account_id, received_at, T::into_batch(group));
        messages.push(Outgoing {
            subject,
            message_id,
            count,
            message,
        });
    }
    seal_all::<T>(state, caller.account_id, &mut messages).await?;
    let publishes = messages.into_iter().map(|outgoing| {
        let Outgoing {
            subject,
            message_id,
            count,
            message,
        } = outgoing;
        let payload = message.encode();
        async move {
            (
                count,
                state.publisher.append(subject, message_id, payload).await,
            )
        }
    });
    let mut accepted = 0;
    for (count, result) in futures::future::join_all(publishes).await {
        let appended = result.map_err(IngestError::Unavailable)?;
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
    Ok(WriteReport {
        accepted,
        duplicates,
        rejected,
    })
}

/// One log message of a write, before its append.
struct Outgoing {
    subject: String,
    /// Derived from the records' client ids (see [`message_id`]), when they all have one.
    message_id: Option<String>,
    /// Records it holds.
    count: usize,
    message: LogMessage,
}

/// Seals the personal fields of every message ([`shared::privacy`]). Only custom events
/// need the account's policy (which properties are personal), so only they read it; the
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

/// A log message id derived from the records' client ids, so a retried request is recognised
/// by JetStream's duplicate window.
fn message_id<T>(account_id: Uuid, records: &[Logged<T>]) -> String {
    let mut hash = Sha256::new();
    hash.update(account_id.as_bytes());
    for logged in records {
        hash.update(logged.id.as_bytes());
    }
    hex::encode(hash.finalize())
}
