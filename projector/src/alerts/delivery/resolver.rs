//! SSRF protection at delivery time: a DNS resolver for the outbound client that drops every
//! address the operator's network policy refuses.
//!
//! A destination's URL was checked when it was saved, but a hostname can resolve to anything
//! later (DNS rebinding, a record changed on purpose). Filtering here, on the addresses the
//! client is about to connect to, closes that gap: the check and the connection use the same
//! answer.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use shared::alerts::NetworkPolicy;
use std::net::SocketAddr;
use std::sync::Arc;

/// Resolves with the system resolver, keeping only the addresses `policy` allows; a name with
/// none left is an error (so the attempt fails without connecting anywhere).
#[derive(Clone)]
pub(crate) struct PolicyResolver {
    policy: Arc<NetworkPolicy>,
}

impl PolicyResolver {
    pub(crate) fn new(policy: Arc<NetworkPolicy>) -> Self {
        PolicyResolver { policy }
    }
}

/// Every address of `host` was refused by the network policy.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves only to addresses the network policy refuses ({reason})")]
pub(crate) struct AllAddressesRefused {
    host: String,
    reason: String,
}

/// The addresses of `addrs` that `policy` allows, or why there are none.
pub(crate) fn allowed_addresses(
    policy: &NetworkPolicy,
    host: &str,
    addrs: impl IntoIterator<Item = SocketAddr>,
) -> Result<Vec<SocketAddr>, AllAddressesRefused> {
    let mut allowed = Vec::new();
    let mut refused = None;
    for addr in addrs {
        match policy.check_ip(addr.ip()) {
            Ok(()) => allowed.push(addr),
            Err(why) => {
                refused.get_or_insert(why.to_string());
            }
        }
    }
    if allowed.is_empty() {
        return Err(AllAddressesRefused {
            host: host.to_owned(),
            reason: refused.unwrap_or_else(|| "no addresses".to_owned()),
        });
    }
    Ok(allowed)
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            // Port 0: reqwest puts in the URL's port (or the scheme's) afterwards.
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let allowed = allowed_addresses(&policy, &host, found)?;
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::config::Vars;
    use std::str::FromStr;

    fn policy(allow: &str) -> anyhow::Result<NetworkPolicy> {
        Ok(NetworkPolicy::from_vars(
            &Vars::empty().set("WEBHOOK_ALLOW_NETWORKS", allow),
        )?)
    }

    fn addr(s: &str) -> SocketAddr {
        SocketAddr::from_str(s).expect("a socket address")
    }

    #[test]
    fn refused_addresses_are_dropped_and_allowed_ones_kept() -> anyhow::Result<()> {
        let strict = policy("")?;
        let mixed = [
            addr("127.0.0.1:0"),
            addr("10.1.2.3:0"),
            addr("192.168.0.7:0"),
            addr("169.254.169.254:0"),
            addr("[::1]:0"),
            addr("[::ffff:127.0.0.1]:0"),
            addr("[fe80::1]:0"),
            // IPv6 forms that carry a private IPv4 address: 6to4, Teredo, NAT64,
            // IPv4-translated; and ORCHID, which routes nowhere public.
            addr("[2002:a00:1::]:0"),
            addr("[2002:a9fe:a9fe::]:0"),
            addr("[2001:0:808:808:0:0:f5ff:fffe]:0"),
            addr("[64:ff9b::a00:1]:0"),
            addr("[::ffff:0:a00:1]:0"),
            addr("[2001:10::1]:0"),
            addr("93.184.215.14:0"),
            addr("[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:0"),
        ];
        let kept = allowed_addresses(&strict, "example.com", mixed)?;
        assert_eq!(
            kept,
            [
                addr("93.184.215.14:0"),
                addr("[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:0")
            ]
        );
        Ok(())
    }

    #[test]
    fn a_name_with_only_refused_addresses_fails() -> anyhow::Result<()> {
        let strict = policy("")?;
        let err = allowed_addresses(
            &strict,
            "rebound.example",
            [addr("127.0.0.1:0"), addr("[::1]:0")],
        )
        .expect_err("loopback only must be refused");
        assert!(err.to_string().contains("rebound.example"), "{err}");
        assert!(allowed_addresses(&strict, "empty.example", []).is_err());
        Ok(())
    }

    #[test]
    fn the_operator_can_allow_loopback() -> anyhow::Result<()> {
        let open = policy("loopback")?;
        let kept = allowed_addresses(
            &open,
            "localhost",
            [addr("127.0.0.1:0"), addr("10.0.0.1:0")],
        )?;
        assert_eq!(kept, [addr("127.0.0.1:0")]);
        Ok(())
    }

    #[tokio::test]
    async fn the_resolver_filters_real_lookups() -> anyhow::Result<()> {
        let name = |host: &str| Name::from_str(host).map_err(|_| anyhow::anyhow!("bad name"));
        let strict = PolicyResolver::new(Arc::new(policy("")?));
        let refused = strict.resolve(name("localhost")?).await;
        assert!(refused.is_err(), "localhost resolved under a strict policy");

        let open = PolicyResolver::new(Arc::new(policy("loopback")?));
        let addrs: Vec<SocketAddr> = open
            .resolve(name("localhost")?)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .collect();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        Ok(())
    }
}
