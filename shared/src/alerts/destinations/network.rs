//! The SSRF policy: which addresses a destination may reach (`WEBHOOK_ALLOW_NETWORKS`).
//!
//! By default every loopback, private, link-local and special-purpose range is refused (the
//! non-global rows of IANA's special-purpose registries, see [`ranges`]), and IPv6 forms that
//! carry an IPv4 address meet the IPv4 rules, so an IPv6 spelling cannot slip a private IPv4
//! address past the check: IPv4-mapped (`::ffff:10.0.0.1`) and NAT64 (`64:ff9b::/96`)
//! addresses are judged as the IPv4 address; 6to4, Teredo, IPv4-translated and
//! IPv4-compatible addresses are refused as ranges of their own, and even where the operator
//! allows such a range, the IPv4 addresses they carry must pass too.

use crate::config::{ConfigError, Vars};
use std::net::{IpAddr, Ipv4Addr};

mod ranges;

/// The classes of address the policy knows; the first three can be allowed by keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Loopback,
    Private,
    LinkLocal,
    /// Special-purpose ranges (CGNAT, documentation, benchmarking, reserved, tunnels and
    /// translation forms): refused unless a CIDR in `WEBHOOK_ALLOW_NETWORKS` covers them.
    Special,
    /// Never a destination (unspecified, `0.0.0.0/8`, multicast, broadcast), whatever the
    /// policy says.
    Never,
}

/// An address the policy refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "address {ip} is {range}, which webhooks may not reach{hint}",
    hint = if *.allowable { " (the operator can allow it in WEBHOOK_ALLOW_NETWORKS)" } else { "" }
)]
pub struct ForbiddenAddress {
    /// The refused address.
    pub ip: IpAddr,
    /// Which range it falls in, e.g. `a private network (10.0.0.0/8)`.
    pub range: &'static str,
    /// Whether `WEBHOOK_ALLOW_NETWORKS` could allow it.
    pub allowable: bool,
}

/// An IP network in CIDR notation (`10.1.0.0/16`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `addr/prefix` (a bare address is a single host).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("'{text}' is not an IP address or CIDR"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("'{text}' has a prefix length outside 0..={max}"))?,
            None => max,
        };
        Ok(Cidr { addr, prefix })
    }

    /// Whether `ip` lies inside (an IPv4 network never holds an IPv6 address: callers pass
    /// IPv4-mapped addresses in their IPv4 form).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_eq(u32::from(net).into(), u32::from(ip).into(), self.prefix, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_eq(u128::from(net), u128::from(ip), self.prefix, 128)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` of `bits` bits of `a` and `b` agree.
fn prefix_eq(a: u128, b: u128, prefix: u8, bits: u32) -> bool {
    let prefix = u32::from(prefix);
    if prefix == 0 {
        return true;
    }
    let shift = bits - prefix;
    (a >> shift) == (b >> shift)
}

/// Which addresses destinations may reach, from `WEBHOOK_ALLOW_NETWORKS`. The default
/// (empty) refuses every loopback, private, link-local and special-purpose address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    loopback: bool,
    private: bool,
    link_local: bool,
    networks: Vec<Cidr>,
}

impl NetworkPolicy {
    /// Reads `WEBHOOK_ALLOW_NETWORKS`: a comma-separated list of `loopback`, `private`,
    /// `link-local` and/or CIDRs; unset or empty allows none of them.
    pub fn from_vars(vars: &Vars) -> Result<NetworkPolicy, ConfigError> {
        let text = vars.get("WEBHOOK_ALLOW_NETWORKS").unwrap_or_default();
        NetworkPolicy::parse(&text).map_err(|reason| ConfigError::Invalid {
            name: "WEBHOOK_ALLOW_NETWORKS",
            reason,
        })
    }

    /// Parses the `WEBHOOK_ALLOW_NETWORKS` list.
    pub fn parse(text: &str) -> Result<NetworkPolicy, String> {
        let mut policy = NetworkPolicy::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match item.to_ascii_lowercase().as_str() {
                "loopback" => policy.loopback = true,
                "private" => policy.private = true,
                "link-local" => policy.link_local = true,
                _ => policy.networks.push(Cidr::parse(item).map_err(|e| {
                    format!("{e}; expected loopback, private, link-local or a CIDR")
                })?),
            }
        }
        Ok(policy)
    }

    /// A policy that allows loopback only (what the tests and the local stack use).
    pub fn allow_loopback() -> NetworkPolicy {
        NetworkPolicy {
            loopback: true,
            ..NetworkPolicy::default()
        }
    }

    /// Whether `localhost` and other loopback addresses are allowed.
    pub fn allows_loopback(&self) -> bool {
        self.loopback
    }

    /// `Ok` when a destination may connect to `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), ForbiddenAddress> {
        let ip = canonical(ip);
        let Some((class, range, carried)) = classify(ip) else {
            return Ok(());
        };
        let allowed = match class {
            Class::Never => false,
            Class::Loopback if self.loopback => true,
            Class::Private if self.private => true,
            Class::LinkLocal if self.link_local => true,
            _ => self.networks.iter().any(|n| n.contains(ip)),
        };
        if allowed {
            // A tunnel or translation form the operator allowed still may not carry an IPv4
            // address the policy refuses (`2002:a00:1::` is 10.0.0.1 behind a 6to4 relay).
            carried
                .into_iter()
                .try_for_each(|v4| self.check_ip(IpAddr::V4(v4)))
        } else {
            Err(ForbiddenAddress {
                ip,
                range,
                allowable: class != Class::Never,
            })
        }
    }
}

/// An IPv4 address carried in IPv6 (`::ffff:10.0.0.1`, NAT64's `64:ff9b::10.0.0.1`) in its
/// IPv4 form, so it meets the IPv4 rules; any other address as it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [.., a, b, c, d] = v6.octets();
                return IpAddr::V4(Ipv4Addr::new(a, b, c, d));
            }
            IpAddr::V6(v6)
        }
        v4 => v4,
    }
}

/// The special range `ip` falls in, if any (`None`: a public address), and the IPv4
/// addresses an IPv6 tunnel or translation form carries.
fn classify(ip: IpAddr) -> Option<(Class, &'static str, Vec<Ipv4Addr>)> {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u128::from(v4.to_bits());
            ranges::V4
                .iter()
                .find(|(net, prefix, ..)| prefix_eq(u128::from(net.to_bits()), bits, *prefix, 32))
                .map(|(_, _, class, range)| (*class, *range, Vec::new()))
        }
        IpAddr::V6(v6) => {
            let bits = v6.to_bits();
            let row = ranges::V6
                .iter()
                .find(|(net, prefix, ..)| prefix_eq(net.to_bits(), bits, *prefix, 128));
            match row {
                Some((_, _, class, range, embedded)) => {
                    Some((*class, *range, embedded.addresses(v6)))
                }
                None if !prefix_eq(0x2000 << 112, bits, 3, 128) => {
                    let (class, range) = ranges::OUTSIDE_GLOBAL_UNICAST;
                    Some((class, range, Vec::new()))
                }
                None => None,
            }
        }
    }
}

#[cfg(test)]
#[path = "network/registry_tests.rs"]
mod registry_tests;
