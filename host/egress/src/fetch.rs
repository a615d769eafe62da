//! [`Fetcher`]: the bounded GET of a media URL a send names. It connects
//! through the guarded connector (pinned, checked addresses), follows no
//! redirect (a 3xx is a failure: each hop would be a new destination the
//! caller chose), bounds the whole exchange by one timeout, and reads the
//! answer as it arrives, never holding more than the caller's limit: a
//! declared `Content-Length` over it is refused before the body, a body
//! that grows past it is cut off there. Everything that reached no answer
//! (no address, refused, filtered, timed out, TLS, a broken transfer)
//! fails with one wording, so the error does not map the network behind
//! the URL.

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, USER_AGENT};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::connector::{Connector, connector};
use crate::guard::{Blocked, Guard};

/// The `User-Agent` of every fetch.
const AGENT: &str = concat!("Switchboard/", env!("CARGO_PKG_VERSION"));

/// Why a fetch gave no media.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL is not one the gateway fetches (scheme, host, credentials).
    #[error("the media URL {0}")]
    Invalid(String),
    /// It leads to an internal address the rule does not allow.
    #[error("the media URL {0}")]
    Blocked(Blocked),
    /// Nothing answered in time: no address, refused, filtered, timed out,
    /// TLS, or the transfer broke off (one wording for all of them).
    #[error("could not fetch the media URL")]
    Unreachable,
    /// It answered, but not with the media.
    #[error("could not fetch the media URL: it answered {}{}", .0, redirect_note(*.0))]
    Status(StatusCode),
    /// The answer is larger than the limit.
    #[error("the media at the URL is larger than {}, the limit for its kind", size(*.limit))]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// What a 3xx answer's refusal adds.
fn redirect_note(status: StatusCode) -> &'static str {
    if status.is_redirection() {
        " (redirects are not followed)"
    } else {
        ""
    }
}

/// A byte count as the limits are written (`16 MiB`, `512 bytes`).
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// A client fetching media URLs under one guard and one time bound.
#[derive(Clone)]
pub struct Fetcher {
    client: Client<Connector, Empty<Bytes>>,
    timeout: Duration,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    /// A fetcher connecting only where `guard` allows, each fetch given at
    /// most `timeout` in all.
    pub fn new(guard: Guard, timeout: Duration) -> Result<Self, FetchError> {
        let connector = connector(guard, timeout).map_err(|e| {
            tracing::error!(error = %e, "the media URL client could not be built");
            FetchError::Unreachable
        })?;
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(connector);
        Ok(Self { client, timeout })
    }

    /// The bytes at `url`, at most `limit` of them, within the timeout.
    pub async fn get(&self, url: &str, limit: usize) -> Result<Vec<u8>, FetchError> {
        let uri = parse(url)?;
        tokio::time::timeout(self.timeout, self.exchange(uri, limit))
            .await
            .unwrap_or(Err(FetchError::Unreachable))
    }

    async fn exchange(&self, uri: Uri, limit: usize) -> Result<Vec<u8>, FetchError> {
        let request = Request::get(uri)
            .header(USER_AGENT, AGENT)
            .body(Empty::new())
            .map_err(|e| FetchError::Invalid(format!("is not a valid URL: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| match Blocked::find(&e) {
                Some(blocked) => FetchError::Blocked(blocked.clone()),
                None => {
                    tracing::debug!(error = ?e, "a media URL could not be fetched");
                    FetchError::Unreachable
                }
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::Status(status));
        }
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(FetchError::TooLarge { limit });
        }
        let mut bytes = Vec::with_capacity(declared.map_or(0, |n| n as usize));
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                tracing::debug!(error = ?e, "a media URL's answer broke off");
                FetchError::Unreachable
            })?;
            if let Ok(chunk) = frame.into_data() {
                if bytes.len() + chunk.len() > limit {
                    return Err(FetchError::TooLarge { limit });
                }
                bytes.extend_from_slice(&chunk);
            }
        }
        Ok(bytes)
    }
}

