//! The records the sessions model reads (joins, quits, heartbeats), with their account, time
//! and place in the log.

use chrono::{DateTime, Utc};
use shared::envelope::{LogMessage, RecordBatch, event_seq};
use shared::records::SessionEvent;
use uuid::Uuid;

/// One record the sessions model reads, with its account, time and place in the log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Happening<'a> {
    /// A player joined a server; `id` is the join record's event id (the session's id).
    Join {
        /// Owning account.
        account_id: Uuid,
        /// Event id.
        id: Uuid,
        /// Log position.
        seq: i64,
        /// The player.
        player: Uuid,
        /// The server.
        server: Uuid,
        /// When.
        at: DateTime<Utc>,
        /// Client version, if sent.
        client_version: Option<&'a str>,
        /// Keyed IP hash, if sent.
        ip_hash: Option<&'a str>,
    },
    /// A player left a server.
    Quit {
        /// Owning account.
        account_id: Uuid,
        /// Log position.
        seq: i64,
        /// The player.
        player: Uuid,
        /// The server.
        server: Uuid,
        /// When.
        at: DateTime<Utc>,
    },
    /// A server's heartbeat.
    Heartbeat {
        /// Owning account.
        account_id: Uuid,
        /// Log position.
        seq: i64,
        /// The server.
        server: Uuid,
        /// When.
        at: DateTime<Utc>,
        /// False on a graceful shutdown.
        online: bool,
    },
}

/// The joins, quits and heartbeats of one log message, in log order.
pub fn happenings_of(stream_sequence: u64, message: &LogMessage) -> Vec<Happening<'_>> {
    let account_id = message.account_id;
    let received_at = message.received_at;
    match &message.batch {
        RecordBatch::Session(records) => records
            .iter()
            .enumerate()
            .map(|(index, logged)| {
                let r = &logged.record;
                let (seq, at) = (
                    event_seq(stream_sequence, index),
                    r.at.unwrap_or(received_at),
                );
                match r.event {
                    SessionEvent::Join => Happening::Join {
                        account_id,
                        id: logged.id,
                        seq,
                        player: r.player_uuid,
                        server: r.server_id,
                        at,
                        client_version: r.client_version.as_deref(),
                        ip_hash: r.ip_hash.as_deref(),
                    },
                    SessionEvent::Quit => Happening::Quit {
                        account_id,
                        seq,
                        player: r.player_uuid,
                        server: r.server_id,
                        at,
                    },
                }
            })
            .collect(),
        RecordBatch::Heartbeat(records) => records
            .iter()
            .enumerate()
            .map(|(index, logged)| Happening::Heartbeat {
                account_id,
                seq: event_seq(stream_sequence, index),
                server: logged.record.server_id,
                at: logged.record.timestamp.unwrap_or(received_at),
                online: logged.record.online.unwrap_or(true),
            })
            .collect(),
        _ => Vec::new(),
    }
}
