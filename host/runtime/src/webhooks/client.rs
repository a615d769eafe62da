//! The delivery client: hyper-util's pooled HTTP/1.1 client over rustls,
//! resolving names through the guarded resolver. Deliveries are the
//! gateway's hottest outbound path, and a general-purpose client's layers
//! (its URL type parsed again per request, a redirect policy that never
//! follows here, its own timeout and body wrappers) cost about a tenth of
//! the inbound pipeline's throughput; what a delivery needs of them is
//! here: a total timeout, a connect timeout, no redirects, a bounded read
//! of the answer, and the resolver that keeps deliveries off internal
//! addresses.

use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, USER_AGENT};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls_platform_verifier::BuilderVerifierExt;

use super::config::WebhookConfig;
use super::target::{Blocked, GuardedResolver};

/// Most bytes of a receiver's answer read (and thrown away) so that its
/// connection can carry the next delivery; a longer answer is cut off and
/// its connection closed.
const ANSWER_LIMIT: usize = 64 * 1024;

/// The `User-Agent` of every delivery.
const AGENT: &str = concat!("Switchboard/", env!("CARGO_PKG_VERSION"));

/// A boxed error, as hyper-util's connectors carry them.
type BoxError = Box<dyn StdError + Send + Sync>;

/// Why an attempt failed before a receiver answered.
#[derive(Debug)]
pub enum SendError {
    /// No answer within the delivery timeout.
    Timeout(Duration),
    /// The resolver refused the host: it resolves only inward.
    Blocked(Blocked),
    /// No connection could be made (DNS, TCP or TLS).
    Connect(String),
    /// The connection broke during the exchange.
    Request(String),
}

/// The pooled client deliveries go through.
#[derive(Clone)]
pub struct DeliveryClient {
    client: Client<HttpsConnector<HttpConnector<Resolver>>, Full<Bytes>>,
    timeout: Duration,
    agent: HeaderValue,
}

impl DeliveryClient {
    /// A client for `config`: its timeout for connecting and for the whole
    /// exchange, idle connections kept per URL up to its concurrency, the
    /// platform's certificate roots, and the guarded resolver unless
    /// internal addresses are allowed and no static answers are set.
    pub fn new(config: &WebhookConfig) -> anyhow::Result<Self> {
        let resolver = Resolver {
            guard: GuardedResolver::new(config.allow_private, config.static_hosts.clone()),
        };
        let mut http = HttpConnector::new_with_resolver(resolver);
        // https goes through the TLS wrapper, which hands plain TCP here.
        http.enforce_http(false);
        http.set_connect_timeout(Some(config.timeout));
        // Each delivery is one small write; Nagle would hold it back.
        http.set_nodelay(true);
        let tls = rustls::ClientConfig::builder()
            .with_platform_verifier()?
            .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(config.concurrency_per_url.max(1))
            .pool_timer(TokioTimer::new())
            .build(https);
        Ok(Self {
            client,
            timeout: config.timeout,
            agent: HeaderValue::from_static(AGENT),
        })
    }

    /// POSTs `body` with `headers` to `uri` and reads the answer (up to
    /// [`ANSWER_LIMIT`]), all within the timeout; the answer's status.
    pub async fn post(
        &self,
        uri: http::Uri,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::StatusCode, SendError> {
        headers.insert(USER_AGENT, self.agent.clone());
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let exchange = async {
            let response = self.client.request(request).await.map_err(classify)?;
            let status = response.status();
            // Read to the end so the connection goes back to the pool; an
            // answer beyond the limit, or one that breaks off, costs only
            // its connection, not the delivery.
            let _ = Limited::new(response.into_body(), ANSWER_LIMIT)
                .collect()
                .await;
            Ok(status)
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or(Err(SendError::Timeout(self.timeout)))
    }
}

/// Sorts a client error into what the dispatcher reports.
fn classify(e: hyper_util::client::legacy::Error) -> SendError {
    if let Some(blocked) = Blocked::find(&e) {
        return SendError::Blocked(blocked.clone());
    }
    let mut cause: &dyn StdError = &e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    if e.is_connect() {
        SendError::Connect(cause.to_string())
    } else {
        SendError::Request(cause.to_string())
    }
}

/// The connector's resolver: the guarded one when set, else the system's.
#[derive(Clone)]
struct Resolver {
    guard: Option<GuardedResolver>,
}

impl tower_service::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let guard = self.guard.clone();
        Box::pin(async move {
            let addrs = match guard {
                Some(guard) => guard.addresses(name.as_str()).await?,
                None => tokio::net::lookup_host((name.as_str(), 0)).await?.collect(),
            };
            Ok(addrs.into_iter())
        })
    }
}
