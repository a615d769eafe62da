//! A TCP connection through a session's proxy: hyper-util's SOCKS5 and
//! HTTP `CONNECT` connectors over its TCP connector, to a host and port the
//! proxy resolves and reaches. The proxy itself is the operator's: its
//! address is not held to the public-address rule, and nothing falls back
//! to a direct connection when it cannot be reached.
//!
//! Errors name the proxy by [`Proxy::address`], never with its
//! credentials.

use std::time::Duration;

use http::{HeaderValue, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use switchboard_domain::proxy::{Proxy, ProxyKind};
use tokio::net::TcpStream;
use tower_service::Service;

/// Why a connection through a proxy was not made.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The destination is not a host and port.
    #[error("`{0}` is not a host and port to reach through a proxy")]
    BadDestination(String),
    /// Connecting to the proxy, its handshake or its answer failed.
    #[error("could not reach {destination} through the proxy {proxy}: {why}")]
    Failed {
        /// The proxy, without credentials.
        proxy: String,
        /// `host:port`.
        destination: String,
        /// What went wrong.
        why: String,
    },
    /// The proxy did not connect within the bound.
    #[error("the proxy {proxy} did not connect to {destination} within {secs} s")]
    TimedOut {
        /// The proxy, without credentials.
        proxy: String,
        /// `host:port`.
        destination: String,
        /// The bound.
        secs: u64,
    },
}

/// A TCP stream to `host:port` through `proxy`, its handshake done, within
/// `timeout` in all.
pub async fn connect(
    proxy: &Proxy,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<TcpStream, ProxyError> {
    let bracketed = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let destination = format!("{bracketed}:{port}");
    let dst: Uri = format!("http://{destination}")
        .parse()
        .map_err(|_| ProxyError::BadDestination(destination.clone()))?;
    let failed = |why: String| ProxyError::Failed {
        proxy: proxy.address(),
        destination: destination.clone(),
        why,
    };
    let proxy_uri: Uri = format!("http://{}", proxy_authority(proxy))
        .parse()
        .map_err(|e| failed(format!("the proxy's address is not usable: {e}")))?;
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    tcp.set_connect_timeout(Some(timeout));
    let attempt = async {
        let io = match proxy.kind {
            ProxyKind::Socks5 => {
                let mut socks = SocksV5::new(proxy_uri, tcp).local_dns(false);
                if let Some(c) = &proxy.credentials {
                    socks = socks.with_auth(c.username.clone(), c.password.clone());
                }
                socks.call(dst).await.map_err(|e| failed(chain(&e)))?
            }
            ProxyKind::Http => {
                let mut tunnel = Tunnel::new(proxy_uri, tcp);
                if let Some(c) = &proxy.credentials {
                    tunnel = tunnel.with_auth(basic_auth(&c.username, &c.password));
                }
                tunnel.call(dst).await.map_err(|e| failed(chain(&e)))?
            }
        };
        Ok(io.into_inner())
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(ProxyError::TimedOut {
            proxy: proxy.address(),
            destination,
            secs: timeout.as_secs(),
        }),
    }
}

/// `host:port` of the proxy, an IPv6 host in brackets.
fn proxy_authority(proxy: &Proxy) -> String {
    if proxy.host.contains(':') {
        format!("[{}]:{}", proxy.host, proxy.port)
    } else {
        format!("{}:{}", proxy.host, proxy.port)
    }
}

/// `Basic <base64(user:password)>`, marked sensitive.
fn basic_auth(username: &str, password: &str) -> HeaderValue {
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    let mut value =
        HeaderValue::from_str(&format!("Basic {token}")).expect("base64 is a valid header value");
    value.set_sensitive(true);
    value
}

/// An error and its sources, one line (the connectors nest theirs).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
