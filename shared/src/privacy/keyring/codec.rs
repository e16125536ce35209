//! Sealing and opening the values of one field, with ciphers from the cache.

use super::cache::{Cache, field_key};
use crate::privacy::properties;
use crate::privacy::sealed::{
    ERASED, HEADER_LEN, NONCE_LEN, SealedValue, associated_data, is_sealed, to_text, write_header,
};
use crate::privacy::{Field, FieldClass, PrivacyPolicy, Slot};
use rand::RngCore;
use ring::aead::{Aad, LessSafeKey, Nonce};
use uuid::Uuid;

/// Seals the fields of one log message (its account and day of receipt), reusing one buffer.
pub(super) struct Sealer {
    account: Uuid,
    day: u32,
    buffer: Vec<u8>,
}

impl Sealer {
    pub(super) fn new(account: Uuid, day: u32) -> Sealer {
        Sealer {
            account,
            day,
            buffer: Vec::new(),
        }
    }

    /// `text` sealed under `key` for `subject`'s field of `class`.
    pub(super) fn seal(
        &mut self,
        key: &LessSafeKey,
        subject: Uuid,
        class: FieldClass,
        text: &str,
    ) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let aad = associated_data(self.account, subject, class, self.day);
        let buffer = &mut self.buffer;
        buffer.clear();
        write_header(buffer, class, self.day, &nonce);
        buffer.extend_from_slice(text.as_bytes());
        #[allow(clippy::expect_used)]
        let tag = key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad),
                &mut buffer[HEADER_LEN..],
            )
            // Fails only for messages over 256 GiB; a field is at most 64 KiB.
            .expect("ChaCha20-Poly1305 seals any message shorter than 256 GiB");
        buffer.extend_from_slice(tag.as_ref());
        to_text(buffer)
    }
}

/// The clear text of a sealed value, or `None` when it cannot be opened (a key is gone).
fn open_text(cache: &mut Cache, account: Uuid, subject: Uuid, text: &str) -> Option<String> {
    let sealed = SealedValue::decode(text)?;
    let cipher = field_key(cache, account, subject, sealed.class, sealed.day)?.cipher();
    let aad = associated_data(account, subject, sealed.class, sealed.day);
    let mut buffer = sealed.ciphertext;
    let clear = cipher
        .open_in_place(
            Nonce::assume_unique_for_key(sealed.nonce),
            Aad::from(aad),
            &mut buffer,
        )
        .ok()?;
    String::from_utf8(clear.to_vec()).ok()
}

pub(super) fn open_field(cache: &mut Cache, account: Uuid, field: Field<'_>) {
    let subject = field.subject;
    let mut open = |text: &str| open_text(cache, account, subject, text);
    match field.slot {
        Slot::Text(text) if is_sealed(text) => {
            *text = open(text).unwrap_or_else(|| ERASED.to_owned());
        }
        Slot::OptionalText(slot) => {
            if let Some(text) = slot.as_deref()
                && is_sealed(text)
            {
                *slot = open(text);
            }
        }
        Slot::Texts(texts) => {
            let mut opened = Vec::with_capacity(texts.len());
            for text in texts.iter() {
                if !is_sealed(text) {
                    opened.push(text.clone());
                } else if let Some(clear) = open(text) {
                    opened.push(clear);
                }
            }
            *texts = opened;
        }
        Slot::Properties(props) => {
            let Some(raw) = props.as_deref() else { return };
            let text = raw.get();
            if !text.contains(SEALED_JSON) {
                return;
            }
            let Some(spans) = properties::spans(text) else {
                return;
            };
            // Each sealed value is put back where it was: the opened object is the text the
            // client sent, spacing included.
            let mut opened = Vec::new();
            for (_, span) in spans {
                if let Some(sealed) = properties::string_in(&text[span.clone()])
                    && is_sealed(&sealed)
                {
                    let clear = open(&sealed)
                        .and_then(|clear| serde_json::value::RawValue::from_string(clear).ok())
                        .map_or_else(|| "null".to_owned(), |clear| clear.get().to_owned());
                    opened.push((span, clear));
                }
            }
            if !opened.is_empty() {
                *props = Some(properties::splice(text, &opened));
            }
        }
        Slot::Text(_) => {}
    }
}

