use super::*;
use crate::config::Vars;

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an IP address")
}

fn policy(text: &str) -> NetworkPolicy {
    NetworkPolicy::parse(text).expect("a valid policy")
}

/// One address from every range the default policy refuses, with the keyword (if any) that
/// allows it.
const REFUSED: &[(&str, Option<&str>)] = &[
    ("127.0.0.1", Some("loopback")),
    ("127.255.255.254", Some("loopback")),
    ("::1", Some("loopback")),
    ("10.0.0.1", Some("private")),
    ("172.16.0.1", Some("private")),
    ("172.31.255.255", Some("private")),
    ("192.168.1.1", Some("private")),
    ("fc00::1", Some("private")),
    ("fd12:3456::1", Some("private")),
    ("fec0::1", Some("private")),
    ("169.254.169.254", Some("link-local")),
    ("fe80::1", Some("link-local")),
    ("100.64.0.1", None),
    ("100.127.255.255", None),
    ("192.0.0.8", None),
    ("192.0.2.1", None),
    ("198.18.0.1", None),
    ("198.51.100.1", None),
    ("203.0.113.1", None),
    ("240.0.0.1", None),
    ("2001:db8::1", None),
    ("::7f00:1", None),
    ("0.0.0.0", None),
    ("0.1.2.3", None),
    ("::", None),
    ("224.0.0.1", None),
    ("239.255.255.250", None),
    ("255.255.255.255", None),
    ("ff02::1", None),
];

#[test]
fn the_default_policy_refuses_every_special_range() {
    let default = NetworkPolicy::default();
    for (addr, _) in REFUSED {
        let err = default.check_ip(ip(addr)).expect_err(addr);
        assert_eq!(err.ip, ip(addr));
    }
}

#[test]
fn ipv4_mapped_and_nat64_forms_meet_the_ipv4_rules() {
    let default = NetworkPolicy::default();
    for addr in [
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:192.168.0.1",
        "::ffff:100.64.0.1",
        "::ffff:0.0.0.0",
        "64:ff9b::10.0.0.1",
        "64:ff9b::127.0.0.1",
    ] {
        let err = default.check_ip(ip(addr)).expect_err(addr);
        assert!(
            err.ip.is_ipv4(),
            "{addr} is reported in its IPv4 form: {}",
            err.ip
        );
    }
    assert_eq!(default.check_ip(ip("::ffff:93.184.216.34")), Ok(()));
    assert_eq!(policy("loopback").check_ip(ip("::ffff:127.0.0.1")), Ok(()));
    assert_eq!(policy("10.0.0.0/8").check_ip(ip("::ffff:10.1.2.3")), Ok(()));
}

#[test]
fn public_addresses_pass() {
    let default = NetworkPolicy::default();
    for addr in [
        "93.184.216.34",
        "1.1.1.1",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
    ] {
        assert_eq!(default.check_ip(ip(addr)), Ok(()), "{addr}");
    }
}

#[test]
fn keywords_allow_their_own_range_only() {
    for keyword in ["loopback", "private", "link-local"] {
        let allowing = policy(keyword);
        for (addr, allowed_by) in REFUSED {
            let result = allowing.check_ip(ip(addr));
            if *allowed_by == Some(keyword) {
                assert_eq!(result, Ok(()), "{keyword} allows {addr}");
            } else {
                assert!(result.is_err(), "{keyword} does not allow {addr}");
            }
        }
    }
    let all = policy(" loopback , PRIVATE,link-local ");
    assert!(all.allows_loopback());
    assert_eq!(all.check_ip(ip("192.168.1.1")), Ok(()));
    assert_eq!(all.check_ip(ip("fe80::1")), Ok(()));
    assert!(all.check_ip(ip("100.64.0.1")).is_err());
}

