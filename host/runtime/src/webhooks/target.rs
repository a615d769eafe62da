//! Where deliveries may go. URLs must be http or https; unless the operator
//! allows it, they must not reach loopback, private, link-local or other
//! internal addresses. Registration checks where the URL resolves; delivery
//! checks an IP literal before sending and a host name in the client's
//! resolver, on exactly the addresses it then connects to, so a DNS answer
//! that changes after registration (DNS rebinding) cannot turn a webhook
//! inward.
//!
//! [`StaticHosts`] stands in for DNS in tests: it answers names beneath the
//! guard, which still checks every address it gives.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};

pub use switchboard_domain::ip_scope::is_public;
use url::Url;

/// Fixed DNS answers by host name, for tests only: no flag or environment
/// variable sets it, so a production gateway always asks the system's
/// resolver. It replaces the lookup only; the internal-address guard still
/// checks whatever it answers. Clones share one table, so a test can change
/// an answer while the gateway runs, as a DNS record changing between
/// registration and delivery would.
#[derive(Clone, Default)]
pub struct StaticHosts(Arc<RwLock<HashMap<String, Vec<IpAddr>>>>);

impl StaticHosts {
    /// An empty table: every name still goes to the system's resolver.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `host` with `addrs` from now on (an empty list: the name
    /// does not resolve).
    pub fn set(&self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) {
        self.0
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(host.to_ascii_lowercase(), addrs.into_iter().collect());
    }

    fn get(&self, host: &str) -> Option<Vec<IpAddr>> {
        self.0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&host.to_ascii_lowercase())
            .cloned()
    }
}

impl fmt::Debug for StaticHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.0.read().unwrap_or_else(|p| p.into_inner());
        f.debug_tuple("StaticHosts").field(&*table).finish()
    }
}

/// Two handles are equal when they share one table.
impl PartialEq for StaticHosts {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Resolves `host` through `hosts` when it names it, else through the system.
async fn lookup(
    host: &str,
    port: u16,
    hosts: Option<&StaticHosts>,
) -> std::io::Result<Vec<SocketAddr>> {
    if let Some(ips) = hosts.and_then(|h| h.get(host)) {
        return Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect());
    }
    Ok(tokio::net::lookup_host((host, port)).await?.collect())
}

/// A delivery refused because its host resolved only to internal addresses.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "host `{host}` resolves only to internal addresses ({addrs}); set WEBHOOK_ALLOW_PRIVATE=true to allow them"
)]
pub struct Blocked {
    host: String,
    addrs: String,
}

impl Blocked {
    /// The refusal somewhere in an error's chain of causes, if it is there.
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Blocked> {
        let mut cause = Some(error);
        while let Some(e) = cause {
            if let Some(b) = e.downcast_ref::<Blocked>() {
                return Some(b);
            }
            cause = e.source();
        }
        None
    }
}

/// Parses and checks a webhook URL's form (not where it resolves).
pub fn parse_url(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| format!("is not a valid URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("must use http or https, not `{}`", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("needs a host".into());
    }
    if raw.len() > 2048 {
        return Err("must be at most 2048 characters".into());
    }
    Ok(url)
}

/// Checks where a URL leads, at registration: an internal IP literal, or a
/// host that resolves only to internal addresses, is refused unless
/// `allow_private`.
pub async fn check_destination(
    url: &Url,
    allow_private: bool,
    hosts: Option<&StaticHosts>,
) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    match url.host() {
        Some(url::Host::Domain(host)) => {
            let port = url.port_or_known_default().unwrap_or(443);
            let addrs =
                tokio::time::timeout(std::time::Duration::from_secs(5), lookup(host, port, hosts))
                    .await
                    .map_err(|_| format!("host `{host}` did not resolve within 5 seconds"))?
                    .map_err(|e| format!("host `{host}` does not resolve: {e}"))?;
            if addrs.iter().any(|a| is_public(a.ip())) {
                Ok(())
            } else {
                Err(format!(
                    "host `{host}` resolves only to internal addresses; set WEBHOOK_ALLOW_PRIVATE=true to allow them"
                ))
            }
        }
        _ => check_literal(url.host_str(), allow_private),
    }
}

/// Checks a URL's host (as `http::Uri` and `Url` write it, an IPv6
/// literal in brackets) when it is an IP literal, at delivery (the
/// client's resolver is not asked about literals). A host name passes
/// here: the resolver checks the addresses it resolves to when the client
/// connects, and a check of its own here would be a second lookup whose
/// answer the connection need not get.
pub fn check_literal(host: Option<&str>, allow_private: bool) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    let Some(host) = host.filter(|h| !h.is_empty()) else {
        return Err("needs a host".into());
    };
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<IpAddr>() {
        Ok(ip) => refuse_internal(ip),
        Err(_) => Ok(()),
    }
}

