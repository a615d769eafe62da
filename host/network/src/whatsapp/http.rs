//! The crate's `HttpClient` on reqwest (already in the tree with rustls and
//! ring), used for the version check and media transfers. Downloads stream:
//! the crate reads the answer through a blocking reader over the body as it
//! arrives, so a media download never holds the whole file in memory.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::TryStreamExt;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::wacore::net::StreamingHttpResponse;

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

impl ReqwestHttp {
    async fn send(&self, request: HttpRequest) -> anyhow::Result<reqwest::Response> {
        let method = reqwest::Method::from_bytes(request.method.as_bytes())?;
        let mut builder = self.client.request(method, &request.url);
        for (k, v) in &request.headers {
            builder = builder.header(k, v);
        }
        if let Some(body) = request.body {
            builder = builder.body(body);
        }
        Ok(builder.send().await?)
    }
}

#[async_trait]
impl HttpClient for ReqwestHttp {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let response = self.send(request).await?;
        let status_code = response.status().as_u16();
        let body = response.bytes().await?.to_vec();
        Ok(HttpResponse { status_code, body })
    }

    /// Streaming needs a runtime to drive the request from the crate's
    /// blocking thread; without one the crate falls back to `execute`.
    fn supports_streaming(&self) -> bool {
        tokio::runtime::Handle::try_current().is_ok()
    }

    /// Called by the crate on a blocking thread: the request is sent on the
    /// runtime, and the body is read as a blocking reader over its bytes as
    /// they arrive.
    fn execute_streaming(&self, request: HttpRequest) -> anyhow::Result<StreamingHttpResponse> {
        let handle = tokio::runtime::Handle::try_current()?;
        let response = handle.block_on(self.send(request))?;
        let status_code = response.status().as_u16();
        let bytes = response.bytes_stream().map_err(std::io::Error::other);
        let reader = tokio_util::io::StreamReader::new(bytes);
        Ok(StreamingHttpResponse {
            status_code,
            body: Box::new(tokio_util::io::SyncIoBridge::new_with_handle(
                reader, handle,
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    /// Serves `status` and `body`, written in pieces with a pause between
    /// them, as a slow CDN would; the URL to ask.
    async fn serve_in_pieces(status: &str, body: Vec<u8>) -> String {
        let head = crate::whatsapp::cdn::head(status, &body);
        let addr = crate::whatsapp::cdn::serve(head, body, Duration::from_millis(5)).await;
        format!("http://{addr}/v/t62/media.enc")
    }

    /// What the crate does with a streaming answer: on a blocking thread,
    /// ask, then read the body to its end.
    async fn read_streaming(url: String) -> (u16, Vec<u8>) {
        let http = ReqwestHttp::new(Duration::from_secs(5)).unwrap();
        assert!(http.supports_streaming(), "inside a runtime it streams");
        tokio::task::spawn_blocking(move || {
            let mut response = http.execute_streaming(HttpRequest::get(url)).unwrap();
            let mut body = Vec::new();
            response.body.read_to_end(&mut body).unwrap();
            (response.status_code, body)
        })
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streamed_answer_is_read_whole_from_a_blocking_thread_as_it_arrives() {
        let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let url = serve_in_pieces("200 OK", body.clone()).await;
        let (status, read) = read_streaming(url).await;
        assert_eq!(status, 200);
        assert_eq!(read, body);
    }

    #[tokio::test]
    async fn a_streamed_refusal_keeps_its_status_for_the_crate_to_judge() {
        let url = serve_in_pieces("404 Not Found", b"gone".to_vec()).await;
        assert_eq!(read_streaming(url).await, (404, b"gone".to_vec()));
    }
}
