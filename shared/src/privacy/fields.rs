//! Which fields of each record are personal, whose they are, and their class.
//!
//! A field belongs to a *subject*: the player whose key seals it. A staff member's name in a
//! punishment or rank change belongs to the staff member (`staff_uuid`); without a
//! `staff_uuid` (the console) it is not a person's name and stays clear. Heartbeats hold
//! nothing personal.

use super::FieldClass;
use crate::envelope::{Logged, RecordBatch};
use crate::records::{
    AccountLink, Action, AnticheatFlag, Appeal, ChatEntry, CustomEvent, Note, Punishment,
    RankChange, Session,
};
use serde_json::value::RawValue;
use uuid::Uuid;

/// Where a personal value is held.
#[derive(Debug)]
pub enum Slot<'a> {
    /// A required text; erased reads as [`super::ERASED`].
    Text(&'a mut String),
    /// An optional text; erased reads as `None`.
    OptionalText(&'a mut Option<String>),
    /// A list of texts (a note's evidence links); erased reads as empty.
    Texts(&'a mut Vec<String>),
    /// Custom-event properties: each top-level property's value is sealed, but for those the
    /// account keeps in clear; erased ones read as `null`.
    Properties(&'a mut Option<Box<RawValue>>),
}

/// One personal field of a record.
#[derive(Debug)]
pub struct Field<'a> {
    /// The player whose key seals it.
    pub subject: Uuid,
    /// Its class.
    pub class: FieldClass,
    /// The value.
    pub slot: Slot<'a>,
}

/// A record with personal fields.
pub trait Personal {
    /// Every personal field, in a fixed order.
    fn personal_fields(&mut self) -> Vec<Field<'_>>;
}

fn field(subject: Uuid, class: FieldClass, slot: Slot<'_>) -> Field<'_> {
    Field {
        subject,
        class,
        slot,
    }
}

use FieldClass::{Chat, EventProperties, Identity, IpHash};

impl Personal for ChatEntry {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        vec![
            field(p, Identity, Slot::OptionalText(&mut self.player_name)),
            field(p, Chat, Slot::Text(&mut self.message)),
        ]
    }
}

impl Personal for Session {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        vec![
            field(p, Identity, Slot::Text(&mut self.player_name)),
            field(p, IpHash, Slot::OptionalText(&mut self.ip_hash)),
        ]
    }
}

impl Personal for Punishment {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        let mut fields = vec![
            field(p, Identity, Slot::OptionalText(&mut self.player_name)),
            field(p, Identity, Slot::OptionalText(&mut self.reason)),
            field(p, Identity, Slot::OptionalText(&mut self.revoke_reason)),
        ];
        if let Some(staff) = self.staff_uuid {
            fields.push(field(
                staff,
                Identity,
                Slot::OptionalText(&mut self.staff_name),
            ));
        }
        fields
    }
}

impl Personal for RankChange {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let mut fields = vec![field(
            self.player_uuid,
            Identity,
            Slot::OptionalText(&mut self.player_name),
        )];
        if let Some(staff) = self.staff_uuid {
            fields.push(field(
                staff,
                Identity,
                Slot::OptionalText(&mut self.staff_name),
            ));
        }
        fields
    }
}

impl Personal for AnticheatFlag {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        vec![field(
            self.player_uuid,
            Identity,
            Slot::OptionalText(&mut self.player_name),
        )]
    }
}

impl Personal for AccountLink {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        vec![
            field(p, Identity, Slot::Text(&mut self.external_id)),
            field(p, Identity, Slot::OptionalText(&mut self.external_name)),
        ]
    }
}

impl Personal for CustomEvent {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        vec![field(
            self.player_uuid,
            EventProperties,
            Slot::Properties(&mut self.properties),
        )]
    }
}

impl Personal for Note {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        vec![
            field(p, Identity, Slot::Text(&mut self.text)),
            field(p, Identity, Slot::Texts(&mut self.evidence)),
        ]
    }
}

impl Personal for Action {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid();
        let mut fields = Vec::new();
        if let Some(punishment) = self.punishment.as_mut() {
            fields.push(field(
                p,
                Identity,
                Slot::OptionalText(&mut punishment.player_name),
            ));
            fields.push(field(
                p,
                Identity,
                Slot::OptionalText(&mut punishment.reason),
            ));
        }
        if let Some(revoke) = self.revoke.as_mut() {
            fields.push(field(p, Identity, Slot::OptionalText(&mut revoke.reason)));
        }
        fields
    }
}

impl Personal for Appeal {
    fn personal_fields(&mut self) -> Vec<Field<'_>> {
        let p = self.player_uuid;
        // The member's name stays clear, as on an action.
        vec![
            field(p, Identity, Slot::OptionalText(&mut self.message)),
            field(p, Identity, Slot::OptionalText(&mut self.reply)),
        ]
    }
}

impl RecordBatch {
    /// Every personal field of every record, in log order.
    pub fn personal_fields(&mut self) -> Vec<Field<'_>> {
        fn all<T: Personal>(records: &mut [Logged<T>]) -> Vec<Field<'_>> {
            records
                .iter_mut()
                .flat_map(|r| r.record.personal_fields())
                .collect()
        }
        match self {
            // An erasure names the player by UUID only.
            // An acknowledgement names the action and the server only.
            RecordBatch::Heartbeat(_) | RecordBatch::Erasure(_) | RecordBatch::ActionAck(_) => {
                Vec::new()
            }
            RecordBatch::Chat(r) => all(r),
            RecordBatch::Punishment(r) => all(r),
            RecordBatch::AnticheatFlag(r) => all(r),
            RecordBatch::Session(r) => all(r),
            RecordBatch::RankChange(r) => all(r),
            RecordBatch::AccountLink(r) => all(r),
            RecordBatch::Custom(r) => all(r),
            RecordBatch::Note(r) => all(r),
            RecordBatch::Action(r) => all(r),
            RecordBatch::Appeal(r) => all(r),
        }
    }
}
