//! A session's proxy: the SOCKS5 or HTTP proxy its WhatsApp connection and
//! media transfers go through, as the API takes it and as the store keeps
//! it.
//!
//! A proxy's credentials are a secret: [`Proxy`]'s `Debug` and
//! [`Proxy::address`] leave them out, so logs, answers and events name
//! `socks5://host:port` only, and the store keeps them sealed
//! ([`StoredProxy`]), never in plain text.

use serde::{Deserialize, Serialize};

/// The value of `url` that asks for a direct connection even when the
/// gateway has a default proxy.
pub const DIRECT: &str = "none";

/// Which protocol a proxy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProxyKind {
    /// SOCKS5 (RFC 1928), with username and password (RFC 1929) when
    /// given; host names are resolved by the proxy.
    Socks5,
    /// An HTTP proxy: `CONNECT` tunnels, `Proxy-Authorization: Basic` when
    /// credentials are given.
    Http,
}

impl ProxyKind {
    /// The URL scheme of the kind (`socks5`, `http`).
    pub fn scheme(self) -> &'static str {
        match self {
            Self::Socks5 => "socks5",
            Self::Http => "http",
        }
    }
}

/// A proxy with its credentials, ready to connect through.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Proxy {
    /// The protocol.
    pub kind: ProxyKind,
    /// The proxy's host name or IP address (IPv6 without brackets).
    pub host: String,
    /// The proxy's port.
    pub port: u16,
    /// Username and password, when the proxy asks for them.
    pub credentials: Option<ProxyCredentials>,
}

/// A proxy's username and password.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProxyCredentials {
    /// The username.
    pub username: String,
    /// The password (may be empty).
    pub password: String,
}

impl std::fmt::Debug for ProxyCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProxyCredentials(<redacted>)")
    }
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({}", self.address())?;
        if self.credentials.is_some() {
            f.write_str(", with credentials")?;
        }
        f.write_str(")")
    }
}

/// Longest username or password a proxy takes: SOCKS5's username and
/// password authentication carries each in one length byte.
pub const MAX_CREDENTIAL_LEN: usize = 255;

/// How a session reaches WhatsApp, as it asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyChoice {
    /// Straight, even when the gateway has a default proxy.
    Direct,
    /// Through this proxy.
    Via(Proxy),
}

impl Proxy {
    /// Reads a proxy from its URL (`socks5://host:port`, `socks5h://…`,
    /// `http://host:port`), with credentials in the URL or given beside it
    /// (beside it wins; a username without a password has an empty one).
    /// A refusal says what is wrong without repeating a password.
    pub fn parse(
        raw: &str,
        username: Option<String>,
        password: Option<String>,
    ) -> Result<Proxy, String> {
        let url = url::Url::parse(raw.trim()).map_err(|e| {
            format!("is not a proxy URL like socks5://host:1080 or http://host:3128 ({e})")
        })?;
        let kind = match url.scheme() {
            "socks5" | "socks5h" => ProxyKind::Socks5,
            "http" => ProxyKind::Http,
            "https" => {
                return Err(
                    "names an https proxy; TLS to the proxy itself is not supported: use socks5:// or http:// (the WhatsApp connection inside is encrypted either way)"
                        .into(),
                );
            }
            other => {
                return Err(format!(
                    "uses `{other}`; a proxy is socks5:// (or socks5h://) or http://"
                ));
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err("names no host".into()),
        };
        if url.path() != "/" && !url.path().is_empty() || url.query().is_some() {
            return Err("has a path or query; a proxy URL is scheme://host:port".into());
        }
        let port = url
            .port()
            .ok_or_else(|| "names no port (socks5://host:1080, http://host:3128)".to_owned())?;
        let decode = |s: &str| {
            percent_decode(s).ok_or_else(|| "has credentials that are not valid UTF-8".to_owned())
        };
        let in_url_user = (!url.username().is_empty())
            .then(|| decode(url.username()))
            .transpose()?;
        let in_url_password = url.password().map(decode).transpose()?;
        let username = username.or(in_url_user);
        let password = password.or(in_url_password);
        // A password alone goes with an empty username (HTTP Basic and
        // SOCKS5 both carry one); nothing given, or an empty username
        // alone, is no credentials.
        let credentials = match (username, password) {
            (None, None) => None,
            (Some(u), None) if u.is_empty() => None,
            (u, p) => {
                let (u, p) = (u.unwrap_or_default(), p.unwrap_or_default());
                if u.len() > MAX_CREDENTIAL_LEN || p.len() > MAX_CREDENTIAL_LEN {
                    return Err(format!(
                        "has a username or password longer than {MAX_CREDENTIAL_LEN} bytes"
                    ));
                }
                Some(ProxyCredentials {
                    username: u,
                    password: p,
                })
            }
        };
        Ok(Proxy {
            kind,
            host,
            port,
            credentials,
        })
    }

    /// `scheme://host:port`, without credentials: what answers, logs and
    /// errors name.
    pub fn address(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}://{host}:{}", self.kind.scheme(), self.port)
    }

