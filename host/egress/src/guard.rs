//! [`Guard`]: the public-address rule of one purpose (webhooks, media
//! URLs, a plugin grant), with the knob that opens private addresses named
//! in its refusals. It resolves a host name, keeps only the addresses the
//! rule allows and refuses a name that has none ([`Blocked`]); the
//! connector then connects to exactly those addresses.

use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use switchboard_domain::ip_scope::is_public;
use url::Url;

use crate::hosts::StaticHosts;

/// A boxed error, as hyper-util's connectors carry them.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// A request refused because where it leads is internal: an IP literal
/// that is not public, or a name that resolves only to such addresses.
/// Its text names the address and the knob that would allow it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Blocked(String);

impl Blocked {
    /// The refusal somewhere in an error's chain of causes, if it is there.
    pub fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a Blocked> {
        let mut cause = Some(error);
        while let Some(e) = cause {
            if let Some(b) = e.downcast_ref::<Blocked>() {
                return Some(b);
            }
            cause = e.source();
        }
        None
    }

    /// The refusal's text.
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// Why a URL was refused before any request ([`Guard::check_url`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It leads only to internal addresses.
    Internal(Blocked),
    /// Its host did not resolve (in time); nothing can be said of where
    /// it leads, and no connection to it could be made either.
    Unresolved(String),
}

/// The public-address rule of one purpose (see the module). Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    allow_private: bool,
    opener: &'static str,
    hosts: Option<StaticHosts>,
}

impl Guard {
    /// The rule of a purpose: internal addresses refused unless
    /// `allow_private`; `opener` says how an operator allows them (ending
    /// the refusal's text, e.g. "set WEBHOOK_ALLOW_PRIVATE=true to allow them").
    pub fn new(allow_private: bool, opener: &'static str) -> Self {
        Self {
            allow_private,
            opener,
            hosts: None,
        }
    }

    /// The same rule looking names up in `hosts` first (tests only).
    pub fn with_hosts(mut self, hosts: Option<StaticHosts>) -> Self {
        self.hosts = hosts;
        self
    }

    /// Whether internal addresses are allowed.
    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// Resolves `host` (through the static table when it names it).
    async fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        if let Some(ips) = self.hosts.as_ref().and_then(|h| h.get(host)) {
            return Ok(ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect());
        }
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }

    /// The addresses a connection to `host` may use, on `port`: every
    /// address it resolves to when internal ones are allowed, else only the
    /// public ones; [`Blocked`] when there are none of those. The caller
    /// connects to exactly these (the one lookup of the request).
    pub async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, BoxError> {
        let bare = unbracket(host);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_ip(ip)?;
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let addrs = self.lookup(bare, port).await?;
        if addrs.is_empty() {
            return Err(format!("`{bare}` has no addresses").into());
        }
        if self.allow_private {
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
            return Err(Box::new(Blocked(format!(
                "host `{bare}` resolves only to internal addresses ({addrs}); {}",
                self.opener
            ))));
        }
        Ok(public)
    }

    /// Checks a host (as `http::Uri` and `Url` write it, an IPv6 literal in
    /// brackets) when it is an IP literal; a name passes here, its
    /// addresses are checked where they are resolved for the connection.
    pub fn check_literal(&self, host: Option<&str>) -> Result<(), Blocked> {
        let Some(host) = host.filter(|h| !h.is_empty()) else {
            return Err(Blocked("needs a host".into()));
        };
        match unbracket(host).parse::<IpAddr>() {
            Ok(ip) => self.check_ip(ip),
            Err(_) => Ok(()),
        }
    }

    fn check_ip(&self, ip: IpAddr) -> Result<(), Blocked> {
        if self.allow_private || is_public(ip) {
            Ok(())
        } else {
            Err(Blocked(format!(
                "points at the internal address {ip}; {}",
                self.opener
            )))
        }
    }

    /// Checks where `url` leads before any request is made for it: an
    /// internal IP literal, or a name that resolves (within `within`) only
    /// to internal addresses, is refused. A request made later still
    /// connects only through [`Guard::addresses`], so this check is the
    /// early, clear answer, not the protection.
    pub async fn check_url(&self, url: &Url, within: Duration) -> Result<(), Refusal> {
        if self.allow_private {
            return Ok(());
        }
        match url.host() {
            Some(url::Host::Domain(host)) => {
                let port = url.port_or_known_default().unwrap_or(443);
                match tokio::time::timeout(within, self.addresses(host, port)).await {
                    Err(_) => Err(Refusal::Unresolved(format!(
                        "host `{host}` did not resolve within {} seconds",
                        within.as_secs_f64()
                    ))),
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => match Blocked::find(e.as_ref()) {
                        Some(b) => Err(Refusal::Internal(b.clone())),
                        None => Err(Refusal::Unresolved(format!(
                            "host `{host}` does not resolve: {e}"
                        ))),
                    },
                }
            }
            _ => self
                .check_literal(url.host_str())
                .map_err(Refusal::Internal),
        }
    }
}

