//! Where deliveries may go. URLs must be http or https; unless the operator
//! allows it, they must not reach loopback, private, link-local or other
//! internal addresses — checked at registration and again at delivery (by the
//! client's resolver), so a DNS change cannot turn a webhook inward.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

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

/// Whether an address is on the public internet (not loopback, private,
/// link-local, shared, documentation, multicast, reserved or unspecified).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
            if nat64 {
                let v4 =
                    Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
                return is_public_v4(v4);
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::from_bits(1)) // ::1 spelled out
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

/// Checks where a URL leads: an internal IP literal, or a host that resolves
/// only to internal addresses, is refused unless `allow_private`.
pub async fn check_destination(url: &Url, allow_private: bool) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    match url.host() {
        Some(url::Host::Ipv4(ip)) => refuse_internal(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => refuse_internal(IpAddr::V6(ip)),
        Some(url::Host::Domain(host)) => {
            let port = url.port_or_known_default().unwrap_or(443);
            let addrs: Vec<SocketAddr> = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                tokio::net::lookup_host((host, port)),
            )
            .await
            .map_err(|_| format!("host `{host}` did not resolve within 5 seconds"))?
            .map_err(|e| format!("host `{host}` does not resolve: {e}"))?
            .collect();
            if addrs.iter().any(|a| is_public(a.ip())) {
                Ok(())
            } else {
                Err(format!(
                    "host `{host}` resolves only to internal addresses; set WEBHOOK_ALLOW_PRIVATE=true to allow them"
                ))
            }
        }
        None => Err("needs a host".into()),
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

/// A resolver that hands the HTTP client only public addresses, so the check
/// holds at delivery time too (DNS rebinding).
#[derive(Debug, Clone, Copy)]
pub struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| is_public(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(format!("`{host}` resolves only to internal addresses").into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!public(ip), "{ip} must not count as public");
        }
    }

    #[test]
    fn ordinary_internet_addresses_are_public() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(public(ip), "{ip} is public");
        }
    }

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
        assert!(check_destination(&url, false).await.is_err());
        assert!(check_destination(&url, true).await.is_ok());
        let url = parse_url("http://[::1]:9/x").unwrap();
        assert!(check_destination(&url, false).await.is_err());
    }
}
