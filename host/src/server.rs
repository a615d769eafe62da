//! Serving what the composition root assembled: the HTTP listener (and the
//! optional metrics listener), each connection within the configured
//! [`HttpLimits`], until asked to stop; then in-flight requests finish,
//! sessions close, the background work stops and the store closes.

use std::net::SocketAddr;

use anyhow::Context;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::compose::{self, Gateway};
use crate::config::Config;
use crate::events::EventBus;
use crate::http_server::{self, HttpLimits};
use crate::metrics::Metrics;
use crate::token::TokenSource;

/// A running gateway.
pub struct Running {
    addr: SocketAddr,
    server: JoinHandle<std::io::Result<()>>,
    metrics_server: Option<(SocketAddr, JoinHandle<std::io::Result<()>>)>,
    gateway: Gateway,
}

/// Assembles the gateway (see [`compose`]), starts its workers and serves
/// it; returns once it accepts connections.
pub async fn start(config: Config) -> anyhow::Result<Running> {
    let gateway = compose::assemble(config).await?;
    announce_token(gateway.api_token(), gateway.token_source());
    gateway.start_workers();
    let at = gateway.config().listen;
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("could not listen on {at}"))?;
    let addr = listener.local_addr()?;
    let http_stop = gateway.http_stop();
    let limits = gateway.config().http.clone();
    let server = tokio::spawn(http_server::serve(
        listener,
        gateway.router(),
        limits.clone(),
        http_stop.clone(),
    ));
    let metrics_server = match gateway.config().metrics_listen {
        Some(at) => Some(serve_metrics(at, gateway.metrics().clone(), limits, http_stop).await?),
        None => None,
    };
    tracing::info!(%addr, data_dir = %gateway.config().data_dir.display(), sessions = gateway.restored(), "switchboard listening");
    Ok(Running {
        addr,
        server,
        metrics_server,
        gateway,
    })
}

/// Serves `/metrics` alone, without a token, on its own address, within
/// the same limits as the main listener (its own connection cap).
async fn serve_metrics(
    at: SocketAddr,
    metrics: Metrics,
    limits: HttpLimits,
    stop: CancellationToken,
) -> anyhow::Result<(SocketAddr, JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("could not listen for metrics on {at}"))?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(http_server::serve(
        listener,
        api::metrics::standalone(metrics),
        limits,
        stop,
    ));
    tracing::info!(%addr, "metrics listening (no token)");
    Ok((addr, server))
}

fn announce_token(token: &str, source: &TokenSource) {
    match source {
        TokenSource::Generated(path) => {
            // Shown once, on the start that created it; later starts read the
            // file. On stderr, for the person at the terminal: the log stream
            // (stdout, maybe JSON for a shipper) never carries the token.
            eprintln!(
                "Generated an API token and saved it to {} (owner-only).\n  API token: {token}\n  Send it as `Authorization: Bearer <token>`; it is shown only this once.",
                path.display()
            );
            tracing::info!(file = %path.display(), "generated an API token into the data directory");
        }
        TokenSource::File(path) => {
            tracing::info!(file = %path.display(), "using the API token from the data directory")
        }
        TokenSource::Configured => tracing::info!("using the configured API token"),
    }
}

impl Running {
    /// The address the gateway listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The gateway being served (its parts, for tests that reach below
    /// the HTTP API).
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// `http://<addr>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address of the separate metrics listener, when configured.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_server.as_ref().map(|(addr, _)| *addr)
    }

    /// The API token in use.
    pub fn api_token(&self) -> &str {
        self.gateway.api_token()
    }

    /// The event bus (for embedders and tests that watch events in process).
    pub fn events(&self) -> &EventBus {
        &self.gateway.state().events
    }

    /// Stops accepting connections, lets in-flight requests finish, stops the
    /// background work, closes every session's connection and the store.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.gateway.http_stop().cancel();
        let served = self.server.await.context("the HTTP server task failed")?;
        if let Some((_, metrics)) = self.metrics_server {
            metrics
                .await
                .context("the metrics server task failed")?
                .context("the metrics server failed")?;
        }
        self.gateway.shutdown().await;
        tracing::info!("switchboard stopped");
        served.context("the HTTP server failed")
    }
}
