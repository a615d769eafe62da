//! A customer: a second real whatsapp-rust client, linked to its own
//! account on the wire server, that writes to the gateway's account and
//! reads what it answers. Its device state is in memory; its HTTP client
//! reaches the wire's media host over plain HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use whatsapp_rust::bot::Bot;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::transport::TokioWebSocketTransportFactory;
use whatsapp_rust::types::events::{Event, EventHandler};
use whatsapp_rust::wacore::store::in_memory::InMemoryBackend;
use whatsapp_rust::{Client, TokioRuntime};

use crate::WireServer;

/// Prints the warnings of whatsapp-rust's clients (the gateway's and the
/// customers') with the output of the test that made them, so a failing
/// test says what the crate complained of. Installed once per process.
pub fn print_client_warnings() {
    struct Warnings;
    impl log::Log for Warnings {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            m.level() <= log::Level::Warn
        }
        fn log(&self, r: &log::Record<'_>) {
            if self.enabled(r.metadata()) {
                eprintln!("[{} {}] {}", r.level(), r.target(), r.args());
            }
        }
        fn flush(&self) {}
    }
    static WARNINGS: Warnings = Warnings;
    if log::set_logger(&WARNINGS).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}

/// The Web version every client of the wire announces (none is fetched).
pub const VERSION: (u32, u32, u32) = (2, 3000, 1_023_456_789);

/// A linked, logged-in customer client.
pub struct Customer {
    /// Its phone number.
    pub phone: String,
    /// The crate client.
    pub client: Arc<Client>,
    events: Arc<Events>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Customer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every event the client raised, in order.
#[derive(Default)]
pub struct Events {
    all: Mutex<Vec<Arc<Event>>>,
    changed: tokio::sync::Notify,
}

impl EventHandler for Events {
    fn handle_event(&self, event: Arc<Event>) {
        self.all
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event);
        self.changed.notify_waiters();
    }
}

impl Events {
    /// Waits for an event `f` picks, returning what it picked.
    pub async fn wait<T>(
        &self,
        timeout: Duration,
        f: impl Fn(&Event) -> Option<T>,
    ) -> anyhow::Result<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            if let Some(t) = self
                .all
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find_map(|e| f(e))
            {
                return Ok(t);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                bail!("no such event within {timeout:?}");
            }
        }
    }

    /// How many events `f` picks.
    pub fn count(&self, f: impl Fn(&Event) -> bool) -> usize {
        self.all
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|e| f(e))
            .count()
    }
}

/// The HTTP client of a wire client: asks over plain HTTP what the crate
/// asks over HTTPS, and only of the wire's media host.
pub struct WireHttp {
    client: reqwest::Client,
    media_host: String,
}

impl WireHttp {
    /// A client for the wire's media host.
    pub fn new(media_host: String) -> Self {
        // The workspace builds reqwest without a crypto provider of its own
        // (the gateway installs ring at start): install ring, or keep the
        // one installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            client: reqwest::Client::new(),
            media_host,
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for WireHttp {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let prefix = format!("https://{}/", self.media_host);
        let Some(rest) = request.url.strip_prefix(&prefix) else {
            bail!(
                "the wire's clients reach only its media host, not {}",
                request.url
            );
        };
        let url = format!("http://{}/{rest}", self.media_host);
        let method = reqwest::Method::from_bytes(request.method.as_bytes())?;
        let mut b = self.client.request(method, url);
        for (k, v) in &request.headers {
            b = b.header(k, v);
        }
        if let Some(body) = request.body {
            b = b.body(body);
        }
        let response = b.send().await?;
        let status_code = response.status().as_u16();
        Ok(HttpResponse {
            status_code,
            body: response.bytes().await?.to_vec(),
        })
    }
}

impl Customer {
    /// Creates the account `phone` on the wire, links a fresh client to it
    /// by QR code and waits until it is logged in.
    pub async fn link(wire: &WireServer, phone: &str, name: &str) -> anyhow::Result<Self> {
        print_client_warnings();
        wire.account(phone, name);
        let events = Arc::new(Events::default());
        let handler = Forward(events.clone());
        let transport = TokioWebSocketTransportFactory::new()
            .with_url(wire.ws_url())
            .without_origin();
        let bot = Bot::builder()
            .with_backend_arc(Arc::new(InMemoryBackend::new()))
            .with_transport_factory(transport)
            .with_http_client(WireHttp::new(wire.media_host()))
            .with_runtime(TokioRuntime)
            .with_event_handler(handler)
            .with_version(VERSION)
            .with_push_name(name)
            .skip_history_sync()
            .build()
            .await
            .map_err(|e| anyhow!("building the customer's client: {e}"))?;
        let client = bot.client();
        let task = bot.spawn();
        let task = tokio::spawn(async move {
            let _ = task.await;
        });
        let qr = events
            .wait(Duration::from_secs(30), |e| match e {
                Event::PairingQrCode(q) => Some(q.code.clone()),
                _ => None,
            })
            .await
            .context("the customer's client showed no QR code")?;
        wire.scan(phone, &qr)?;
        events
            .wait(Duration::from_secs(60), |e| {
                matches!(e, Event::Connected(_)).then_some(())
            })
            .await
            .context("the customer's client did not log in after linking")?;
        Ok(Self {
            phone: phone.to_owned(),
            client,
            events,
            task,
        })
    }

    /// The events the client raised.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Sends a text to a phone number; the message id.
    pub async fn send_text(&self, to_phone: &str, text: &str) -> anyhow::Result<String> {
        let jid: whatsapp_rust::Jid = format!("{to_phone}@s.whatsapp.net").parse()?;
        let sent = self
            .client
            .send_text(jid, text)
            .await
            .map_err(|e| anyhow!("the customer's send failed: {e}"))?;
        Ok(sent.message_id)
    }

    /// Sends a built message to a phone number; the message id.
    pub async fn send_message(
        &self,
        to_phone: &str,
        message: whatsapp_rust::waproto::whatsapp::Message,
    ) -> anyhow::Result<String> {
        let jid: whatsapp_rust::Jid = format!("{to_phone}@s.whatsapp.net").parse()?;
        let sent = self
            .client
            .send_message(jid, message)
            .await
            .map_err(|e| anyhow!("the customer's send failed: {e}"))?;
        Ok(sent.message_id)
    }

    /// Waits for a message from `from_phone` whose text `f` accepts; its
    /// text and id.
    pub async fn wait_text(
        &self,
        from_phone: &str,
        f: impl Fn(&str) -> bool,
    ) -> anyhow::Result<(String, String)> {
        let from = from_phone.to_owned();
        self.events
            .wait(Duration::from_secs(60), |e| {
                let Event::Messages(batch) = e else {
                    return None;
                };
                batch.messages.iter().find_map(|m| {
                    if m.info.source.sender.user != from {
                        return None;
                    }
                    let text = text_of(&m.message)?;
                    f(&text).then(|| (text, m.info.id.to_string()))
                })
            })
            .await
    }
}

/// A message's text, whichever field holds it.
pub fn text_of(m: &whatsapp_rust::waproto::whatsapp::Message) -> Option<String> {
    if let Some(t) = &m.conversation {
        return Some(t.clone());
    }
    m.extended_text_message
        .as_option()
        .and_then(|e| e.text.clone())
}

/// Hands the crate's events to the customer's log.
struct Forward(Arc<Events>);

impl EventHandler for Forward {
    fn handle_event(&self, event: Arc<Event>) {
        self.0.handle_event(event);
    }
}
