//! Building and starting one crate client for a session: our redb backend,
//! the websocket transport (URL from the config), a reqwest HTTP client, the
//! session's stored skip-history-sync preference, the durability hook
//! ([`super::inbound`]), and the crate's reconnect loop switched off (the
//! gateway's policy reconnects; the pump turns it on for the login after
//! pairing). Transport and HTTP failures while connecting are recorded so a
//! failed connect can say why.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use whatsapp_rust::bot::Bot;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::transport::TokioWebSocketTransportFactory;
use whatsapp_rust::wacore::net::{
    StreamingHttpResponse, Transport, TransportEvent, TransportFactory, UploadBody,
};
use whatsapp_rust::{NodeFilter, TokioRuntime};

use super::http::ReqwestHttp;
use super::inbound::InboundHook;
use super::lane::Item;
use super::off_thread::with_store;
use super::proxy_transport::ProxiedTransport;
use super::pump::{self, Forward};
use super::session::{Inner, Run, RunState};
use crate::NetworkError;
use crate::store::whatsapp::WaStore;
use switchboard_domain::proxy::{Proxy, ProxyChoice, StoredProxy};
use whatsapp_rust::wacore::net::WHATSAPP_WEB_WS_URL;

/// Timeout of each HTTP request the crate makes (version check, media).
const HTTP_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds a client for the session and starts it; its events flow through
/// the session's lane to its pump.
pub(super) async fn start(inner: &Arc<Inner>) -> Result<Arc<Run>, NetworkError> {
    let record = with_store(&inner.store, &inner.id, |s, id| s.get_session(id))
        .await
        .ok()
        .flatten();
    let skip_history = record.as_ref().is_some_and(|r| r.skip_history_sync);
    let proxy = proxy_of(inner, record.as_ref().and_then(|r| r.proxy.as_ref()))?;
    let state = Arc::new(RunState::default());
    let backend = Arc::new(WaStore::new(inner.store.clone(), &inner.id));
    let versions = backend.versions_written();
    let transport: Box<dyn TransportFactory> = match &proxy {
        None => {
            let mut factory = TokioWebSocketTransportFactory::new();
            if let Some(url) = &inner.config.ws_url {
                factory = factory.with_url(url.clone()).without_origin();
            }
            Box::new(factory)
        }
        Some(proxy) => Box::new(ProxiedTransport {
            url: inner
                .config
                .ws_url
                .clone()
                .unwrap_or_else(|| WHATSAPP_WEB_WS_URL.to_owned()),
            origin: inner.config.ws_url.is_none(),
            proxy: proxy.clone(),
        }),
    };
    let http = match &inner.config.wire_media_host {
        None => ReqwestHttp::via(HTTP_TIMEOUT, proxy.as_ref()),
        Some(host) => wire_http(host, proxy.as_ref()),
    }
    .map_err(|e| NetworkError::Failed(format!("could not build the HTTP client: {e}")))?;
    let reconnect = Arc::new(OnceLock::new());
    let rate_limit = Arc::new(std::sync::Mutex::new(None));
    let run_of_events: Arc<OnceLock<Weak<Run>>> = Arc::new(OnceLock::new());
    let forward = Forward {
        state: state.clone(),
        lane: inner.lane.clone(),
        run: run_of_events.clone(),
        reconnect: reconnect.clone(),
        rate_limit: rate_limit.clone(),
    };
    let mut builder = Bot::builder()
        .with_backend_arc(backend)
        .with_transport_factory(Recording {
            inner: transport,
            state: state.clone(),
        })
        .with_http_client(Recording {
            inner: http,
            state: state.clone(),
        })
        .with_runtime(TokioRuntime)
        .with_event_handler(forward)
        .with_inbound_durability_hook(InboundHook::new(inner));
    if skip_history {
        builder = builder.skip_history_sync();
    }
    if let Some(version) = inner.config.version {
        builder = builder.with_version(version);
    }
    let bot = builder
        .build()
        .await
        .map_err(|e| NetworkError::Failed(format!("could not build the WhatsApp client: {e}")))?;
    let client = bot.client();
    client.enable_auto_reconnect.store(false, Ordering::SeqCst);
    let _ = reconnect.set(client.enable_auto_reconnect.clone());
    *rate_limit.lock().unwrap_or_else(|p| p.into_inner()) =
        Some(client.wait_for_node(NodeFilter::tag("stream:error").attr("code", "429")));
    let run = Arc::new(Run {
        client,
        state,
        versions,
    });
    // Weakly: the client holds the handler, and the run holds the client.
    let _ = run_of_events.set(Arc::downgrade(&run));
    let handle = bot.spawn();
    let (inner, ended) = (inner.clone(), run.clone());
    tokio::spawn(async move {
        handle.await;
        pump::wound_down(&inner, &ended.state).await;
        inner.lane.send(Item::Ended(ended));
    });
    Ok(run)
}