/// An absolute `http` or `https` URL with a host and no credentials, as
/// the request's URI.
fn parse(raw: &str) -> Result<Uri, FetchError> {
    let url = url::Url::parse(raw.trim())
        .map_err(|e| FetchError::Invalid(format!("is not a valid URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Invalid(format!(
            "must use http or https, not `{}`",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::Invalid("needs a host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::Invalid(
            "carries credentials (`user@host`), which the gateway does not send".into(),
        ));
    }
    let mut url = url;
    url.set_fragment(None);
    url.as_str()
        .parse()
        .map_err(|e| FetchError::Invalid(format!("is not a valid URL: {e}")))
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, SocketAddr};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::hosts::StaticHosts;

    const OPENER: &str = "set MEDIA_URL_ALLOW_PRIVATE=true to allow them";

    /// A listener on 127.0.0.1 that counts the connections it accepts and
    /// answers each request with `answer` (never, when `None`).
    struct Listener {
        addr: SocketAddr,
        reached: Arc<AtomicUsize>,
    }

    impl Listener {
        async fn start(answer: Option<Vec<u8>>) -> Listener {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let reached = Arc::new(AtomicUsize::new(0));
            let count = reached.clone();
            tokio::spawn(async move {
                while let Ok((mut socket, _)) = listener.accept().await {
                    count.fetch_add(1, Ordering::SeqCst);
                    let answer = answer.clone();
                    tokio::spawn(async move {
                        let mut request = Vec::new();
                        let mut buf = [0u8; 1024];
                        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                            match socket.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => request.extend_from_slice(&buf[..n]),
                            }
                        }
                        match answer {
                            Some(answer) => {
                                let _ = socket.write_all(&answer).await;
                                let _ = socket.shutdown().await;
                            }
                            None => std::future::pending::<()>().await,
                        }
                    });
                }
            });
            Listener { addr, reached }
        }

        fn reached(&self) -> usize {
            self.reached.load(Ordering::SeqCst)
        }

        fn url(&self) -> String {
            format!("http://{}/media", self.addr)
        }
    }

    fn ok(body: &[u8]) -> Option<Vec<u8>> {
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        answer.extend_from_slice(body);
        Some(answer)
    }

    fn fetcher(allow_private: bool, hosts: Option<StaticHosts>) -> Fetcher {
        Fetcher::new(
            Guard::new(allow_private, OPENER).with_hosts(hosts),
            Duration::from_secs(5),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_loopback_literal_is_refused_without_a_request_unless_private_addresses_are_allowed()
    {
        let listener = Listener::start(ok(b"media")).await;
        let e = fetcher(false, None)
            .get(&listener.url(), 1024)
            .await
            .unwrap_err();
        assert!(matches!(e, FetchError::Blocked(_)), "{e:?}");
        assert!(e.to_string().contains("MEDIA_URL_ALLOW_PRIVATE"), "{e}");
        assert_eq!(listener.reached(), 0, "the listener was reached");

        let bytes = fetcher(true, None)
            .get(&listener.url(), 1024)
            .await
            .unwrap();
        assert_eq!(bytes, b"media");
        assert_eq!(listener.reached(), 1);
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_and_the_allow_private_knob_opens_it() {
        let listener = Listener::start(ok(b"inside")).await;
        let hosts = StaticHosts::new();
        hosts.set("media.example.com", [IpAddr::from([127, 0, 0, 1])]);
        let url = format!("http://media.example.com:{}/a.jpg", listener.addr.port());

        let e = fetcher(false, Some(hosts.clone()))
            .get(&url, 1024)
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("resolves only to internal addresses (127.0.0.1)"),
            "{e}"
        );
        assert_eq!(listener.reached(), 0, "the listener was reached");

        let bytes = fetcher(true, Some(hosts)).get(&url, 1024).await.unwrap();
        assert_eq!(bytes, b"inside");
    }

    #[tokio::test]
    async fn a_redirect_is_not_followed_even_to_an_address_that_is_allowed() {
        let inside = Listener::start(ok(b"secret")).await;
        let redirect = format!(
            "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            inside.url()
        );
        let outside = Listener::start(Some(redirect.into_bytes())).await;
        let e = fetcher(true, None)
            .get(&outside.url(), 1024)
            .await
            .unwrap_err();
        assert_eq!(e, FetchError::Status(StatusCode::FOUND));
        assert!(e.to_string().contains("redirects are not followed"), "{e}");
        assert_eq!(outside.reached(), 1);
        assert_eq!(inside.reached(), 0, "the redirect was followed");
    }

    #[tokio::test]
    async fn an_answer_over_the_limit_is_refused_declared_or_not() {
        let declared = Listener::start(Some(
            b"HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n".to_vec(),
        ))
        .await;
        let e = fetcher(true, None)
            .get(&declared.url(), 1024)
            .await
            .unwrap_err();
        assert_eq!(e, FetchError::TooLarge { limit: 1024 });

        let mut undeclared = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
        undeclared.extend(vec![7u8; 4096]);
        let undeclared = Listener::start(Some(undeclared)).await;
        let e = fetcher(true, None)
            .get(&undeclared.url(), 1024)
            .await
            .unwrap_err();
        assert_eq!(e, FetchError::TooLarge { limit: 1024 });
        assert!(e.to_string().contains("larger than 1024 bytes"), "{e}");

        let exact = Listener::start(ok(&[1u8; 1024])).await;
        assert_eq!(
            fetcher(true, None)
                .get(&exact.url(), 1024)
                .await
                .unwrap()
                .len(),
            1024,
            "an answer of exactly the limit is taken"
        );
    }

    #[tokio::test]
    async fn a_closed_port_and_a_silent_listener_fail_with_the_same_words() {
        let closed = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap()
        };
        let silent = Listener::start(None).await;
        let quick = Fetcher::new(Guard::new(true, OPENER), Duration::from_millis(300)).unwrap();
        let refused = quick
            .get(&format!("http://{closed}/media"), 1024)
            .await
            .unwrap_err();
        let timed_out = quick.get(&silent.url(), 1024).await.unwrap_err();
        assert_eq!(
            silent.reached(),
            1,
            "the silent listener took the connection"
        );
        assert_eq!(refused, FetchError::Unreachable);
        assert_eq!(refused.to_string(), timed_out.to_string());
        assert_eq!(refused.to_string(), "could not fetch the media URL");
    }

    #[test]
    fn only_http_and_https_urls_without_credentials_are_fetched() {
        assert!(parse("https://example.com/a.jpg").is_ok());
        assert!(parse("http://93.184.216.34:8080/a.jpg#frag").is_ok());
        for bad in [
            "ftp://example.com/a.jpg",
            "file:///etc/passwd",
            "https://user:pw@example.com/a.jpg",
            "not a url",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
