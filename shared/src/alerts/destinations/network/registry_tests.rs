//! The default policy against the IANA special-purpose registries, range by range: the first
//! address and one in the middle are refused; a neighbour just outside passes where the
//! neighbour is a global address (none is, next to many of the IPv6 rows).

use super::*;

/// Range, its first address, one in the middle, global neighbours just outside.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

const V4_ROWS: &[Row] = &[
    ("0.0.0.0/8", "0.0.0.0", "0.128.0.1", &["1.0.0.0"]),
    (
        "10.0.0.0/8",
        "10.0.0.0",
        "10.128.0.1",
        &["9.255.255.255", "11.0.0.0"],
    ),
    (
        "100.64.0.0/10",
        "100.64.0.0",
        "100.96.0.1",
        &["100.63.255.255", "100.128.0.0"],
    ),
    (
        "127.0.0.0/8",
        "127.0.0.0",
        "127.128.0.1",
        &["126.255.255.255", "128.0.0.0"],
    ),
    (
        "169.254.0.0/16",
        "169.254.0.0",
        "169.254.128.1",
        &["169.253.255.255", "169.255.0.0"],
    ),
    (
        "172.16.0.0/12",
        "172.16.0.0",
        "172.24.0.1",
        &["172.15.255.255", "172.32.0.0"],
    ),
    (
        "192.0.0.0/24",
        "192.0.0.0",
        "192.0.0.128",
        &["191.255.255.255", "192.0.1.0"],
    ),
    (
        "192.0.2.0/24",
        "192.0.2.0",
        "192.0.2.128",
        &["192.0.1.255", "192.0.3.0"],
    ),
    (
        "192.88.99.0/24",
        "192.88.99.0",
        "192.88.99.128",
        &["192.88.98.255", "192.88.100.0"],
    ),
    (
        "192.168.0.0/16",
        "192.168.0.0",
        "192.168.128.1",
        &["192.167.255.255", "192.169.0.0"],
    ),
    (
        "198.18.0.0/15",
        "198.18.0.0",
        "198.19.0.1",
        &["198.17.255.255", "198.20.0.0"],
    ),
    (
        "198.51.100.0/24",
        "198.51.100.0",
        "198.51.100.128",
        &["198.51.99.255", "198.51.101.0"],
    ),
    (
        "203.0.113.0/24",
        "203.0.113.0",
        "203.0.113.128",
        &["203.0.112.255", "203.0.114.0"],
    ),
    (
        "224.0.0.0/4",
        "224.0.0.0",
        "232.0.0.1",
        &["223.255.255.255"],
    ),
    ("240.0.0.0/4", "240.0.0.0", "248.0.0.1", &[]),
    (
        "255.255.255.255/32",
        "255.255.255.255",
        "255.255.255.255",
        &[],
    ),
];

