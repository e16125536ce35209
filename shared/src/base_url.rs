//! The address a service tells others to reach it at: an operator's setting (`PLUGIN_BASE_URL`
//! on query-api, `DASHBOARD_URL` on ingest, read with
//! [`Vars::optional_base_url`](crate::config::Vars::optional_base_url)), or else the address the
//! request came to. Both services build such links, so the rules live here once.

use axum::http::HeaderMap;
use axum::http::header::HOST;

/// The scheme and host the request came to: `http://` for a loopback host (a local stack),
/// `https://` otherwise. `None` when the `Host` header is missing or is not a plain host and
/// port (it is never echoed into a page or a link then).
pub fn from_request(headers: &HeaderMap) -> Option<String> {
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| plain_host(h))?;
    Some(if loopback(host) {
        format!("http://{host}")
    } else {
        format!("https://{host}")
    })
}

/// A host name or address with an optional port: nothing that could break out of a URL, a YAML
/// string or a page.
pub fn plain_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
}

/// Whether `host` (with an optional port) names this machine.
pub fn loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Vars;
    use axum::http::HeaderValue;

    #[test]
    fn only_plain_hosts_are_echoed_and_loopback_is_plain_http() {
        assert!(plain_host("warden.example.net:8443"));
        assert!(plain_host("[::1]:8080"));
        assert!(!plain_host("evil\"host"));
        assert!(!plain_host("a b"));
        assert!(!plain_host("a/b"));
        assert!(loopback("127.0.0.1:8080"));
        assert!(loopback("localhost"));
        assert!(loopback("[::1]:8080"));
        assert!(!loopback("warden.example.net"));
        assert!(!loopback("10.0.0.1:8080"));
        let with_host = |host: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(HOST, HeaderValue::from_static(host));
            from_request(&headers)
        };
        assert_eq!(
            with_host("127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            with_host("warden.example.net").as_deref(),
            Some("https://warden.example.net")
        );
        assert_eq!(with_host("a@b"), None);
        assert_eq!(from_request(&HeaderMap::new()), None);
    }

    #[test]
    fn a_base_url_is_an_http_url_with_a_host_without_its_trailing_slash() {
        let read = |value: &str| Vars::empty().set("X_URL", value).optional_base_url("X_URL");
        assert_eq!(read("").ok(), Some(None));
        assert_eq!(
            read(" https://warden.example.net/ ").ok(),
            Some(Some("https://warden.example.net".to_owned()))
        );
        assert_eq!(
            read("http://127.0.0.1:8080/dash/").ok(),
            Some(Some("http://127.0.0.1:8080/dash".to_owned()))
        );
        for bad in [
            "warden.example.net",
            "ftp://warden.example.net",
            "file:///tmp",
            "https://",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
