use super::{PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::net::IpAddr;
use utoipa::ToSchema;
use uuid::Uuid;

/// Join or quit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionEvent {
    /// The player joined the server.
    Join,
    /// The player left the server.
    Quit,
}

/// A player joining or leaving a server (`POST /api/plugin/sessions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Session {
    /// UUID of the server.
    pub server_id: Uuid,
    /// The player.
    pub player_uuid: Uuid,
    /// The player's name now.
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub player_name: String,
    /// `join` or `quit`.
    pub event: SessionEvent,
    /// When; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub at: Option<DateTime<Utc>>,
    /// The player's client version, e.g. "1.21.4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub client_version: Option<String>,
    /// The player's IP as sent. Never logged or stored: ingest replaces it by `ip_hash`.
    #[serde(default, skip_serializing)]
    pub ip: Option<String>,
    /// Keyed hash of the IP (for alt detection), set by ingest with its account's key
    /// ([`IpHasher::for_account`]); a client's value is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(read_only)]
    pub ip_hash: Option<String>,
}

/// Hashes IPs with a secret key (HMAC-SHA256), so equal IPs match without being stored.
///
/// Player IPs are hashed with a key of their account ([`IpHasher::for_account`]), so the same
/// address hashes differently in two accounts and a reader of the database cannot link the
/// players of one network to those of another; the deployment's key itself is left for
/// hashes that belong to no account (the dashboard's audit log).
#[derive(Clone)]
pub struct IpHasher {
    key: Vec<u8>,
}

/// Separates the per-account keys from every other use of `IP_HASH_KEY`.
const ACCOUNT_KEY_LABEL: &[u8] = b"warden ip-hash account key v1\0";

impl IpHasher {
    /// A hasher with the deployment's secret `IP_HASH_KEY`.
    pub fn new(key: &[u8]) -> Self {
        Self { key: key.to_vec() }
    }

    /// The hasher of one account's player IPs: keyed with
    /// `HMAC-SHA256(IP_HASH_KEY, label || account id)`, a pseudo-random key per account that
    /// needs nothing stored and cannot be turned back into the deployment's key.
    pub fn for_account(&self, account_id: Uuid) -> IpHasher {
        let mut mac = self.mac();
        mac.update(ACCOUNT_KEY_LABEL);
        mac.update(account_id.as_bytes());
        IpHasher {
            key: mac.finalize().into_bytes().to_vec(),
        }
    }

    /// Hex HMAC of the canonical form of `ip` (so `::ffff:1.2.3.4` and `1.2.3.4` match).
    pub fn hash(&self, ip: IpAddr) -> String {
        let canonical = ip.to_canonical().to_string();
        let mut mac = self.mac();
        mac.update(canonical.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length, so this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"))
    }
}

impl std::fmt::Debug for IpHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IpHasher(..)")
    }
}

impl PluginRecord for Session {
    const KIND: RecordKind = RecordKind::Session;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("player_name", Some(&self.player_name), 1, 64);
        errors.text("client_version", self.client_version.as_deref(), 1, 64);
        errors.record_time("at", self.at, now);
        if let Some(ip) = &self.ip
            && ip.parse::<IpAddr>().is_err()
        {
            errors.push("ip", "invalid_ip", "must be an IPv4 or IPv6 address");
        }
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, ip_hasher: &IpHasher) {
        self.at.get_or_insert(received_at);
        self.ip_hash = self
            .ip
            .take()
            .and_then(|ip| ip.parse::<IpAddr>().ok())
            .map(|ip| ip_hasher.hash(ip));
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::Session(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ip_never_survives_normalization_or_serialization() {
        let mut session: Session = serde_json::from_str(
            r#"{"server_id":"7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10","player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5",
                "player_name":"Notch","event":"join","ip":"203.0.113.7","ip_hash":"forged"}"#,
        )
        .expect("valid session");
        let hasher = IpHasher::new(b"secret");
        session.normalize(Utc::now(), &hasher);
        let logged = serde_json::to_string(&session).expect("serializes");
        assert!(!logged.contains("203.0.113.7"));
        assert!(!logged.contains("forged"));
        assert_eq!(
            session.ip_hash,
            Some(hasher.hash("203.0.113.7".parse().expect("ip")))
        );
    }

    #[test]
    fn mapped_ipv4_hashes_like_ipv4_and_keys_differ() {
        let a = IpHasher::new(b"k1");
        let v4: IpAddr = "1.2.3.4".parse().expect("ip");
        let mapped: IpAddr = "::ffff:1.2.3.4".parse().expect("ip");
        assert_eq!(a.hash(v4), a.hash(mapped));
        assert_ne!(a.hash(v4), IpHasher::new(b"k2").hash(v4));
    }

    #[test]
    fn one_address_hashes_alike_within_an_account_and_apart_across_accounts() {
        let deployment = IpHasher::new(b"deployment key");
        let first = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0001);
        let second = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0002);
        let ip: IpAddr = "203.0.113.7".parse().expect("ip");
        let mapped: IpAddr = "::ffff:203.0.113.7".parse().expect("ip");
        // Alts: the same account's hasher, made again (another request, another replica),
        // gives the same hash for the same address, in either spelling.
        let in_first = deployment.for_account(first).hash(ip);
        assert_eq!(in_first, deployment.for_account(first).hash(mapped));
        assert_eq!(
            in_first,
            IpHasher::new(b"deployment key").for_account(first).hash(ip)
        );
        // Another account, the deployment key itself, another deployment: all different.
        assert_ne!(in_first, deployment.for_account(second).hash(ip));
        assert_ne!(in_first, deployment.hash(ip));
        assert_ne!(
            in_first,
            IpHasher::new(b"other key").for_account(first).hash(ip)
        );
        assert_ne!(
            in_first,
            deployment
                .for_account(first)
                .hash("203.0.113.8".parse().expect("ip"))
        );
    }
}
