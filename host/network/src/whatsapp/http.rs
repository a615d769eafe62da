//! The crate's `HttpClient` on reqwest (already in the tree with rustls and
//! ring), used for the version check and media transfers. Downloads stream:
//! the crate reads the answer through a blocking reader over the body as it
//! arrives, so a media download never holds the whole file in memory; an
//! upload's body is fed from the crate's reader the same way.
//!
//! The crate builds a download's URL from a `direct_path` a remote sender
//! chose, so every request is held to the shape WhatsApp's own take
//! ([`check_whatsapp_url`]: https, no credentials, the default port, a
//! host under WhatsApp's domains) before it is made, and again on each
//! redirect hop; names resolve through the egress guard (public addresses
//! only, and the connection goes to the addresses it checked); no proxy is
//! read from the environment. A session with a proxy makes its requests
//! through it (SOCKS5 with names resolved by the proxy, or HTTP), so there
//! the proxy resolves and reaches WhatsApp's hosts; the URL shape is held
//! all the same.

use std::io::Read as _;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::TryStreamExt;
use switchboard_domain::proxy::Proxy;
use switchboard_egress::Guard;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::wacore::net::{StreamingHttpResponse, UploadBody};

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

/// The domains WhatsApp serves its web client and media from: the chat
/// and version hosts (`web.whatsapp.com`), the media hosts a media
/// connection names (`mmg.whatsapp.net`, `media-*.cdn.whatsapp.net`, …)
/// and Facebook's CDN (`*.fbcdn.net`).
const WHATSAPP_DOMAINS: [&str; 3] = ["whatsapp.net", "whatsapp.com", "fbcdn.net"];

/// Most redirects one request follows, each hop held to the same shape.
const MAX_REDIRECTS: usize = 5;

