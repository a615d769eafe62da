//! A gateway assembled by the composition root (`switchboard::compose`), the
//! same wiring `serve` uses, but served by the test: for tests that need the
//! router itself (the routes it really serves) or that start and stop the
//! background workers by hand (readiness).

use switchboard::Config;
use switchboard::api::openapi::inventory::{RouteEntry, routes_of};
use switchboard::compose::{self, Gateway};
use tempfile::TempDir;

use crate::TOKEN;

/// An assembled gateway on a fresh data directory; its scheduler's worker
/// is not started (see [`Gateway::start_workers`]).
pub struct Assembled {
    /// The gateway's parts.
    pub gateway: Gateway,
    _dir: TempDir,
}

impl Assembled {
    /// Assembles a gateway; the simulated network only when `sim_enabled`.
    pub async fn new(sim_enabled: bool) -> Assembled {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut config = Config::new(dir.path());
        config.api_token = Some(TOKEN.into());
        config.sim_enabled = sim_enabled;
        if !sim_enabled {
            // Without the sim, new sessions default to the build's real network.
            config.network = switchboard::config::DEFAULT_NETWORK.into();
        }
        let gateway = compose::assemble(config)
            .await
            .expect("the gateway assembles");
        Assembled { gateway, _dir: dir }
    }

    /// Every method and path the router serves.
    pub fn routes(&self) -> Vec<RouteEntry> {
        routes_of(&self.gateway.router()).unwrap_or_else(|e| panic!("the router's routes: {e}"))
    }

    /// Serves the router on `127.0.0.1:0` until the gateway is dropped;
    /// returns `http://<addr>`.
    pub async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let addr = listener.local_addr().expect("an address");
        let app = self.gateway.router();
        let stop = self.gateway.http_stop();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        format!("http://{addr}")
    }
}
