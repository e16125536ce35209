//! The address ranges a destination may not reach by default: the non-global entries of the
//! IANA IPv4 and IPv6 Special-Purpose Address Registries (checked 2026-11), plus the ranges
//! the IPv6 addressing architecture sets apart (multicast, the deprecated site-local and
//! IPv4-compatible forms) and everything outside global unicast space (2000::/3).
//!
//! The first matching row wins, so a more specific row comes before the one that contains it.

use super::Class;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Where an IPv6 range carries an IPv4 address that the packet may end up at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Embedded {
    /// Nothing.
    None,
    /// The low 32 bits (`::a.b.c.d`, `::ffff:0:a.b.c.d`).
    Low32,
    /// 6to4: bits 16..48 are the site's IPv4 address (`2002:AABB:CCDD::`).
    SixToFour,
    /// Teredo: bits 32..64 are the server's IPv4, the low 32 bits the client's, inverted.
    Teredo,
}

/// One row: network, prefix length, class, description.
type V4Row = (Ipv4Addr, u8, Class, &'static str);
/// One row: network, prefix length, class, description, carried IPv4.
type V6Row = (Ipv6Addr, u8, Class, &'static str, Embedded);

const fn v4(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
    Ipv4Addr::new(a, b, c, d)
}

#[expect(
    clippy::too_many_arguments,
    reason = "the eight segments of an address"
)]
const fn v6(a: u16, b: u16, c: u16, d: u16, e: u16, f: u16, g: u16, h: u16) -> Ipv6Addr {
    Ipv6Addr::new(a, b, c, d, e, f, g, h)
}

/// Every IPv4 range that is not globally reachable (the registry's own rows, multicast and
/// the deprecated 6to4 relay anycast). 192.31.196.0/24, 192.52.193.0/24 and 192.175.48.0/24
/// (AS112, AMT) are globally reachable and stay allowed.
pub(super) const V4: &[V4Row] = &[
    (
        v4(0, 0, 0, 0),
        8,
        Class::Never,
        "in \"this network\" (0.0.0.0/8)",
    ),
    (
        v4(127, 0, 0, 0),
        8,
        Class::Loopback,
        "a loopback address (127.0.0.0/8)",
    ),
    (
        v4(10, 0, 0, 0),
        8,
        Class::Private,
        "in a private network (10.0.0.0/8)",
    ),
    (
        v4(172, 16, 0, 0),
        12,
        Class::Private,
        "in a private network (172.16.0.0/12)",
    ),
    (
        v4(192, 168, 0, 0),
        16,
        Class::Private,
        "in a private network (192.168.0.0/16)",
    ),
    (
        v4(169, 254, 0, 0),
        16,
        Class::LinkLocal,
        "a link-local address (169.254.0.0/16)",
    ),
    (
        v4(100, 64, 0, 0),
        10,
        Class::Special,
        "in carrier-grade NAT space (100.64.0.0/10)",
    ),
    (
        v4(192, 0, 0, 0),
        24,
        Class::Special,
        "an IETF protocol address (192.0.0.0/24)",
    ),
    (
        v4(192, 0, 2, 0),
        24,
        Class::Special,
        "a documentation address (192.0.2.0/24)",
    ),
    (
        v4(192, 88, 99, 0),
        24,
        Class::Special,
        "a 6to4 relay address (192.88.99.0/24)",
    ),
    (
        v4(198, 18, 0, 0),
        15,
        Class::Special,
        "a benchmarking address (198.18.0.0/15)",
    ),
    (
        v4(198, 51, 100, 0),
        24,
        Class::Special,
        "a documentation address (198.51.100.0/24)",
    ),
    (
        v4(203, 0, 113, 0),
        24,
        Class::Special,
        "a documentation address (203.0.113.0/24)",
    ),
    (
        v4(224, 0, 0, 0),
        4,
        Class::Never,
        "a multicast address (224.0.0.0/4)",
    ),
    (
        v4(255, 255, 255, 255),
        32,
        Class::Never,
        "the broadcast address",
    ),
    (
        v4(240, 0, 0, 0),
        4,
        Class::Special,
        "a reserved address (240.0.0.0/4)",
    ),
];

