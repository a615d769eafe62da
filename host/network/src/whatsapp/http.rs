//! The crate's `HttpClient` on reqwest (already in the tree with rustls and
//! ring), used for the version check and media transfers.

use std::time::Duration;

use async_trait::async_trait;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};

/// Makes rustls's `ring` backend the process's provider (kept when one is
/// already installed): reqwest is built without a provider of its own, and
/// building a client without one panics.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The longest any one transfer may take in all. Only a bound against a
/// connection that hangs forever: a large upload on a slow uplink takes
/// minutes and must not fail for it.
const TRANSFER_CAP: Duration = Duration::from_secs(15 * 60);

/// A reqwest client whose requests give up when they stall, not when they
/// are merely long.
#[derive(Debug, Clone)]
pub struct ReqwestHttp {
    client: reqwest::Client,
}

impl ReqwestHttp {
    /// A client whose requests give up when connecting, or waiting for the
    /// next bytes of an answer, takes longer than `timeout`.
    pub fn new(timeout: Duration) -> anyhow::Result<Self> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .timeout(TRANSFER_CAP)
            .build()?;
        Ok(Self { client })
    }
}

#[async_trait]
impl HttpClient for ReqwestHttp {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let method = reqwest::Method::from_bytes(request.method.as_bytes())?;
        let mut builder = self.client.request(method, &request.url);
        for (k, v) in &request.headers {
            builder = builder.header(k, v);
        }
        if let Some(body) = request.body {
            builder = builder.body(body);
        }
        let response = builder.send().await?;
        let status_code = response.status().as_u16();
        let body = response.bytes().await?.to_vec();
        Ok(HttpResponse { status_code, body })
    }
}