/// Calls `f` with the header of every sealed value in `slot`.
pub(super) fn for_each_sealed(slot: &Slot<'_>, mut f: impl FnMut(&SealedValue)) {
    let mut one = |text: &str| {
        if let Some(sealed) = SealedValue::decode(text) {
            f(&sealed);
        }
    };
    match slot {
        Slot::Text(text) => one(text),
        Slot::OptionalText(text) => text.iter().for_each(|t| one(t)),
        Slot::Texts(texts) => texts.iter().for_each(|t| one(t)),
        Slot::Properties(props) => {
            if let Some(raw) = props.as_deref()
                && raw.get().contains("\\u0000w1.")
                && let Some(entries) = properties::split(raw)
            {
                for (_, value) in &entries {
                    if let Some(text) = properties::string_of(value) {
                        one(&text);
                    }
                }
            }
        }
    }
}

/// True when `slot` holds something to seal.
pub(super) fn has_clear_value(slot: &Slot<'_>, policy: &PrivacyPolicy) -> bool {
    match slot {
        Slot::Text(text) => !is_sealed(text),
        Slot::OptionalText(text) => text.as_deref().is_some_and(|t| !is_sealed(t)),
        Slot::Texts(texts) => texts.iter().any(|t| !is_sealed(t)),
        Slot::Properties(props) => {
            let Some(raw) = props.as_deref() else {
                return false;
            };
            // The default (nothing kept in clear) on what a client sent (nothing sealed yet):
            // any entry at all is to seal, and the object need not be parsed for that.
            if policy.clear_properties.is_empty() && !raw.get().contains(SEALED_JSON) {
                return properties::has_entries(raw);
            }
            properties::split(raw).is_some_and(|entries| {
                entries
                    .iter()
                    .any(|(k, v)| policy.is_personal_property(k) && !is_sealed_value(v))
            })
        }
    }
}

/// How a sealed value starts in JSON text: the NUL of its prefix is always escaped so (ingest
/// writes it, and no client can send a NUL).
const SEALED_JSON: &str = "\"\\u0000w1.";

/// True when a property value is a sealed string already (sealing twice would nest it).
fn is_sealed_value(value: &serde_json::value::RawValue) -> bool {
    is_sealed_json(value.get())
}

/// True when the JSON text of a property value is a sealed string.
fn is_sealed_json(json: &str) -> bool {
    json.starts_with(SEALED_JSON)
        || (json.starts_with('"')
            && json.contains("\\u0000")
            && properties::string_in(json).is_some_and(|text| is_sealed(&text)))
}

pub(super) fn seal_properties(
    props: &mut Option<Box<serde_json::value::RawValue>>,
    policy: &PrivacyPolicy,
    seal: &mut dyn FnMut(&str) -> String,
) {
    let Some(raw) = props.as_deref() else { return };
    let text = raw.get();
    let Some(spans) = properties::spans(text) else {
        return;
    };
    // Each value is sealed where it stands and the rest of the text is kept as sent, so
    // readers open the very text the client sent; the object's JSON is checked once.
    let mut sealed = Vec::new();
    for (key, span) in spans {
        let value = &text[span.clone()];
        if policy.is_personal_property(&key) && !is_sealed_json(value) {
            let mut json = String::new();
            properties::push_sealed(&mut json, &seal(value));
            sealed.push((span, json));
        }
    }
    if !sealed.is_empty() {
        *props = Some(properties::splice(text, &sealed));
    }
}

/// Sets a slot to its erased value.
pub(super) fn erase(slot: Slot<'_>) {
    match slot {
        Slot::Text(text) => *text = ERASED.to_owned(),
        Slot::OptionalText(text) => *text = None,
        Slot::Texts(texts) => texts.clear(),
        Slot::Properties(_) => {}
    }
}