const V6_ROWS: &[Row] = &[
    ("::/128", "::", "::", &[]),
    ("::1/128", "::1", "::1", &[]),
    ("::/96 (IPv4-compatible)", "::2", "::8.8.8.8", &[]),
    (
        "::ffff:0:0:0/96 (IPv4-translated)",
        "::ffff:0:0.0.0.0",
        "::ffff:0:8.8.8.8",
        &[],
    ),
    ("64:ff9b:1::/48", "64:ff9b:1::", "64:ff9b:1:8000::1", &[]),
    ("100::/64", "100::", "100::8000:0:0:1", &[]),
    ("100:0:0:1::/64", "100:0:0:1::", "100:0:0:1:8000::1", &[]),
    (
        "2001::/32 (Teredo)",
        "2001::",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        &["2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ),
    ("2001:1::1/128 (PCP anycast)", "2001:1::1", "2001:1::2", &[]),
    ("2001:2::/48", "2001:2::", "2001:2:0:8000::1", &[]),
    ("2001:3::/32 (AMT)", "2001:3::", "2001:3:8000::1", &[]),
    (
        "2001:4:112::/48 (AS112-v6)",
        "2001:4:112::",
        "2001:4:112:8000::1",
        &[],
    ),
    ("2001:10::/28 (ORCHID)", "2001:10::", "2001:18::1", &[]),
    ("2001:20::/28 (ORCHIDv2)", "2001:20::", "2001:28::1", &[]),
    ("2001:30::/28 (DETs)", "2001:30::", "2001:38::1", &[]),
    (
        "2001::/23",
        "2001:100::",
        "2001:1ff:ffff::1",
        &["2001:200::"],
    ),
    (
        "2001:db8::/32",
        "2001:db8::",
        "2001:db8:8000::1",
        &["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"],
    ),
    (
        "2002::/16 (6to4)",
        "2002::",
        "2002:808:808::1",
        &["2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2003::"],
    ),
    (
        "3fff::/20",
        "3fff::",
        "3fff:800::1",
        &["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::"],
    ),
    ("5f00::/16", "5f00::", "5f00:8000::1", &[]),
    ("fc00::/7", "fc00::", "fd00::1", &[]),
    ("fec0::/10", "fec0::", "fee0::1", &[]),
    ("fe80::/10", "fe80::", "fea0::1", &[]),
    ("ff00::/8", "ff00::", "ff80::1", &[]),
    ("outside 2000::/3, below", "200::", "1000::1", &["2000::"]),
    (
        "outside 2000::/3, above",
        "4000::",
        "8000::1",
        &["3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ),
];

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an IP address")
}

#[test]
fn every_non_global_registry_range_is_refused_and_its_global_neighbours_are_not() {
    let default = NetworkPolicy::default();
    for (range, first, middle, neighbours) in V4_ROWS.iter().chain(V6_ROWS) {
        for addr in [first, middle] {
            assert!(
                default.check_ip(ip(addr)).is_err(),
                "{addr} in {range} passed"
            );
        }
        for addr in *neighbours {
            assert_eq!(
                default.check_ip(ip(addr)),
                Ok(()),
                "{addr}, next to {range}"
            );
        }
    }
}

#[test]
fn the_findings_are_refused() {
    let default = NetworkPolicy::default();
    for addr in [
        "2002:a00:1::",
        "2002:a9fe:a9fe::",
        "2002:7f00:1::",
        "2001::1",
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",
        "2001:10::1",
        "2001:20::1",
        "::ffff:0:0:0",
        "::ffff:0:a00:1",
        "::ffff:0:7f00:1",
    ] {
        let err = default.check_ip(ip(addr)).expect_err(addr);
        assert!(err.allowable, "{addr}: {err}");
    }
}

#[test]
fn global_rows_of_the_registries_pass() {
    let default = NetworkPolicy::default();
    // AS112, AMT and AS112 direct delegation (IPv4), AS112 direct delegation (IPv6), and a
    // NAT64 address of a public IPv4 address.
    for addr in [
        "192.31.196.1",
        "192.52.193.1",
        "192.175.48.1",
        "2620:4f:8000::1",
        "64:ff9b::8.8.8.8",
        "2000::1",
        "2a00:1450:4001:81c::200e",
    ] {
        assert_eq!(default.check_ip(ip(addr)), Ok(()), "{addr}");
    }
}

#[test]
fn allowing_a_tunnel_range_never_allows_the_private_ipv4_it_carries() {
    let sixtofour = NetworkPolicy::parse("2002::/16").expect("policy");
    assert_eq!(sixtofour.check_ip(ip("2002:808:808::1")), Ok(()));
    for (addr, carried) in [
        ("2002:a00:1::", "10.0.0.1"),
        ("2002:a9fe:a9fe::", "169.254.169.254"),
        ("2002:7f00:1::", "127.0.0.1"),
    ] {
        let err = sixtofour.check_ip(ip(addr)).expect_err(addr);
        assert_eq!(err.ip, ip(carried), "{addr}: {err}");
    }
    // The carried address meets the IPv4 rules: the keyword that allows it allows it here.
    let both = NetworkPolicy::parse("2002::/16,private").expect("policy");
    assert_eq!(both.check_ip(ip("2002:a00:1::")), Ok(()));

    // Teredo carries the server's address and the client's (inverted): both must pass.
    let teredo = NetworkPolicy::parse("2001::/32").expect("policy");
    assert_eq!(
        teredo.check_ip(ip("2001:0:808:808:0:0:f7f7:f7f7")),
        Ok(()),
        "server 8.8.8.8, client 8.8.8.8"
    );
    let err = teredo
        .check_ip(ip("2001:0:808:808:0:0:f5ff:fffe"))
        .expect_err("client 10.0.0.1");
    assert_eq!(err.ip, ip("10.0.0.1"));
    let err = teredo
        .check_ip(ip("2001:0:a00:1:0:0:f7f7:f7f7"))
        .expect_err("server 10.0.0.1");
    assert_eq!(err.ip, ip("10.0.0.1"));

    let translated = NetworkPolicy::parse("::ffff:0:0:0/96").expect("policy");
    assert_eq!(translated.check_ip(ip("::ffff:0:808:808")), Ok(()));
    assert!(translated.check_ip(ip("::ffff:0:a00:1")).is_err());
}

proptest::proptest! {
    /// A NAT64 address (64:ff9b::/96) is judged exactly as the IPv4 address it carries.
    #[test]
    fn nat64_forms_are_judged_as_ipv4(bits in proptest::prelude::any::<u32>()) {
        let v4 = Ipv4Addr::from(bits);
        let [a, b, c, d] = v4.octets();
        let nat64 = IpAddr::V6(std::net::Ipv6Addr::new(
            0x64, 0xff9b, 0, 0, 0, 0, u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]),
        ));
        for text in ["", "loopback", "private", "link-local"] {
            let policy = NetworkPolicy::parse(text).expect("policy");
            let as_v4 = policy.check_ip(IpAddr::V4(v4)).map_err(|e| e.range);
            proptest::prop_assert_eq!(as_v4, policy.check_ip(nat64).map_err(|e| e.range));
        }
    }
}
