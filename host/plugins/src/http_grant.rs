//! Outbound HTTP of integration plugins (`wasi:http`), held to the grant of
//! the binding being served: only the listed hosts, never an internal
//! address unless the grant allows it (the rule webhooks follow, from the
//! egress guard: names resolved once, the connection made only to the
//! addresses checked, for `http` and `https` alike, so a DNS answer that
//! changes between the check and the connection cannot turn a request
//! inward), no redirect followed, no proxy from the environment, bounded
//! waits and a bounded answer. A refusal reaches the plugin as the error
//! of its request, with a message saying why, never as a hang.

use std::future::Future;
use std::time::Duration;

use futures_util::stream;
use http::uri::{Authority, Scheme};
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use switchboard_egress::{Blocked, Guard, StaticHosts};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::domain::plugin::HttpGrant;

/// The wait a grant without `timeout_ms` allows, per phase.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer body a plugin may read.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;

/// The `wasi:http` hooks of one plugin instance: the grant of the call in
/// progress (`None`: no HTTP at all).
#[derive(Debug, Default)]
pub struct GrantedHttp {
    /// What the binding being served grants.
    pub grant: Option<HttpGrant>,
    /// Test-only fixed DNS answers (`None`: the system's resolver), beneath
    /// the guard, which still checks what they answer.
    #[doc(hidden)]
    pub hosts: Option<StaticHosts>,
}

type Sent = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

impl WasiHttpHooks for GrantedHttp {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        drop(fut);
        let grant = self.grant.clone();
        let hosts = self.hosts.clone();
        Box::new(async move { send(grant, hosts, request, options).await })
    }
}

/// A refusal, with the reason the plugin sees.
fn refused(why: impl Into<String>) -> Error {
    Error::InternalError(Some(format!("refused by the gateway: {}", why.into())))
}

