//! The delivery client: hyper-util's pooled HTTP/1.1 client over rustls,
//! resolving names through the guarded resolver. Deliveries are the
//! gateway's hottest outbound path, and a general-purpose client's layers
//! (its URL type parsed again per request, a redirect policy that never
//! follows here, its own timeout and body wrappers) cost about a tenth of
//! the inbound pipeline's throughput; what a delivery needs of them is
//! here: a total timeout, a connect timeout, no redirects, a bounded read
//! of the answer, and the egress guard's connector, which keeps deliveries
//! off internal addresses (pinned to the addresses it checked).

use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, USER_AGENT};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use switchboard_egress::Connector;

use super::config::WebhookConfig;
use super::target::{Blocked, guard};

/// Most bytes of a receiver's answer read (and thrown away) so that its
/// connection can carry the next delivery; a longer answer is cut off and
/// its connection closed.
const ANSWER_LIMIT: usize = 64 * 1024;

/// The `User-Agent` of every delivery.
const AGENT: &str = concat!("Switchboard/", env!("CARGO_PKG_VERSION"));

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
    client: Client<Connector, Full<Bytes>>,
    timeout: Duration,
    agent: HeaderValue,
}

impl DeliveryClient {
    /// A client for `config`: its timeout for connecting and for the whole
    /// exchange, idle connections kept per URL up to its concurrency, and
    /// the egress guard's connector under the webhooks' rule
    /// (`WEBHOOK_ALLOW_PRIVATE`, the static answers of tests).
    pub fn new(config: &WebhookConfig) -> anyhow::Result<Self> {
        let https = switchboard_egress::connector(
            guard(config.allow_private, config.static_hosts.clone()),
            config.timeout,
        )
        .map_err(|e| anyhow::anyhow!("the webhook client could not be built: {e}"))?;
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
