//! Where deliveries may go. URLs must be http or https; unless the operator
//! allows it, they must not reach loopback, private, link-local or other
//! internal addresses. The rule is the egress guard's
//! (`switchboard_egress::Guard`), the one every outbound request on
//! someone else's behalf goes through: registration checks where the URL
//! resolves; delivery checks an IP literal before sending and a host name
//! in the delivery client's resolver, on exactly the addresses it then
//! connects to, so a DNS answer that changes after registration (DNS
//! rebinding) cannot turn a webhook inward.
//!
//! [`StaticHosts`] stands in for DNS in tests: it answers names beneath the
//! guard, which still checks every address it gives.

use std::time::Duration;

pub use switchboard_domain::ip_scope::is_public;
pub use switchboard_egress::{Blocked, StaticHosts};
use switchboard_egress::{Guard, Refusal};
use url::Url;

/// How long registration waits for a host name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The public-address rule of webhooks: the egress guard, opened by
/// `WEBHOOK_ALLOW_PRIVATE`.
pub fn guard(allow_private: bool, hosts: Option<StaticHosts>) -> Guard {
    Guard::new(
        allow_private,
        "set WEBHOOK_ALLOW_PRIVATE=true to allow them",
    )
    .with_hosts(hosts)
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
/// host that resolves only to internal addresses (or not at all), is
/// refused unless `allow_private`.
pub async fn check_destination(
    url: &Url,
    allow_private: bool,
    hosts: Option<&StaticHosts>,
) -> Result<(), String> {
    guard(allow_private, hosts.cloned())
        .check_url(url, RESOLVE_TIMEOUT)
        .await
        .map_err(|refusal| match refusal {
            Refusal::Internal(blocked) => blocked.message().to_owned(),
            Refusal::Unresolved(why) => why,
        })
}

/// Checks a URL's host (as `http::Uri` and `Url` write it, an IPv6
/// literal in brackets) when it is an IP literal, at delivery (the
/// client's resolver is not asked about literals). A host name passes
/// here: the resolver checks the addresses it resolves to when the client
/// connects, and a check of its own here would be a second lookup whose
/// answer the connection need not get.
pub fn check_literal(host: Option<&str>, allow_private: bool) -> Result<(), String> {
    guard(allow_private, None)
        .check_literal(host)
        .map_err(|blocked| blocked.message().to_owned())
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

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
}
