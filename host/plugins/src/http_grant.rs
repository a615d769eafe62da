//! Outbound HTTP of integration plugins (`wasi:http`), held to the grant of
//! the binding being served: only the listed hosts, never an internal
//! address unless the grant allows it (the rule webhooks follow), bounded
//! waits and a bounded answer. A refusal reaches the plugin as the error of
//! its request, with a message saying why, never as a hang.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use http::uri::{Authority, Scheme};
use http_body_util::{BodyExt, Limited};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::domain::ip_scope::is_public;
use crate::domain::plugin::HttpGrant;

/// The wait a grant without `timeout_ms` allows, per phase.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer body a plugin may read.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;
/// Longest a host name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The `wasi:http` hooks of one plugin instance: the grant of the call in
/// progress (`None`: no HTTP at all).
#[derive(Debug, Default)]
pub struct GrantedHttp {
    /// What the binding being served grants.
    pub grant: Option<HttpGrant>,
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
        Box::new(async move { send(grant, request, options).await })
    }
}

/// A refusal, with the reason the plugin sees.
fn refused(why: impl Into<String>) -> Error {
    Error::InternalError(Some(format!("refused by the gateway: {}", why.into())))
}

async fn send(
    grant: Option<HttpGrant>,
    mut request: http::Request<WasiBody>,
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
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let addrs: Vec<SocketAddr> =
        tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port)))
            .await
            .map_err(|_| Error::DnsTimeout)?
            .map_err(|_| Error::DestinationNotFound)?
            .collect();
    let addr = *addrs.first().ok_or(Error::DestinationNotFound)?;
    if !grant.allow_private
        && let Some(internal) = addrs.iter().find(|a| !is_public(a.ip()))
    {
        return Err(refused(format!(
            "`{host}` resolves to the internal address {}; the binding's `grants.http.allow_private` is false",
            internal.ip()
        )));
    }
    if !tls {
        // Connect to the address just checked, not to a second lookup's
        // answer (DNS rebinding); the Host header keeps the name.
        let pinned: Authority = addr
            .to_string()
            .parse()
            .map_err(|_| Error::HttpRequestUriInvalid)?;
        let mut parts = uri.into_parts();
        parts.authority = Some(pinned);
        *request.uri_mut() =
            http::Uri::from_parts(parts).map_err(|_| Error::HttpRequestUriInvalid)?;
    }
    let limit = grant
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let bound = |asked: Option<Duration>| Some(asked.map_or(limit, |a| a.min(limit)));
    let options = RequestOptions {
        connect_timeout: bound(options.and_then(|o| o.connect_timeout)),
        first_byte_timeout: bound(options.and_then(|o| o.first_byte_timeout)),
        between_bytes_timeout: bound(options.and_then(|o| o.between_bytes_timeout)),
    };
    let (response, io) = wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
    let response = response.map(|body| {
        Limited::new(body, MAX_RESPONSE_BYTES)
            .map_err(|e| match e.downcast::<Error>() {
                Ok(inner) => *inner,
                Err(_) => Error::HttpResponseBodySize(Some(MAX_RESPONSE_BYTES as u64)),
            })
            .boxed_unsync()
    });
    Ok((response, Box::new(io)))
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