/// The proxy this run connects through: the session's own choice when it
/// made one (its credentials unsealed), the gateway's default otherwise.
fn proxy_of(inner: &Inner, stored: Option<&StoredProxy>) -> Result<Option<Proxy>, NetworkError> {
    let Some(stored) = stored else {
        return Ok(inner.config.proxy.clone());
    };
    match inner.store.open_proxy(stored) {
        Ok(ProxyChoice::Direct) => Ok(None),
        Ok(ProxyChoice::Via(proxy)) => Ok(Some(proxy)),
        Err(e) => Err(NetworkError::Failed(format!(
            "could not connect: the session's proxy cannot be used: {e}"
        ))),
    }
}

/// The HTTP client of a client of the wire server (test builds).
#[cfg(feature = "wire")]
fn wire_http(host: &str, proxy: Option<&Proxy>) -> anyhow::Result<ReqwestHttp> {
    ReqwestHttp::wire(HTTP_TIMEOUT, host, proxy)
}

/// A build without the `wire` feature talks to WhatsApp only.
#[cfg(not(feature = "wire"))]
fn wire_http(_host: &str, _proxy: Option<&Proxy>) -> anyhow::Result<ReqwestHttp> {
    anyhow::bail!("a wire media host is accepted by test builds only")
}

/// Wraps the transport factory or HTTP client and records its failures.
struct Recording<T> {
    inner: T,
    state: Arc<RunState>,
}

#[async_trait]
impl<T: TransportFactory + ?Sized + 'static> TransportFactory for Recording<Box<T>> {
    async fn create_transport(
        &self,
    ) -> anyhow::Result<(
        Arc<dyn Transport>,
        whatsapp_rust::async_channel::Receiver<TransportEvent>,
    )> {
        self.inner.create_transport().await.inspect_err(|e| {
            self.state.fail(format!("{e:#}"));
        })
    }
}

#[async_trait]
impl<T: HttpClient + 'static> HttpClient for Recording<T> {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let url = request.url.clone();
        self.inner.execute(request).await.inspect_err(|e| {
            // Only a failure while connecting (the version check) explains
            // a failed connect; a media transfer's failure is its send's.
            if !self.state.socket_up.load(Ordering::SeqCst) {
                self.state
                    .fail(format!("HTTP request to {url} failed: {e:#}"));
            }
        })
    }

    // The rest is the wrapped client's as it is: without these the crate
    // would see a client that cannot stream, and read every download whole
    // into memory.
    fn supports_streaming(&self) -> bool {
        self.inner.supports_streaming()
    }

    fn execute_streaming(&self, request: HttpRequest) -> anyhow::Result<StreamingHttpResponse> {
        self.inner.execute_streaming(request)
    }

    fn supports_upload_streaming(&self) -> bool {
        self.inner.supports_upload_streaming()
    }

    fn execute_upload(
        &self,
        request: HttpRequest,
        body: UploadBody,
        content_length: u64,
    ) -> anyhow::Result<HttpResponse> {
        self.inner.execute_upload(request, body, content_length)
    }

    fn resource_report(&self) -> Option<whatsapp_rust::wacore::stats::HttpResourceReport> {
        self.inner.resource_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_recording_http_client_streams_downloads_and_uploads_as_the_client_it_wraps_does() {
        let http = ReqwestHttp::via(HTTP_TIMEOUT, None).expect("an HTTP client");
        let wraps = http.supports_streaming();
        let recording = Recording {
            inner: http,
            state: Arc::new(RunState::default()),
        };
        assert!(wraps, "the gateway's client streams downloads on a runtime");
        assert_eq!(recording.supports_streaming(), wraps);
        assert!(
            recording.supports_upload_streaming(),
            "and uploads, through the wrapper"
        );
    }
}