    /// The URL with its credentials, percent-encoded, for an HTTP client's
    /// proxy setting (SOCKS5 as `socks5h`, so names are resolved by the
    /// proxy as on the chat connection). Never logged.
    pub fn url_with_credentials(&self) -> String {
        let scheme = match self.kind {
            ProxyKind::Socks5 => "socks5h",
            ProxyKind::Http => "http",
        };
        let mut url = url::Url::parse(&format!("{scheme}://proxy.invalid:{}", self.port))
            .expect("a fixed URL parses");
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        url.set_host(Some(&host)).expect("a parsed host is valid");
        if let Some(c) = &self.credentials {
            url.set_username(&c.username)
                .expect("a URL with a host takes a username");
            url.set_password(Some(&c.password))
                .expect("a URL with a host takes a password");
        }
        url.to_string()
    }
}

/// `%xx` escapes decoded; `None` when the bytes are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

/// A session's proxy as the store keeps it: the address in the clear (it
/// is shown), the credentials sealed by the store's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredProxy {
    /// `scheme://host:port`, or [`DIRECT`] for a session that connects
    /// straight whatever the gateway's default.
    pub address: String,
    /// The credentials, sealed (the store's `seal`); `None` without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_credentials: Option<String>,
}

impl StoredProxy {
    /// Whether the session asked for a direct connection.
    pub fn is_direct(&self) -> bool {
        self.address == DIRECT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socks5_url_with_credentials_is_read_and_shown_without_them() {
        let p = Proxy::parse("socks5://al%40ice:s3cr%3At@127.0.0.1:1080", None, None).unwrap();
        assert_eq!(p.kind, ProxyKind::Socks5);
        assert_eq!((p.host.as_str(), p.port), ("127.0.0.1", 1080));
        let c = p.credentials.clone().unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str()),
            ("al@ice", "s3cr:t")
        );
        assert_eq!(p.address(), "socks5://127.0.0.1:1080");
        let debug = format!("{p:?}");
        assert!(
            !debug.contains("s3cr") && !debug.contains("alice"),
            "{debug}"
        );
        assert!(
            p.url_with_credentials()
                .starts_with("socks5h://al%40ice:s3cr%3At@127.0.0.1:1080")
        );
    }

    #[test]
    fn credentials_given_beside_the_url_win_over_those_in_it() {
        let p = Proxy::parse(
            "http://u:p@proxy.example:3128",
            Some("v".into()),
            Some("q".into()),
        )
        .unwrap();
        let c = p.credentials.unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("v", "q"));
        assert_eq!(p.kind, ProxyKind::Http);
    }

    #[test]
    fn urls_that_are_not_a_usable_proxy_are_refused_with_the_reason() {
        for (url, why) in [
            ("ftp://h:1", "uses `ftp`"),
            ("https://h:443", "https proxy"),
            ("socks5://h", "no port"),
            ("http://h:3128/path", "path"),
            ("not a url", "not a proxy URL"),
        ] {
            let err = Proxy::parse(url, None, None).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
            assert!(!err.contains("pw"), "{err}");
        }
        let long = "x".repeat(256);
        assert!(Proxy::parse("socks5://h:1", Some(long), None).is_err());
    }

    #[test]
    fn a_password_alone_goes_with_an_empty_username() {
        let p = Proxy::parse("http://h:3128", None, Some("pw".into())).unwrap();
        let c = p.credentials.unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("", "pw"));
        let none = Proxy::parse("http://h:3128", Some(String::new()), None).unwrap();
        assert_eq!(none.credentials, None);
    }

    #[test]
    fn an_ipv6_proxy_is_shown_in_brackets() {
        let p = Proxy::parse("socks5://[::1]:1080", None, None).unwrap();
        assert_eq!(p.host, "::1");
        assert_eq!(p.address(), "socks5://[::1]:1080");
        assert_eq!(p.url_with_credentials(), "socks5h://[::1]:1080");
    }
}