/// Whether `raw` has the shape of a URL WhatsApp's own clients ask: https,
/// no credentials, the default port, a host name (not an address) that is
/// or is beneath one of [`WHATSAPP_DOMAINS`]. The refusal names the host
/// only: the query carries the media connection's auth.
pub fn check_whatsapp_url(raw: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(raw).map_err(|e| format!("is not a valid URL: {e}"))?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let on_whatsapp = match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.to_ascii_lowercase();
            WHATSAPP_DOMAINS
                .iter()
                .any(|w| d == *w || d.strip_suffix(w).is_some_and(|p| p.ends_with('.')))
        }
        _ => false,
    };
    if url.scheme() != "https" {
        return Err(format!("uses `{}`, not https", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("carries credentials".into());
    }
    if url.port().is_some_and(|p| p != 443) {
        return Err(format!("names the port {}", url.port().unwrap_or_default()));
    }
    if !on_whatsapp {
        return Err(format!("goes to `{host}`, not a WhatsApp host"));
    }
    Ok(())
}

/// Resolves the crate's host names through the egress guard.
struct Guarded(Guard);

impl reqwest::dns::Resolve for Guarded {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = guard.addresses(&host, 0).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// A reqwest client whose requests give up when they stall, not when they
/// are merely long.
#[derive(Debug, Clone)]
pub struct ReqwestHttp {
    client: reqwest::Client,
    /// Whether requests are held to [`check_whatsapp_url`] (always, but
    /// for the tests' plain-HTTP media host on loopback).
    whatsapp_only: bool,
    /// The wire server's media host: every request must go to it, and goes
    /// over plain HTTP (test builds only).
    wire_host: Option<String>,
}

impl ReqwestHttp {
    /// A client whose requests give up when connecting, or waiting for the
    /// next bytes of an answer, takes longer than `timeout`; held to
    /// WhatsApp's hosts on public addresses; through `proxy` when one is
    /// given.
    pub fn via(timeout: Duration, proxy: Option<&Proxy>) -> anyhow::Result<Self> {
        let guard = Guard::new(false, "WhatsApp's own hosts are public");
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if check_whatsapp_url(attempt.url().as_str()).is_ok() {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        Self::build(timeout, guard, redirects, true, proxy)
    }

    /// A client for the tests' media host: plain HTTP on loopback, no
    /// redirects.
    #[cfg(test)]
    pub fn local(timeout: Duration) -> anyhow::Result<Self> {
        let guard = Guard::new(true, "");
        Self::build(
            timeout,
            guard,
            reqwest::redirect::Policy::none(),
            false,
            None,
        )
    }

    /// A client for the wire server's media host `host` alone: what the
    /// crate asks of `https://<host>/…` is asked over plain HTTP, and
    /// anything else is refused. Test builds only.
    #[cfg(feature = "wire")]
    pub fn wire(timeout: Duration, host: &str, proxy: Option<&Proxy>) -> anyhow::Result<Self> {
        let guard = Guard::new(true, "");
        let mut http = Self::build(
            timeout,
            guard,
            reqwest::redirect::Policy::none(),
            false,
            proxy,
        )?;
        http.wire_host = Some(host.to_owned());
        Ok(http)
    }

    fn build(
        timeout: Duration,
        guard: Guard,
        redirects: reqwest::redirect::Policy,
        whatsapp_only: bool,
        proxy: Option<&Proxy>,
    ) -> anyhow::Result<Self> {
        install_crypto_provider();
        let builder = reqwest::Client::builder()
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .timeout(TRANSFER_CAP)
            .redirect(redirects);
        let builder = match proxy {
            // Names are the proxy's to resolve: the guard's lookup would
            // only be asked for the proxy's own host, which is the
            // operator's and may well be private.
            Some(proxy) => builder.proxy(
                reqwest::Proxy::all(proxy.url_with_credentials()).map_err(|e| {
                    anyhow::anyhow!("the proxy {} is not usable: {e}", proxy.address())
                })?,
            ),
            None => builder.no_proxy().dns_resolver(Guarded(guard)),
        };
        let client = builder.build()?;
        Ok(Self {
            client,
            whatsapp_only,
            wire_host: None,
        })
    }
}

impl ReqwestHttp {
    async fn send(&self, request: HttpRequest) -> anyhow::Result<reqwest::Response> {
        self.send_with(request, None).await
    }

    /// Sends `request`, with `streamed` as its body instead of the
    /// request's own when given.
    async fn send_with(
        &self,
        request: HttpRequest,
        streamed: Option<reqwest::Body>,
    ) -> anyhow::Result<reqwest::Response> {
        if self.whatsapp_only
            && let Err(why) = check_whatsapp_url(&request.url)
        {
            anyhow::bail!("refused by the gateway before any request: the URL {why}");
        }
        let url = match &self.wire_host {
            None => request.url.clone(),
            Some(host) => match request.url.strip_prefix(&format!("https://{host}/")) {
                Some(rest) => format!("http://{host}/{rest}"),
                None => {
                    anyhow::bail!("refused by the gateway: a wire client asks only its media host")
                }
            },
        };
        let method = reqwest::Method::from_bytes(request.method.as_bytes())?;
        let mut builder = self.client.request(method, &url);
        for (k, v) in &request.headers {
            builder = builder.header(k, v);
        }
        if let Some(body) = streamed {
            builder = builder.body(body);
        } else if let Some(body) = request.body {
            builder = builder.body(body);
        }
        Ok(builder.send().await?)
    }
}

/// How much of an upload body is read at a time.
const UPLOAD_CHUNK: usize = 64 * 1024;

/// Chunks of an upload body on their way from the crate's blocking reader
/// to the request on the runtime: a few, so the file is never in memory.
const UPLOAD_CHUNKS_IN_FLIGHT: usize = 4;

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

    /// Uploads stream the same way, in the other direction.
    fn supports_upload_streaming(&self) -> bool {
        tokio::runtime::Handle::try_current().is_ok()
    }

    /// Called by the crate on a blocking thread with a reader over the
    /// encrypted file: the request goes out on the runtime with the exact
    /// `Content-Length` (WhatsApp's media hosts take no chunked uploads),
    /// its body fed from the reader a chunk at a time, so the upload never
    /// holds the file in memory.
    fn execute_upload(
        &self,
        request: HttpRequest,
        mut body: UploadBody,
        content_length: u64,
    ) -> anyhow::Result<HttpResponse> {
        let handle = tokio::runtime::Handle::try_current()?;
        let (chunks, rx) =
            tokio::sync::mpsc::channel::<std::io::Result<bytes::Bytes>>(UPLOAD_CHUNKS_IN_FLIGHT);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        let mut request = request;
        request.body = None;
        request
            .headers
            .insert("Content-Length".into(), content_length.to_string());
        let this = self.clone();
        let sending = handle.spawn(async move {
            let response = this
                .send_with(request, Some(reqwest::Body::wrap_stream(stream)))
                .await?;
            let status_code = response.status().as_u16();
            let body = response.bytes().await?.to_vec();
            anyhow::Ok(HttpResponse { status_code, body })
        });
        let mut buf = vec![0u8; UPLOAD_CHUNK];
        loop {
            let chunk = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => Ok(bytes::Bytes::copy_from_slice(&buf[..n])),
                Err(e) => Err(e),
            };
            let failed = chunk.is_err();
            // A closed channel: the request ended early; its answer says why.
            if chunks.blocking_send(chunk).is_err() || failed {
                break;
            }
        }
        drop(chunks);
        handle.block_on(sending)?
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
        let http = ReqwestHttp::local(Duration::from_secs(5)).unwrap();
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

    /// Takes one request and answers 200 with `{}`; its head and body.
    async fn capture_one() -> (String, tokio::task::JoinHandle<(String, Vec<u8>)>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mms/document/abc", listener.local_addr().unwrap());
        let taken = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 64 * 1024];
            let head_end = loop {
                let n = conn.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
                if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                    break i + 4;
                }
            };
            let head = String::from_utf8_lossy(&got[..head_end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|v| v.trim().parse().ok())
                .expect("a content-length");
            let mut body = got[head_end..].to_vec();
            while body.len() < length {
                let n = conn.read(&mut buf).await.unwrap();
                assert!(n > 0, "the body ended early");
                body.extend_from_slice(&buf[..n]);
            }
            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
            conn.write_all(answer.as_bytes()).await.unwrap();
            (head, body)
        });
        (url, taken)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_upload_is_fed_from_the_crates_reader_with_its_exact_length_not_chunked() {
        let (url, taken) = capture_one().await;
        let http = ReqwestHttp::local(Duration::from_secs(5)).unwrap();
        assert!(http.supports_upload_streaming());
        let body: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
        let sent = body.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let request = HttpRequest {
                url,
                method: "POST".into(),
                headers: Default::default(),
                body: None,
            };
            let len = sent.len() as u64;
            http.execute_upload(request, Box::new(std::io::Cursor::new(sent)), len)
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!((answer.status_code, answer.body), (200, b"{}".to_vec()));
        let (head, got) = taken.await.unwrap();
        assert!(!head.contains("transfer-encoding"), "{head}");
        assert!(head.contains("content-length: 1000000"), "{head}");
        assert_eq!(got, body);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streamed_answer_is_read_whole_from_a_blocking_thread_as_it_arrives() {
        let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let url = serve_in_pieces("200 OK", body.clone()).await;
        let (status, read) = read_streaming(url).await;
        assert_eq!(status, 200);
        assert_eq!(read, body);
    }

    #[test]
    fn only_urls_of_the_shape_whatsapp_uses_are_asked() {
        for ok in [
            "https://mmg.whatsapp.net/v/t62.7118-24/1_2_n.enc?ccb=11-4&oh=01&oe=6&_nc_sid=5e03e0&mms3=true&auth=A&token=T",
            "https://mmg-fallback.whatsapp.net/d/f/enc?auth=A",
            "https://media-ams4-1.cdn.whatsapp.net/v/t62/x.enc",
            "https://scontent.xx.fbcdn.net/v/t61/x.jpg",
            "https://web.whatsapp.com/sw.js",
            "https://MMG.WhatsApp.NET:443/x",
        ] {
            assert_eq!(check_whatsapp_url(ok), Ok(()), "{ok}");
        }
        // What a hostile direct_path joined to a media host gives, and
        // other places a request must not go.
        for bad in [
            "https://mmg.whatsapp.net.evil.tld/x?auth=A",
            "https://mmg.whatsapp.net@10.0.0.5:8443/x?auth=A",
            "https://mmg.whatsapp.net:8443/x",
            "http://mmg.whatsapp.net/x",
            "https://evilwhatsapp.net/x",
            "https://whatsapp.net.evil.tld/x",
            "https://157.240.0.53/x",
            "https://[2a03:2880::1]/x",
            "https://localhost/x",
        ] {
            let why = check_whatsapp_url(bad).expect_err(bad);
            assert!(
                !why.contains("auth=A"),
                "the refusal hides the query: {why}"
            );
        }
    }

    #[tokio::test]
    async fn a_request_off_whatsapps_hosts_is_refused_before_it_is_made() {
        // A listener on loopback behind a name: reached only if asked.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let http = ReqwestHttp::via(Duration::from_secs(5), None).unwrap();
        for url in [
            format!("https://127.0.0.1:{port}/x"),
            format!("https://mmg.whatsapp.net@127.0.0.1:{port}/x?auth=secret"),
            format!("https://localhost:{port}/x"),
        ] {
            let e = http
                .execute(HttpRequest::get(url.clone()))
                .await
                .expect_err(&url);
            assert!(e.to_string().contains("refused by the gateway"), "{e}");
            assert!(!e.to_string().contains("secret"), "{e}");
        }
        let nothing = tokio::time::timeout(Duration::ZERO, listener.accept()).await;
        assert!(nothing.is_err(), "the listener was reached");
    }

    #[tokio::test]
    async fn a_streamed_refusal_keeps_its_status_for_the_crate_to_judge() {
        let url = serve_in_pieces("404 Not Found", b"gone".to_vec()).await;
        assert_eq!(read_streaming(url).await, (404, b"gone".to_vec()));
    }
}