/// Every IPv6 range that is not a plain global unicast address. IPv4-mapped (`::ffff:0:0/96`)
/// and NAT64 (`64:ff9b::/96`) addresses never get here: they are judged as the IPv4 address
/// they carry. In 2001::/23 even the rows the registry marks globally reachable (anycast
/// services, AMT, AS112, ORCHIDv2, DETs) are refused: they are identifiers and protocol
/// services, never a webhook receiver, and an operator who needs one can allow its CIDR.
pub(super) const V6: &[V6Row] = &[
    (
        v6(0, 0, 0, 0, 0, 0, 0, 0),
        128,
        Class::Never,
        "the unspecified address (::)",
        Embedded::None,
    ),
    (
        v6(0, 0, 0, 0, 0, 0, 0, 1),
        128,
        Class::Loopback,
        "the loopback address (::1)",
        Embedded::None,
    ),
    (
        v6(0, 0, 0, 0, 0xffff, 0, 0, 0),
        96,
        Class::Special,
        "an IPv4-translated address (::ffff:0:0:0/96)",
        Embedded::Low32,
    ),
    (
        v6(0, 0, 0, 0, 0, 0, 0, 0),
        96,
        Class::Special,
        "an IPv4-compatible address (::/96)",
        Embedded::Low32,
    ),
    (
        v6(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        Class::Special,
        "a local NAT64 address (64:ff9b:1::/48)",
        Embedded::None,
    ),
    (
        v6(0x100, 0, 0, 1, 0, 0, 0, 0),
        64,
        Class::Special,
        "a dummy IPv6 prefix address (100:0:0:1::/64)",
        Embedded::None,
    ),
    (
        v6(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        Class::Special,
        "a discard-only address (100::/64)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0, 0, 0, 0, 0, 0, 0),
        32,
        Class::Special,
        "a Teredo address (2001::/32)",
        Embedded::Teredo,
    ),
    (
        v6(0x2001, 2, 0, 0, 0, 0, 0, 0),
        48,
        Class::Special,
        "a benchmarking address (2001:2::/48)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0x10, 0, 0, 0, 0, 0, 0),
        28,
        Class::Special,
        "an ORCHID identifier (2001:10::/28)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0x20, 0, 0, 0, 0, 0, 0),
        28,
        Class::Special,
        "an ORCHIDv2 identifier (2001:20::/28)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0x30, 0, 0, 0, 0, 0, 0),
        28,
        Class::Special,
        "a drone entity tag (2001:30::/28)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        Class::Special,
        "an IETF protocol address (2001::/23)",
        Embedded::None,
    ),
    (
        v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        Class::Special,
        "a documentation address (2001:db8::/32)",
        Embedded::None,
    ),
    (
        v6(0x2002, 0, 0, 0, 0, 0, 0, 0),
        16,
        Class::Special,
        "a 6to4 address (2002::/16)",
        Embedded::SixToFour,
    ),
    (
        v6(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        Class::Special,
        "a documentation address (3fff::/20)",
        Embedded::None,
    ),
    (
        v6(0x5f00, 0, 0, 0, 0, 0, 0, 0),
        16,
        Class::Special,
        "a segment routing identifier (5f00::/16)",
        Embedded::None,
    ),
    (
        v6(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        Class::Private,
        "in a private network (fc00::/7)",
        Embedded::None,
    ),
    (
        v6(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        Class::Private,
        "a site-local address (fec0::/10)",
        Embedded::None,
    ),
    (
        v6(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        Class::LinkLocal,
        "a link-local address (fe80::/10)",
        Embedded::None,
    ),
    (
        v6(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        Class::Never,
        "a multicast address (ff00::/8)",
        Embedded::None,
    ),
];

/// What the rows say of anything outside 2000::/3 that no row names: IANA allocates global
/// unicast addresses from 2000::/3 only, so the rest is reserved and reaches nothing public.
pub(super) const OUTSIDE_GLOBAL_UNICAST: (Class, &str) =
    (Class::Special, "outside global unicast space (2000::/3)");

impl Embedded {
    /// The IPv4 addresses `ip` carries in this form.
    pub(super) fn addresses(self, ip: Ipv6Addr) -> Vec<Ipv4Addr> {
        let bits = ip.to_bits();
        let at = |shift: u32| Ipv4Addr::from_bits((bits >> shift) as u32);
        match self {
            Embedded::None => Vec::new(),
            Embedded::Low32 => vec![at(0)],
            Embedded::SixToFour => vec![at(80)],
            Embedded::Teredo => vec![at(64), Ipv4Addr::from_bits(!(bits as u32))],
        }
    }
}
