//! The text form of a sealed field, as it stands in the event log in place of the clear value.
//!
//! `"\0w1." + base64url(class || day || nonce || ciphertext+tag)`, where `class` is one byte,
//! `day` four (the UTC day of receipt as big-endian days since 1970-01-01, for every class) and
//! `nonce` twelve. The leading NUL makes it unambiguous: ingest refuses NUL in every text field
//! and in every string of custom-event properties, so no clear value a client sent can look
//! sealed. The associated data binds the value to its account, subject (player), class and day.

use super::FieldClass;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use uuid::Uuid;

/// What a sealed value starts with.
const PREFIX: &str = "\0w1.";

/// Bytes of nonce in a sealed value (ChaCha20-Poly1305).
pub(crate) const NONCE_LEN: usize = 12;

/// What an erased text field reads as. Optional fields read as `None`, custom-event
/// properties as `null`.
pub const ERASED: &str = "";

/// True when `value` is a sealed field (not yet opened).
pub fn is_sealed(value: &str) -> bool {
    value.starts_with(PREFIX)
}

/// The parts of a sealed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SealedValue {
    pub(crate) class: FieldClass,
    pub(crate) day: u32,
    pub(crate) nonce: [u8; NONCE_LEN],
    pub(crate) ciphertext: Vec<u8>,
}

/// Bytes before the ciphertext: class, day and nonce.
pub(crate) const HEADER_LEN: usize = 1 + 4 + NONCE_LEN;

/// Appends the header of a sealed value to `bytes`.
pub(crate) fn write_header(bytes: &mut Vec<u8>, class: FieldClass, day: u32, nonce: &[u8]) {
    bytes.push(class.code());
    bytes.extend_from_slice(&day.to_be_bytes());
    bytes.extend_from_slice(nonce);
}

/// The text that stands in the log for the header and ciphertext `bytes`.
pub(crate) fn to_text(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(PREFIX.len() + bytes.len().div_ceil(3) * 4);
    text.push_str(PREFIX);
    URL_SAFE_NO_PAD.encode_string(bytes, &mut text);
    text
}

impl SealedValue {
    /// The text that stands in the log.
    #[cfg(test)]
    pub(crate) fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(HEADER_LEN + self.ciphertext.len());
        write_header(&mut bytes, self.class, self.day, &self.nonce);
        bytes.extend_from_slice(&self.ciphertext);
        to_text(&bytes)
    }

    /// Reads a sealed value; `None` when `text` is not one (or is damaged).
    pub(crate) fn decode(text: &str) -> Option<SealedValue> {
        let bytes = URL_SAFE_NO_PAD.decode(text.strip_prefix(PREFIX)?).ok()?;
        if bytes.len() < HEADER_LEN {
            return None;
        }
        let class = FieldClass::from_code(bytes[0])?;
        let day = u32::from_be_bytes(bytes[1..5].try_into().ok()?);
        let nonce = bytes[5..5 + NONCE_LEN].try_into().ok()?;
        Some(SealedValue {
            class,
            day,
            nonce,
            ciphertext: bytes[HEADER_LEN..].to_vec(),
        })
    }
}

/// The associated data of a sealed value.
pub(crate) fn associated_data(
    account: Uuid,
    subject: Uuid,
    class: FieldClass,
    day: u32,
) -> [u8; 37] {
    let mut aad = [0u8; 37];
    aad[..16].copy_from_slice(account.as_bytes());
    aad[16..32].copy_from_slice(subject.as_bytes());
    aad[32] = class.code();
    aad[33..].copy_from_slice(&day.to_be_bytes());
    aad
}
