//! Configuration: command-line flags, each with an environment variable of the
//! same meaning, and defaults that work on a laptop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::network::sim::SimConfig;

/// Everything the server needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Directory of the database and the generated token.
    pub data_dir: PathBuf,
    /// The API token; read from or generated into the data directory when unset.
    pub api_token: Option<String>,
    /// Default network of new sessions.
    pub network: String,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Whether the simulated network (and its control API) is available.
    pub sim_enabled: bool,
    /// Knobs of the simulated network.
    pub sim: SimConfig,
}

impl Config {
    /// Defaults with the given data directory (used by tests and embedders).
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 3451)),
            data_dir: data_dir.into(),
            api_token: None,
            network: "sim".into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sim_enabled: true,
            sim: SimConfig::default(),
        }
    }
}

/// Default request body limit: 144 MiB, room for the largest media (a 100 MiB
/// document) as base64 inside JSON.
pub const DEFAULT_MAX_BODY_BYTES: usize = 144 * 1024 * 1024;

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line.
    Json,
}

/// Flags of `switchboard serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SWITCHBOARD_LISTEN", default_value = "127.0.0.1:3451")]
    pub listen: SocketAddr,
    /// Directory of the database and the generated API token.
    #[arg(long, env = "SWITCHBOARD_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Bearer token for /api/v1; when unset one is generated on first start and
    /// kept in <data-dir>/api-token (readable by the owner only).
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,
    /// Default network of new sessions.
    #[arg(long, env = "SWITCHBOARD_NETWORK", default_value = "sim")]
    pub network: String,
    /// Log filter: a level (`info`, `debug`) or a tracing directive list.
    #[arg(long, env = "SWITCHBOARD_LOG", default_value = "info")]
    pub log_level: String,
    /// Log format.
    #[arg(
        long,
        env = "SWITCHBOARD_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub log_format: LogFormat,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "SWITCHBOARD_MAX_BODY_BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Enable the simulated network and its control API under /api/v1/sim.
    #[arg(long, env = "SWITCHBOARD_SIM", default_value_t = true, action = clap::ArgAction::Set)]
    pub sim: bool,
    /// Seed of the simulated network (ids, codes, derived phone numbers, fault rolls).
    #[arg(long, env = "SWITCHBOARD_SIM_SEED", default_value_t = 42)]
    pub sim_seed: u64,
    /// Pair sim sessions by themselves after --sim-pair-delay-ms; when false only
    /// POST /api/v1/sim/sessions/{id}/scan pairs them.
    #[arg(long, env = "SWITCHBOARD_SIM_AUTO_PAIR", default_value_t = true, action = clap::ArgAction::Set)]
    pub sim_auto_pair: bool,
    /// Delay before a sim session pairs by itself, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_SIM_PAIR_DELAY_MS", default_value_t = 3000)]
    pub sim_pair_delay_ms: u64,
    /// How often a sim session shows a new QR code, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_SIM_QR_INTERVAL_MS", default_value_t = 20_000)]
    pub sim_qr_interval_ms: u64,
}

impl ServeArgs {
    /// The server configuration these flags describe.
    pub fn config(&self) -> Config {
        Config {
            listen: self.listen,
            data_dir: self.data_dir.clone(),
            api_token: self.api_token.clone().filter(|t| !t.trim().is_empty()),
            network: self.network.clone(),
            max_body_bytes: self.max_body_bytes,
            sim_enabled: self.sim,
            sim: SimConfig {
                seed: self.sim_seed,
                auto_pair: self.sim_auto_pair,
                pair_delay: Duration::from_millis(self.sim_pair_delay_ms),
                qr_interval: Duration::from_millis(self.sim_qr_interval_ms.max(1)),
            },
        }
    }
}
