//! Appending a record the dashboard writes (a note, a punishment action) to the event log:
//! sealed with the player's key, under a message id that is the account's and the record's
//! (so the same form sent again is a duplicate to the stream), answered only after the
//! stream's ack.

use crate::state::AppState;
use shared::envelope::LogMessage;
use shared::privacy::PrivacyPolicy;
use uuid::Uuid;

/// Why the event log has no record: the outcome the page reports.
pub enum NotAppended {
    /// Nothing was sent: nothing can be stored later.
    Unsent(String),
    /// Sent (or possibly sent) without an ack in time: it may be stored when the log is back.
    Unconfirmed(String),
}

/// Seals `message` and appends it on `subject` as `<tag>:<account>:<id>`. Refused at once
/// while disconnected, as the append would be (fetching the player's key would wait for the
/// reconnect): nothing was sent, so nothing can be written later.
pub async fn append(
    state: &AppState,
    subject: String,
    message: &mut LogMessage,
    tag: &str,
    id: Uuid,
) -> Result<(), NotAppended> {
    if !state.publisher.is_connected() {
        return Err(NotAppended::Unsent("not connected to NATS".to_owned()));
    }
    let policy = PrivacyPolicy::default();
    let sealed = state.keyring.seal(message, &policy).await;
    sealed.map_err(|error| NotAppended::Unsent(format!("sealing: {error}")))?;
    let payload = message.encode();
    let message_id = format!("{tag}:{}:{id}", message.account_id);
    state
        .publisher
        .append(subject, Some(message_id), payload)
        .await
        .map(|_| ())
        .map_err(NotAppended::Unconfirmed)
}