/// A host without the brackets of an IPv6 literal.
fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    const OPENER: &str = "set TEST_ALLOW_PRIVATE=true to allow them";

    #[tokio::test]
    async fn only_public_addresses_are_handed_out_and_a_name_without_one_is_blocked() {
        let hosts = StaticHosts::new();
        hosts.set("mixed.example.com", [ip("127.0.0.1"), ip("93.184.216.34")]);
        hosts.set("metadata.example.com", [ip("169.254.169.254")]);
        let guard = Guard::new(false, OPENER).with_hosts(Some(hosts.clone()));
        let mixed = guard.addresses("mixed.example.com", 80).await.unwrap();
        assert_eq!(mixed, [SocketAddr::new(ip("93.184.216.34"), 80)]);
        let err = guard
            .addresses("metadata.example.com", 80)
            .await
            .unwrap_err();
        let blocked = Blocked::find(err.as_ref()).expect("refused as blocked");
        assert!(blocked.message().contains("169.254.169.254"), "{blocked}");
        assert!(
            blocked.message().contains("TEST_ALLOW_PRIVATE"),
            "{blocked}"
        );

        let open = Guard::new(true, OPENER).with_hosts(Some(hosts));
        assert_eq!(
            open.addresses("metadata.example.com", 80).await.unwrap(),
            [SocketAddr::new(ip("169.254.169.254"), 80)],
            "internal addresses pass when they are allowed"
        );
    }

    #[tokio::test]
    async fn an_internal_ip_literal_is_refused_unless_allowed() {
        let guard = Guard::new(false, OPENER);
        for host in ["127.0.0.1", "[::1]", "10.0.0.5", "[::ffff:169.254.169.254]"] {
            let e = guard.check_literal(Some(host)).unwrap_err();
            assert!(e.message().contains("internal address"), "{e}");
            assert!(guard.addresses(host, 1).await.is_err(), "{host}");
        }
        assert!(guard.check_literal(Some("93.184.216.34")).is_ok());
        assert!(guard.check_literal(Some("example.com")).is_ok());
        assert!(
            Guard::new(true, OPENER)
                .check_literal(Some("127.0.0.1"))
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_url_check_tells_an_internal_destination_from_a_name_that_does_not_resolve() {
        let hosts = StaticHosts::new();
        hosts.set("inside.example.com", [ip("10.0.0.7")]);
        hosts.set("outside.example.com", [ip("93.184.216.34")]);
        hosts.set("nowhere.example.com", []);
        let guard = Guard::new(false, OPENER).with_hosts(Some(hosts));
        let check = |u: &str| {
            let guard = guard.clone();
            let url = Url::parse(u).unwrap();
            async move { guard.check_url(&url, Duration::from_secs(5)).await }
        };
        assert!(matches!(
            check("https://inside.example.com/a.jpg").await,
            Err(Refusal::Internal(_))
        ));
        assert!(matches!(
            check("http://127.0.0.1:9/a.jpg").await,
            Err(Refusal::Internal(_))
        ));
        assert!(matches!(
            check("https://nowhere.example.com/a.jpg").await,
            Err(Refusal::Unresolved(_))
        ));
        assert_eq!(check("https://outside.example.com/a.jpg").await, Ok(()));
    }
}
