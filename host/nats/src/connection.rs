//! Connecting to NATS with what the configuration gives (servers,
//! credentials file, token, user and password, TLS), retrying in the
//! background: the gateway starts, and its events wait in the outbox,
//! whether or not NATS is up yet.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::{ConnectOptions, Event, ServerAddr};
use prometheus_client::metrics::gauge::Gauge;

use crate::config::NatsConfig;

/// What the client's connection events tell, and the last problem the
/// broker met (cleared when the connection or a publish succeeds again).
#[derive(Debug)]
pub struct Link {
    /// Connected now.
    pub up: AtomicBool,
    /// `switchboard_nats_connected`, kept by the connection events.
    gauge: Gauge,
    last_error: std::sync::Mutex<Option<String>>,
}

impl Link {
    /// A link that keeps `gauge` at 1 while connected.
    pub fn new(gauge: Gauge) -> Self {
        Self {
            up: AtomicBool::new(false),
            gauge,
            last_error: std::sync::Mutex::new(None),
        }
    }

    /// Records the last problem.
    pub fn set_error(&self, error: String) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
    }

    /// Forgets the last problem: the broker works again.
    pub fn clear_error(&self) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
        self.gauge.set(i64::from(up));
    }

    /// The last problem the client reported, if any.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The server addresses of `config`, each checked.
pub fn servers(config: &NatsConfig) -> Result<Vec<ServerAddr>, String> {
    config
        .servers
        .iter()
        .map(|s| {
            s.parse::<ServerAddr>()
                .map_err(|e| format!("`{s}` is not a NATS server address: {e}"))
        })
        .collect()
}

/// A client for `config`; it connects (and reconnects) in the background,
/// reporting into `link`.
pub async fn connect(config: &NatsConfig, link: Arc<Link>) -> anyhow::Result<async_nats::Client> {
    // rustls picks the process's provider; this build has `ring` only.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let addrs = servers(config).map_err(anyhow::Error::msg)?;
    let mut options = ConnectOptions::new()
        .name("switchboard")
        .retry_on_initial_connect()
        .max_reconnects(None)
        .connection_timeout(Duration::from_secs(5))
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis(250u64.saturating_mul(attempts as u64).min(2_000))
        });
    if let Some(path) = &config.creds_file {
        options = options.credentials_file(path).await.map_err(|e| {
            anyhow::anyhow!(
                "could not read the NATS credentials file {}: {e}",
                path.display()
            )
        })?;
    }
    if let Some(token) = &config.token {
        options = options.token(token.clone());
    }
    if let Some(user) = &config.user {
        options =
            options.user_and_password(user.clone(), config.password.clone().unwrap_or_default());
    }
    if config.tls_required {
        options = options.require_tls(true);
    }
    if let Some(ca) = &config.tls_ca {
        options = options.add_root_certificates(ca.clone());
    }
    match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        (None, None) => {}
        _ => anyhow::bail!("--nats-tls-cert and --nats-tls-key go together"),
    }
    let events = link.clone();
    options = options.event_callback(move |event| {
        let link = events.clone();
        async move {
            match event {
                Event::Connected => {
                    link.set_up(true);
                    link.clear_error();
                    tracing::info!("connected to NATS");
                }
                Event::Disconnected => {
                    link.set_up(false);
                    link.set_error("disconnected from NATS; reconnecting".into());
                    tracing::warn!("disconnected from NATS; reconnecting");
                }
                Event::ServerError(e) => {
                    tracing::warn!(error = %e, "NATS server error");
                    link.set_error(e.to_string());
                }
                Event::ClientError(e) => {
                    tracing::warn!(error = %e, "NATS client error");
                    link.set_error(e.to_string());
                }
                other => tracing::debug!(event = %other, "NATS connection event"),
            }
        }
    });
    Ok(options.connect(addrs).await?)
}
