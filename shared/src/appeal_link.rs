//! Appeal links: the signed, expiring token a banned player's kick screen carries to the public
//! appeal form (`/appeal/<token>`). The token proves which punishment of which account the
//! holder may appeal, until it expires; no account or sign-in is needed.
//!
//! A token is 71 URL-safe characters: base64url (no padding) of
//! `version (1) | account id (16) | punishment id (16) | expiry, Unix seconds (4, big-endian) |
//! tag (16)`, the tag being the first 16 bytes of HMAC-SHA256 under the account's link key
//! ([`Keyring::link_key`](crate::privacy::Keyring::link_key)) of a label and the 37 bytes
//! before it. Ingest signs them for its plugins (on the action feed and on request, as they
//! near expiry); query-api checks them. Nothing about a token is stored.

use crate::privacy::LinkKey;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, TimeZone, Utc};
use uuid::Uuid;

/// How long a link is good for once signed.
pub const LINK_LIFETIME: Duration = Duration::days(30);
/// The path of the appeal form, before the token.
pub const APPEAL_PATH: &str = "/appeal/";

const VERSION: u8 = 1;
const LABEL: &[u8] = b"warden appeal link v1\0";
const SIGNED_LEN: usize = 1 + 16 + 16 + 4;
const TAG_LEN: usize = 16;
const TOKEN_BYTES: usize = SIGNED_LEN + TAG_LEN;
/// Characters in a token.
pub const TOKEN_LEN: usize = 71;

/// What a valid token grants: appealing `punishment_id` of `account_id` until `expires_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppealClaims {
    /// The account the punishment belongs to.
    pub account_id: Uuid,
    /// The punishment.
    pub punishment_id: Uuid,
    /// When the link stops working (whole seconds).
    pub expires_at: DateTime<Utc>,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Not a token this service made (wrong length or characters, unknown version, or a tag
    /// that does not match).
    #[error("this appeal link is not valid")]
    Invalid,
    /// A genuine token past its expiry.
    #[error("this appeal link has expired")]
    Expired,
}

/// A token read but not yet checked: the account it names tells whose key checks it.
#[derive(Debug, Clone, Copy)]
pub struct Unverified {
    bytes: [u8; TOKEN_BYTES],
}

impl AppealClaims {
    /// Claims for `punishment_id` of `account_id`, expiring [`LINK_LIFETIME`] after `now`.
    pub fn new(account_id: Uuid, punishment_id: Uuid, now: DateTime<Utc>) -> AppealClaims {
        let expires = (now + LINK_LIFETIME).timestamp();
        AppealClaims {
            account_id,
            punishment_id,
            expires_at: Utc
                .timestamp_opt(expires, 0)
                .single()
                .unwrap_or(now + LINK_LIFETIME),
        }
    }

    /// The token, signed with `key` (the account's link key).
    pub fn sign(&self, key: &LinkKey) -> String {
        let mut bytes = [0u8; TOKEN_BYTES];
        bytes[0] = VERSION;
        bytes[1..17].copy_from_slice(self.account_id.as_bytes());
        bytes[17..33].copy_from_slice(self.punishment_id.as_bytes());
        let expires = u32::try_from(self.expires_at.timestamp().max(0)).unwrap_or(u32::MAX);
        bytes[33..37].copy_from_slice(&expires.to_be_bytes());
        let tag = key.tag(&[LABEL, &bytes[..SIGNED_LEN]]);
        bytes[SIGNED_LEN..].copy_from_slice(&tag[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

impl Unverified {
    /// Reads `token`'s shape (nothing is trusted yet).
    pub fn read(token: &str) -> Result<Unverified, LinkError> {
        if token.len() != TOKEN_LEN {
            return Err(LinkError::Invalid);
        }
        let decoded = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| LinkError::Invalid)?;
        let bytes: [u8; TOKEN_BYTES] = decoded.try_into().map_err(|_| LinkError::Invalid)?;
        if bytes[0] != VERSION {
            return Err(LinkError::Invalid);
        }
        Ok(Unverified { bytes })
    }

    /// The account the token names (unproven until [`verify`](Unverified::verify)).
    pub fn account_id(&self) -> Uuid {
        Uuid::from_slice(&self.bytes[1..17]).unwrap_or_default()
    }

    /// The claims, once the tag matches under `key` and the token has not expired at `now`.
    pub fn verify(&self, key: &LinkKey, now: DateTime<Utc>) -> Result<AppealClaims, LinkError> {
        let tag = key.tag(&[LABEL, &self.bytes[..SIGNED_LEN]]);
        // Constant time: the comparison must not tell how many leading bytes were right.
        let differs = tag[..TAG_LEN]
            .iter()
            .zip(&self.bytes[SIGNED_LEN..])
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if differs != 0 {
            return Err(LinkError::Invalid);
        }
        let mut expires = [0u8; 4];
        expires.copy_from_slice(&self.bytes[33..37]);
        let expires_at = Utc
            .timestamp_opt(i64::from(u32::from_be_bytes(expires)), 0)
            .single()
            .ok_or(LinkError::Invalid)?;
        if expires_at <= now {
            return Err(LinkError::Expired);
        }
        Ok(AppealClaims {
            account_id: self.account_id(),
            punishment_id: Uuid::from_slice(&self.bytes[17..33]).map_err(|_| LinkError::Invalid)?,
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> LinkKey {
        LinkKey::from_bytes([byte; 32])
    }

    #[test]
    fn a_signed_token_reads_back_until_it_expires() {
        let now = Utc::now();
        let claims = AppealClaims::new(Uuid::new_v4(), Uuid::now_v7(), now);
        let token = claims.sign(&key(7));
        assert_eq!(token.len(), TOKEN_LEN);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        let read = Unverified::read(&token).unwrap();
        assert_eq!(read.account_id(), claims.account_id);
        assert_eq!(read.verify(&key(7), now), Ok(claims));
        assert_eq!(
            read.verify(&key(7), claims.expires_at),
            Err(LinkError::Expired)
        );
        assert_eq!(read.verify(&key(8), now), Err(LinkError::Invalid));
    }

    #[test]
    fn a_changed_or_malformed_token_is_refused() {
        let now = Utc::now();
        let claims = AppealClaims::new(Uuid::new_v4(), Uuid::now_v7(), now);
        let token = claims.sign(&key(1));
        // Every single-character change of the token either fails to read or fails the tag.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for i in 0..token.len() {
            let mut changed = token.clone().into_bytes();
            changed[i] = alphabet
                .iter()
                .copied()
                .find(|&c| c != changed[i])
                .unwrap_or(b'A');
            let changed = String::from_utf8(changed).unwrap();
            let outcome = Unverified::read(&changed).and_then(|u| u.verify(&key(1), now));
            assert!(outcome.is_err(), "position {i} changed yet accepted");
        }
        for bad in [
            "",
            "short",
            &token[1..],
            &format!("{token}A"),
            &token.replace(&token[..4], "+/+/"),
            &"A".repeat(TOKEN_LEN),
        ] {
            let outcome = Unverified::read(bad).and_then(|u| u.verify(&key(1), now));
            assert_eq!(outcome, Err(LinkError::Invalid), "{bad:?}");
        }
    }
}
