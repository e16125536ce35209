//! The SSRF policy: which addresses a destination may reach (`WEBHOOK_ALLOW_NETWORKS`).
//!
//! By default every loopback, private, link-local and special-purpose range is refused, and
//! IPv6 forms that carry an IPv4 address (`::ffff:10.0.0.1`, NAT64 `64:ff9b::/96`) meet the
//! IPv4 rules, so an IPv6 spelling cannot slip a private IPv4 address past the check.

use crate::config::{ConfigError, Vars};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The classes of address the policy knows; the first three can be allowed by keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Loopback,
    Private,
    LinkLocal,
    /// Special-purpose ranges (CGNAT, documentation, benchmarking, reserved): refused unless
    /// a CIDR in `WEBHOOK_ALLOW_NETWORKS` covers them.
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
        let Some((class, range)) = classify(ip) else {
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
            Ok(())
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

/// The special range `ip` falls in, if any (`None`: a public address).
fn classify(ip: IpAddr) -> Option<(Class, &'static str)> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<(Class, &'static str)> {
    const RANGES: [(u32, u8, Class, &str); 16] = [
        (
            0x0000_0000,
            8,
            Class::Never,
            "in \"this network\" (0.0.0.0/8)",
        ),
        (
            0x7f00_0000,
            8,
            Class::Loopback,
            "a loopback address (127.0.0.0/8)",
        ),
        (
            0x0a00_0000,
            8,
            Class::Private,
            "in a private network (10.0.0.0/8)",
        ),
        (
            0xac10_0000,
            12,
            Class::Private,
            "in a private network (172.16.0.0/12)",
        ),
        (
            0xc0a8_0000,
            16,
            Class::Private,
            "in a private network (192.168.0.0/16)",
        ),
        (
            0xa9fe_0000,
            16,
            Class::LinkLocal,
            "a link-local address (169.254.0.0/16)",
        ),
        (
            0x6440_0000,
            10,
            Class::Special,
            "in carrier-grade NAT space (100.64.0.0/10)",
        ),
        (
            0xc000_0000,
            24,
            Class::Special,
            "an IETF protocol address (192.0.0.0/24)",
        ),
        (
            0xc000_0200,
            24,
            Class::Special,
            "a documentation address (192.0.2.0/24)",
        ),
        (
            0xc612_0000,
            15,
            Class::Special,
            "a benchmarking address (198.18.0.0/15)",
        ),
        (
            0xc633_6400,
            24,
            Class::Special,
            "a documentation address (198.51.100.0/24)",
        ),
        (
            0xcb00_7100,
            24,
            Class::Special,
            "a documentation address (203.0.113.0/24)",
        ),
        (
            0xe000_0000,
            4,
            Class::Never,
            "a multicast address (224.0.0.0/4)",
        ),
        (0xffff_ffff, 32, Class::Never, "the broadcast address"),
        (
            0xf000_0000,
            4,
            Class::Special,
            "a reserved address (240.0.0.0/4)",
        ),
        (
            0xc058_6300,
            24,
            Class::Special,
            "a 6to4 relay address (192.88.99.0/24)",
        ),
    ];
    let bits = u32::from(ip);
    RANGES
        .iter()
        .find(|(net, prefix, ..)| prefix_eq(u128::from(*net), u128::from(bits), *prefix, 32))
        .map(|(_, _, class, range)| (*class, *range))
}

fn classify_v6(ip: Ipv6Addr) -> Option<(Class, &'static str)> {
    let bits = u128::from(ip);
    let within = |net: u128, prefix: u8| prefix_eq(net, bits, prefix, 128);
    if ip.is_unspecified() {
        Some((Class::Never, "the unspecified address (::)"))
    } else if ip.is_loopback() {
        Some((Class::Loopback, "the loopback address (::1)"))
    } else if within(0, 96) {
        // The deprecated IPv4-compatible form (::a.b.c.d): nothing routes it any more.
        Some((Class::Special, "an IPv4-compatible address (::/96)"))
    } else if within(0xfc00 << 112, 7) {
        Some((Class::Private, "in a private network (fc00::/7)"))
    } else if within(0xfec0 << 112, 10) {
        Some((Class::Private, "a site-local address (fec0::/10)"))
    } else if within(0xfe80 << 112, 10) {
        Some((Class::LinkLocal, "a link-local address (fe80::/10)"))
    } else if within(0xff00 << 112, 8) {
        Some((Class::Never, "a multicast address (ff00::/8)"))
    } else if within(0x2001_0db8 << 96, 32) {
        Some((Class::Special, "a documentation address (2001:db8::/32)"))
    } else if within(0x0064_ff9b_0001 << 80, 48) {
        Some((Class::Special, "a local NAT64 address (64:ff9b:1::/48)"))
    } else if within(0x0100 << 112, 64) {
        Some((Class::Special, "a discard-only address (100::/64)"))
    } else {
        None
    }
}