#[test]
fn cidrs_allow_what_they_cover_but_never_the_unroutable() {
    let allowing = policy("10.1.0.0/16,100.64.0.0/10,fd00:1::/32,192.168.5.5,0.0.0.0/0");
    assert_eq!(allowing.check_ip(ip("10.1.200.3")), Ok(()));
    assert_eq!(allowing.check_ip(ip("100.64.1.1")), Ok(()));
    assert_eq!(allowing.check_ip(ip("fd00:1:ffff::1")), Ok(()));
    assert_eq!(allowing.check_ip(ip("192.168.5.5")), Ok(()));
    assert!(policy("10.1.0.0/16").check_ip(ip("10.2.0.1")).is_err());
    assert!(policy("192.168.5.5").check_ip(ip("192.168.5.6")).is_err());
    assert!(policy("fd00:1::/32").check_ip(ip("fd00:2::1")).is_err());
    // Even 0.0.0.0/0 does not make these destinations.
    for addr in ["0.0.0.0", "0.1.2.3", "224.0.0.1", "255.255.255.255"] {
        let err = allowing.check_ip(ip(addr)).expect_err(addr);
        assert!(!err.allowable, "{addr}");
        assert!(!err.to_string().contains("WEBHOOK_ALLOW_NETWORKS"));
    }
    let err = NetworkPolicy::default()
        .check_ip(ip("10.0.0.1"))
        .expect_err("private");
    assert!(err.to_string().contains("WEBHOOK_ALLOW_NETWORKS"), "{err}");
    assert!(err.to_string().contains("10.0.0.0/8"), "{err}");
}

#[test]
fn bad_policies_are_refused() {
    for text in [
        "intranet",
        "10.0.0.0/33",
        "fd00::/129",
        "10.0.0/8",
        "loopback,nope",
        "10.0.0.0/x",
    ] {
        assert!(NetworkPolicy::parse(text).is_err(), "{text}");
    }
    assert_eq!(NetworkPolicy::parse(""), Ok(NetworkPolicy::default()));
    assert_eq!(NetworkPolicy::parse(" , "), Ok(NetworkPolicy::default()));
    assert_eq!(
        NetworkPolicy::parse("loopback"),
        Ok(NetworkPolicy::allow_loopback())
    );
    let vars = Vars::empty().set("WEBHOOK_ALLOW_NETWORKS", "10.0.0.0/40");
    assert!(NetworkPolicy::from_vars(&vars).is_err());
}

fn webhook(url: &str, policy: &NetworkPolicy) -> Result<Url, DestinationError> {
    check_url(DestinationKind::Webhook, url, policy)
}

fn code(result: Result<Url, DestinationError>) -> &'static str {
    result.map(|_| "ok").unwrap_or_else(|e| e.code())
}

#[test]
fn webhook_urls() {
    let default = NetworkPolicy::default();
    let loopback = NetworkPolicy::allow_loopback();
    let cases = [
        ("https://hooks.example.com/warden?x=1", &default, "ok"),
        ("http://hooks.example.com:8080/in", &default, "ok"),
        ("ftp://hooks.example.com/", &default, "unsupported_scheme"),
        ("file:///etc/passwd", &default, "unsupported_scheme"),
        ("javascript:alert(1)", &default, "unsupported_scheme"),
        ("hooks.example.com/in", &default, "invalid_url"),
        ("", &default, "invalid_url"),
        (
            "https://user:pw@hooks.example.com/",
            &default,
            "url_credentials",
        ),
        (
            "https://user@hooks.example.com/",
            &default,
            "url_credentials",
        ),
        (
            "https://:pw@hooks.example.com/",
            &default,
            "url_credentials",
        ),
        ("http://127.0.0.1:9000/", &default, "forbidden_address"),
        ("http://127.0.0.1:9000/", &loopback, "ok"),
        ("http://localhost:9000/", &default, "forbidden_address"),
        ("http://LOCALHOST./", &default, "forbidden_address"),
        ("http://api.localhost/", &default, "forbidden_address"),
        ("http://localhost:9000/", &loopback, "ok"),
        ("http://[::1]/", &default, "forbidden_address"),
        ("http://[::ffff:127.0.0.1]/", &default, "forbidden_address"),
        ("http://[::ffff:7f00:1]/", &default, "forbidden_address"),
        // Other spellings the URL standard reads as 127.0.0.1 / 10.0.0.1.
        ("http://0x7f.1/", &default, "forbidden_address"),
        ("http://2130706433/", &default, "forbidden_address"),
        ("http://017700000001/", &default, "forbidden_address"),
        ("http://10.1/", &default, "forbidden_address"),
        (
            "http://169.254.169.254/latest/meta-data/",
            &default,
            "forbidden_address",
        ),
        ("http://0.0.0.0:8080/", &loopback, "forbidden_address"),
        ("http://93.184.216.34/", &default, "ok"),
        // A name that resolves somewhere private is checked at delivery, not here.
        ("http://internal.example.com/", &default, "ok"),
    ];
    for (url, policy, expected) in cases {
        assert_eq!(code(webhook(url, policy)), expected, "{url}");
    }
    let long = format!("https://hooks.example.com/{}", "a".repeat(MAX_URL_LEN));
    assert_eq!(code(webhook(&long, &default)), "url_too_long");
    let just = format!("https://h.example.com/{}", "a".repeat(MAX_URL_LEN - 22));
    assert_eq!(just.len(), MAX_URL_LEN);
    assert_eq!(code(webhook(&just, &default)), "ok");
}