fn refuse_internal(ip: IpAddr) -> Result<(), String> {
    if is_public(ip) {
        Ok(())
    } else {
        Err(format!(
            "points at the internal address {ip}; set WEBHOOK_ALLOW_PRIVATE=true to allow it"
        ))
    }
}

/// The delivery client's resolver. With `public_only` it hands the client
/// only public addresses and refuses a name that has none ([`Blocked`]), so
/// the registration check holds at delivery time too (DNS rebinding); with
/// [`StaticHosts`] it looks names up there first.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    public_only: bool,
    hosts: Option<StaticHosts>,
}

impl GuardedResolver {
    /// The resolver a delivery client needs, or `None` when the system's
    /// own will do (internal addresses allowed and no static answers).
    pub fn new(allow_private: bool, hosts: Option<StaticHosts>) -> Option<Self> {
        (!allow_private || hosts.is_some()).then_some(Self {
            public_only: !allow_private,
            hosts,
        })
    }

    /// The addresses the client may connect to for `host` (their ports
    /// 0: the client sets the URL's); [`Blocked`] when every one is internal
    /// and only public ones are allowed.
    pub(super) async fn addresses(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        let addrs = lookup(host, 0, self.hosts.as_ref()).await?;
        if addrs.is_empty() {
            return Err(format!("`{host}` has no addresses").into());
        }
        if !self.public_only {
            return Ok(addrs);
        }
        let (public, internal): (Vec<SocketAddr>, Vec<SocketAddr>) =
            addrs.into_iter().partition(|a| is_public(a.ip()));
        if public.is_empty() {
            let addrs = internal
                .iter()
                .map(|a| a.ip().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Box::new(Blocked {
                host: host.to_owned(),
                addrs,
            }));
        }
        Ok(public)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_with_a_host_are_accepted() {
        assert!(parse_url("https://example.com/hook").is_ok());
        assert!(parse_url("http://127.0.0.1:8080/").is_ok());
        assert!(parse_url("ftp://example.com").is_err());
        assert!(parse_url("file:///etc/passwd").is_err());
        assert!(parse_url("not a url").is_err());
        assert!(parse_url("http://").is_err());
    }

    #[tokio::test]
    async fn an_internal_ip_literal_is_refused_unless_allowed() {
        let url = parse_url("http://127.0.0.1:9/x").unwrap();
        assert!(check_destination(&url, false, None).await.is_err());
        assert!(check_destination(&url, true, None).await.is_ok());
        assert!(check_literal(url.host_str(), false).is_err());
        assert!(check_literal(url.host_str(), true).is_ok());
        let url = parse_url("http://[::1]:9/x").unwrap();
        assert!(check_destination(&url, false, None).await.is_err());
        assert!(check_literal(url.host_str(), false).is_err());
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn registration_resolves_names_through_the_static_hosts() {
        let hosts = StaticHosts::new();
        hosts.set("hooks.example.com", [ip("93.184.216.34")]);
        hosts.set("inside.example.com", [ip("10.0.0.7")]);
        let outside = parse_url("https://hooks.example.com/x").unwrap();
        let inside = parse_url("https://inside.example.com/x").unwrap();
        assert!(
            check_destination(&outside, false, Some(&hosts))
                .await
                .is_ok()
        );
        let refused = check_destination(&inside, false, Some(&hosts))
            .await
            .unwrap_err();
        assert!(refused.contains("internal"), "{refused}");
        assert!(check_destination(&inside, true, Some(&hosts)).await.is_ok());
    }

    #[tokio::test]
    async fn the_guarded_resolver_hands_out_only_public_addresses() {
        let hosts = StaticHosts::new();
        hosts.set("mixed.example.com", [ip("127.0.0.1"), ip("93.184.216.34")]);
        hosts.set("metadata.example.com", [ip("169.254.169.254")]);
        let guard = GuardedResolver::new(false, Some(hosts.clone())).unwrap();
        let mixed = guard.addresses("mixed.example.com").await.unwrap();
        assert_eq!(mixed, [SocketAddr::new(ip("93.184.216.34"), 0)]);
        let err = guard.addresses("metadata.example.com").await.unwrap_err();
        let blocked = Blocked::find(err.as_ref()).expect("refused as blocked");
        assert!(blocked.to_string().contains("169.254.169.254"), "{blocked}");

        // A changed answer is seen by the next lookup (DNS rebinding).
        hosts.set("mixed.example.com", [ip("127.0.0.1")]);
        assert!(guard.addresses("mixed.example.com").await.is_err());

        let open = GuardedResolver::new(true, Some(hosts)).unwrap();
        assert_eq!(
            open.addresses("metadata.example.com").await.unwrap(),
            [SocketAddr::new(ip("169.254.169.254"), 0)],
            "internal addresses pass when they are allowed"
        );
        assert!(GuardedResolver::new(true, None).is_none());
    }
}