async fn send(
    grant: Option<HttpGrant>,
    hosts: Option<StaticHosts>,
    request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Sent {
    let grant = grant
        .ok_or_else(|| refused("the binding grants no outbound HTTP (`grants.http` is not set)"))?;
    let uri = request.uri().clone();
    let authority = uri
        .authority()
        .cloned()
        .ok_or(Error::HttpRequestUriInvalid)?;
    let tls = uri.scheme() == Some(&Scheme::HTTPS);
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    if !host_granted(&grant.hosts, &authority, port) {
        return Err(refused(format!(
            "`{authority}` is not among the hosts the binding grants ({})",
            grant.hosts.join(", ")
        )));
    }
    let limit = grant
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let bound = |asked: Option<Duration>| asked.map_or(limit, |a| a.min(limit));
    let connect_timeout = bound(options.and_then(|o| o.connect_timeout));
    let first_byte_timeout = bound(options.and_then(|o| o.first_byte_timeout));
    // Tokio's interval panics on zero; a nanosecond is as good as nothing.
    let between_bytes_timeout =
        bound(options.and_then(|o| o.between_bytes_timeout)).max(Duration::from_nanos(1));

    let guard = Guard::new(
        grant.allow_private,
        "the binding's `grants.http.allow_private` is false",
    )
    .with_hosts(hosts);
    let connector = switchboard_egress::connector(guard, connect_timeout)
        .map_err(|e| Error::InternalError(Some(e.to_string())))?;
    let client: Client<_, WasiBody> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(connector);
    let response = tokio::time::timeout(first_byte_timeout, client.request(request))
        .await
        .map_err(|_| Error::ConnectionReadTimeout)?
        .map_err(|e| match Blocked::find(&e) {
            Some(blocked) => refused(blocked.message()),
            // Connecting failed (no address, refused, filtered, timed
            // out, TLS): one code for all of them.
            None if e.is_connect() => Error::DestinationUnavailable,
            None => Error::HttpProtocolError,
        })?;
    let response = response.map(|body| {
        let frames = stream::unfold(Some(body), move |body| async move {
            let mut body = body?;
            match tokio::time::timeout(between_bytes_timeout, body.frame()).await {
                Err(_) => Some((Err(Error::ConnectionReadTimeout), None)),
                Ok(None) => None,
                Ok(Some(Err(e))) => Some((Err(Error::from(e)), None)),
                Ok(Some(Ok(frame))) => Some((Ok(frame), Some(body))),
            }
        });
        Limited::new(StreamBody::new(frames), MAX_RESPONSE_BYTES)
            .map_err(|e| match e.downcast::<Error>() {
                Ok(inner) => *inner,
                Err(_) => Error::HttpResponseBodySize(Some(MAX_RESPONSE_BYTES as u64)),
            })
            .boxed_unsync()
    });
    // The client drives the connection itself; nothing is left to await.
    let io: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(async { Ok(()) });
    Ok((response, io))
}

/// Whether the grant lists the host: `host` allows any port, `host:port`
/// only that one; names compare case-insensitively.
pub fn host_granted(hosts: &[String], authority: &Authority, port: u16) -> bool {
    let host = authority.host();
    hosts.iter().any(|h| match h.parse::<Authority>() {
        Ok(g) => g.host().eq_ignore_ascii_case(host) && g.port_u16().is_none_or(|p| p == port),
        Err(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, SocketAddr};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::Bytes;
    use http_body_util::Empty;
    use tokio::net::TcpListener;

    use super::*;

    /// A listener at `addr` that counts the connections it accepts and
    /// closes each at once.
    async fn counting(addr: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let reached = Arc::new(AtomicUsize::new(0));
        let count = reached.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        (addr, reached)
    }

    fn get(url: &str) -> http::Request<WasiBody> {
        let body = Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync();
        http::Request::get(url).body(body).unwrap()
    }

    fn grant(host: &str, allow_private: bool) -> HttpGrant {
        HttpGrant {
            hosts: vec![host.to_owned()],
            allow_private,
            timeout_ms: Some(5_000),
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn an_https_request_connects_to_the_address_checked_not_to_a_second_answer() {
        // The name answers 127.0.0.1 first, then 127.0.0.2 (a record that
        // changes between a check and a connection); a listener on each
        // address, same port.
        let (first, first_reached) = counting("127.0.0.1:0".parse().unwrap()).await;
        let (_, second_reached) = counting(SocketAddr::new(ip("127.0.0.2"), first.port())).await;
        let hosts = StaticHosts::new();
        hosts.set_sequence(
            "bots.example.com",
            [vec![ip("127.0.0.1")], vec![ip("127.0.0.2")]],
        );
        let url = format!("https://bots.example.com:{}/bot", first.port());
        // The listener closes the connection: TLS fails, after the connection.
        let sent = send(
            Some(grant("bots.example.com", true)),
            Some(hosts.clone()),
            get(&url),
            None,
        )
        .await;
        assert!(sent.is_err(), "no TLS server answered");
        assert_eq!(hosts.lookups("bots.example.com"), 1, "resolved once");
        assert_eq!(first_reached.load(Ordering::SeqCst), 1);
        assert_eq!(
            second_reached.load(Ordering::SeqCst),
            0,
            "the connection went to a second lookup's answer"
        );
    }

    #[tokio::test]
    async fn a_name_that_resolves_inward_is_refused_unless_the_grant_allows_it() {
        let (addr, reached) = counting("127.0.0.1:0".parse().unwrap()).await;
        let hosts = StaticHosts::new();
        hosts.set_sequence("bots.example.com", [vec![ip("127.0.0.1")]]);
        for scheme in ["http", "https"] {
            let url = format!("{scheme}://bots.example.com:{}/bot", addr.port());
            let Err(e) = send(
                Some(grant("bots.example.com", false)),
                Some(hosts.clone()),
                get(&url),
                None,
            )
            .await
            else {
                panic!("{url} was sent");
            };
            let e = e.to_string();
            assert!(
                e.contains("refused by the gateway")
                    && e.contains("internal addresses (127.0.0.1)")
                    && e.contains("allow_private"),
                "{e}"
            );
        }
        assert_eq!(
            reached.load(Ordering::SeqCst),
            0,
            "the listener was reached"
        );
    }
}