#[test]
fn discord_urls() {
    let default = NetworkPolicy::default();
    let discord = |url: &str| code(check_url(DestinationKind::Discord, url, &default));
    for url in [
        "https://discord.com/api/webhooks/123456789/abcDEF-_token",
        "https://discordapp.com/api/webhooks/1/t",
        "https://ptb.discord.com/api/webhooks/1/t",
        "https://canary.discord.com/api/webhooks/1/t",
        "https://discord.com/api/v10/webhooks/1/t",
        "https://discord.com/api/webhooks/1/t/",
        "https://discord.com/api/webhooks/1/t?thread_id=9",
    ] {
        assert_eq!(discord(url), "ok", "{url}");
    }
    for url in [
        "https://discord.com.evil.example/api/webhooks/1/t",
        "https://evil.example/api/webhooks/1/t",
        "https://discord.com/api/webhooks/1",
        "https://discord.com/api/webhooks/abc/t",
        "https://discord.com/api/channels/1/messages",
        "https://discord.com/api/webhooks/1/t/github",
        "https://discord.com:8443/api/webhooks/1/t",
        "https://162.159.128.233/api/webhooks/1/t",
    ] {
        assert_eq!(discord(url), "not_discord_webhook", "{url}");
    }
    assert_eq!(
        discord("http://discord.com/api/webhooks/1/t"),
        "unsupported_scheme"
    );
    assert_eq!(
        discord("https://u:p@discord.com/api/webhooks/1/t"),
        "url_credentials"
    );
    assert_eq!(
        discord("https://127.0.0.1/api/webhooks/1/t"),
        "forbidden_address"
    );
}

#[test]
fn discord_tokens_are_cut_when_shown() {
    let url = "https://discord.com/api/webhooks/123/abcdefghijklmnopWXYZ";
    assert_eq!(
        display_url(DestinationKind::Discord, url),
        "https://discord.com/api/webhooks/123/…WXYZ"
    );
    assert_eq!(
        display_url(
            DestinationKind::Discord,
            "https://discord.com/api/webhooks/123/abcdefWXYZ/?wait=true"
        ),
        "https://discord.com/api/webhooks/123/…WXYZ"
    );
    let hook = "https://hooks.example.com/in?token=1";
    assert_eq!(display_url(DestinationKind::Webhook, hook), hook);
}

#[test]
fn kinds_and_default_names() {
    for kind in [DestinationKind::Webhook, DestinationKind::Discord] {
        assert_eq!(DestinationKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(DestinationKind::parse("slack"), None);
    let url = Url::parse("https://hooks.example.com:8443/x").expect("url");
    assert_eq!(default_name(&url), "hooks.example.com");
}

proptest::proptest! {
    /// An IPv4 address written as IPv4-mapped IPv6 is judged exactly as the address itself,
    /// under the default policy and under each keyword.
    #[test]
    fn mapped_forms_are_judged_as_ipv4(bits in proptest::prelude::any::<u32>()) {
        let v4 = Ipv4Addr::from(bits);
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        for policy in [NetworkPolicy::default(), policy("loopback"), policy("private"), policy("link-local")] {
            proptest::prop_assert_eq!(policy.check_ip(IpAddr::V4(v4)), policy.check_ip(mapped));
        }
    }
}
