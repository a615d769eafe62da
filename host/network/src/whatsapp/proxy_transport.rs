//! The chat connection through a session's proxy: the crate's transport
//! factory dials WhatsApp itself, so a proxied session has its own. The
//! TCP stream comes through the proxy (the egress crate's SOCKS5 or
//! `CONNECT`), TLS goes over it with the crate's default connector for a
//! `wss` URL, then the websocket upgrade, with the `Origin` the crate's
//! factory sends; the socket is handed to the crate as its own factory
//! would hand it. A proxy that cannot be reached is the connect's error:
//! nothing falls back to a direct connection.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use switchboard_domain::proxy::Proxy;
use whatsapp_rust::transport::{Connector, default_tls_connector, from_websocket};
use whatsapp_rust::wacore::net::{
    Transport, TransportEvent, TransportFactory, WHATSAPP_WEB_ORIGIN,
};

/// How long reaching WhatsApp through the proxy may take (the proxy's
/// connect and handshake, and the proxy's own connection onward).
const PROXY_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// A transport factory whose sockets go through one proxy.
pub(super) struct ProxiedTransport {
    /// The chat server's websocket URL.
    pub url: String,
    /// Whether the upgrade names WhatsApp Web's origin (not for the tests'
    /// server, as the crate's factory is configured for it).
    pub origin: bool,
    /// The proxy, with its credentials.
    pub proxy: Proxy,
}

#[async_trait]
impl TransportFactory for ProxiedTransport {
    async fn create_transport(
        &self,
    ) -> anyhow::Result<(
        Arc<dyn Transport>,
        whatsapp_rust::async_channel::Receiver<TransportEvent>,
    )> {
        let uri: http::Uri = self
            .url
            .parse()
            .map_err(|e| anyhow::anyhow!("the chat URL {} is not valid: {e}", self.url))?;
        let tls = match uri.scheme_str() {
            Some("wss") => true,
            Some("ws") => false,
            _ => anyhow::bail!("the chat URL {} is not ws:// or wss://", self.url),
        };
        let host = uri
            .host()
            .ok_or_else(|| anyhow::anyhow!("the chat URL {} names no host", self.url))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let tcp =
            switchboard_egress::proxy::connect(&self.proxy, &host, port, PROXY_CONNECT_TIMEOUT)
                .await?;
        let connector = if tls {
            default_tls_connector()
        } else {
            Connector::Plain
        };
        let stream = connector.wrap(&host, tcp).await.map_err(|e| {
            anyhow::anyhow!("TLS through the proxy {} failed: {e}", self.proxy.address())
        })?;
        let mut builder = tokio_websockets::ClientBuilder::from_uri(uri);
        if self.origin {
            builder = builder
                .add_header(
                    http::header::ORIGIN,
                    http::HeaderValue::from_static(WHATSAPP_WEB_ORIGIN),
                )
                .map_err(|e| anyhow::anyhow!("could not set the Origin header: {e}"))?;
        }
        let (ws, _) = builder.connect_on(stream).await.map_err(|e| {
            anyhow::anyhow!(
                "the websocket through the proxy {} failed: {e}",
                self.proxy.address()
            )
        })?;
        Ok(from_websocket(ws))
    }
}
