//! Configuration: command-line flags, each with an environment variable of the
//! same meaning, and defaults that work on a laptop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::blast::config::BlastConfig;
use crate::events::EventLogConfig;
use crate::messages::{PacingConfig, PacingMode};
use crate::network::sim::SimConfig;
use crate::network::whatsapp::{WhatsAppConfig, parse_version};
use crate::plugins::config::PluginConfig;
use crate::scheduler::config::ScheduleConfig;
use crate::sessions::ReconnectConfig;
use crate::webhooks::config::{SecsList, WebhookConfig, parse_secs, parse_secs_list};
use switchboard_egress::MediaUrlConfig;
use switchboard_nats::{NatsConfig, Storage};
use switchboard_runtime::integrations::IntegrationConfig;

use crate::http_server::{HttpLimits, MIN_HEADER_BYTES};
use crate::media_args::MediaArgs;
use crate::media_store::MediaStoreConfig;
use crate::runtime::media::MediaConfig;

/// Everything the server needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// A second address serving only `/metrics`, without a token.
    pub metrics_listen: Option<SocketAddr>,
    /// Directory of the database and the generated token.
    pub data_dir: PathBuf,
    /// How the store behaves when its storage fails: the reopen backoff and
    /// the free-space floor under which uploads and blasts are refused.
    pub storage: crate::store::StoreOptions,
    /// The API token; read from or generated into the data directory when unset.
    pub api_token: Option<String>,
    /// Default network of new sessions.
    pub network: String,
    /// Largest accepted request body, in bytes (uploads and plugin
    /// components have their own limits).
    pub max_body_bytes: usize,
    /// Largest plugin component upload, in bytes.
    pub max_plugin_bytes: usize,
    /// Where media bytes are kept.
    pub media_store: MediaStoreConfig,
    /// Inbound media, uploads and retention.
    pub media: MediaConfig,
    /// Whether the simulated network (and its control API) is available.
    pub sim_enabled: bool,
    /// Knobs of the simulated network.
    pub sim: SimConfig,
    /// Webhook delivery knobs.
    pub webhooks: WebhookConfig,
    /// How long recorded events are kept for event streams that resume.
    pub event_log: EventLogConfig,
    /// Auto-reconnect and account-lock timing.
    pub reconnect: ReconnectConfig,
    /// Scheduled-send knobs.
    pub schedule: ScheduleConfig,
    /// Blast worker knobs.
    pub blasts: BlastConfig,
    /// How long blasts and scheduled sends show typing before each send.
    pub typing_before_send: Duration,
    /// The window a token's `rate_per_minute` counts in.
    pub token_rate_window: Duration,
    /// The pacing of each session's ordinary sends (off by default).
    pub send_pacing: PacingConfig,
    /// Plugin sandbox knobs.
    pub plugins: PluginConfig,
    /// How integration plugins' deliveries are retried.
    pub integrations: IntegrationConfig,
    /// How media named by `url` in a send is checked and fetched (on every
    /// backend; the composition hands it to the `whatsapp` backend's fetch).
    pub media_urls: MediaUrlConfig,
    /// Knobs of the `whatsapp` backend (used when it is built).
    pub whatsapp: WhatsAppConfig,
    /// The proxy of every session that names none of its own; `None`
    /// connects directly (also in `whatsapp`, where connections are made).
    pub proxy: Option<crate::domain::proxy::Proxy>,
    /// The NATS JetStream broker (off unless it has servers).
    pub nats: NatsConfig,
    /// The bounds of every HTTP connection: timeouts, header size, how many
    /// at once.
    pub http: HttpLimits,
    /// Most sessions a token limited to some sessions may hold (those it is
    /// minted with and those it creates).
    pub token_max_sessions: usize,
}

impl Config {
    /// The same configuration with every filesystem path absolute (against
    /// the working directory now) and every directory the gateway writes to
    /// created and checked; an unusable one is an error naming the path and
    /// its option. Idempotent; [`crate::start`] calls it before anything
    /// reads a path.
    pub fn resolve_paths(mut self) -> Result<Config, crate::paths::PathError> {
        self.data_dir = crate::paths::writable_dir(&self.data_dir, crate::paths::DATA_DIR)?;
        if let MediaStoreConfig::Local { dir } = &self.media_store {
            let dir = crate::paths::writable_dir(dir, crate::paths::MEDIA_DIR)?;
            self.media_store = MediaStoreConfig::Local { dir };
        }
        if let Some(dir) = &self.plugins.dir {
            self.plugins.dir = Some(crate::paths::readable_dir(dir, crate::paths::PLUGIN_DIR)?);
        }
        Ok(self)
    }

    /// Defaults with the given data directory (used by tests and embedders).
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir: PathBuf = data_dir.into();
        let media_dir = data_dir.join(crate::domain::data_dir::MEDIA_DIR);
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 3451)),
            metrics_listen: None,
            data_dir,
            storage: crate::store::StoreOptions::default(),
            api_token: None,
            network: "sim".into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_plugin_bytes: DEFAULT_MAX_PLUGIN_BYTES,
            media_store: MediaStoreConfig::Local { dir: media_dir },
            media: MediaConfig::default(),
            sim_enabled: true,
            sim: SimConfig::default(),
            webhooks: WebhookConfig::default(),
            event_log: EventLogConfig::default(),
            reconnect: ReconnectConfig::default(),
            schedule: ScheduleConfig::default(),
            blasts: BlastConfig::default(),
            typing_before_send: Duration::ZERO,
            token_rate_window: Duration::from_secs(60),
            send_pacing: PacingConfig::default(),
            plugins: PluginConfig::default(),
            integrations: IntegrationConfig::default(),
            media_urls: MediaUrlConfig::default(),
            whatsapp: WhatsAppConfig::default(),
            proxy: None,
            nats: NatsConfig::default(),
            http: HttpLimits::default(),
            token_max_sessions: crate::api::tokens::DEFAULT_SESSION_QUOTA,
        }
    }
}

/// Reads `--proxy` (a refusal never repeats what was given: it may hold a
/// password).
fn parse_proxy(raw: &str) -> Result<crate::domain::proxy::Proxy, String> {
    crate::domain::proxy::Proxy::parse(raw, None, None).map_err(|e| format!("the proxy URL {e}"))
}

/// The default network of new sessions: the real network when this build has
/// it, else the simulated one.
pub const DEFAULT_NETWORK: &str = if cfg!(feature = "whatsapp") {
    "whatsapp"
} else {
    "sim"
};

/// Default request body limit: 16 MiB, ample for JSON. Large media goes as
/// an upload (`POST …/media`, its own limit), never as base64 in JSON, so
/// the gateway never reads a giant JSON body before it can refuse it.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Default plugin component limit: 128 MiB (an interpreter-based
/// component is tens of MiB).
pub const DEFAULT_MAX_PLUGIN_BYTES: usize = 128 * 1024 * 1024;

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
    /// A second address that serves only /metrics, without a token (for
    /// Prometheus on a private network); /metrics on --listen needs the token.
    #[arg(long, env = "SWITCHBOARD_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Directory of the database and the generated API token.
    #[arg(long, env = "SWITCHBOARD_DATA_DIR", default_value = crate::domain::data_dir::DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,
    /// Free space of the data (and local media) directory under which new
    /// uploads and blasts are refused with 507, in MiB, so the disk does not
    /// fill with work the store then cannot record; 0 turns the floor off.
    #[arg(long, env = "SWITCHBOARD_MIN_FREE_SPACE_MB", default_value_t = 64)]
    pub min_free_space_mb: u64,
    /// The first wait before the store is opened again after a storage
    /// fault (a full disk, an I/O error), in milliseconds; it doubles on
    /// each attempt that fails.
    #[arg(long, env = "SWITCHBOARD_STORE_REOPEN_BACKOFF_MIN_MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub store_reopen_backoff_min_ms: u64,
    /// The longest wait between attempts to open the store again, in
    /// milliseconds.
    #[arg(long, env = "SWITCHBOARD_STORE_REOPEN_BACKOFF_MAX_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub store_reopen_backoff_max_ms: u64,
    /// Bearer token for /api/v1; when unset one is generated on first start and
    /// kept in <data-dir>/api-token (readable by the owner only).
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,
    /// Default network of new sessions (`whatsapp` when built with it, else `sim`).
    #[arg(long, env = "SWITCHBOARD_NETWORK", default_value = DEFAULT_NETWORK)]
    pub network: String,
    /// The proxy of every session that sets none of its own, like
    /// socks5://user:password@host:1080 or http://host:3128 (default: a
    /// direct connection). Its credentials are never logged.
    #[arg(long, env = "SWITCHBOARD_PROXY", hide_env_values = true, value_parser = parse_proxy)]
    pub proxy: Option<crate::domain::proxy::Proxy>,
    /// WhatsApp backend: the chat server's websocket URL (default: WhatsApp's own).
    #[arg(long, env = "SWITCHBOARD_WHATSAPP_WS_URL")]
    pub whatsapp_ws_url: Option<String>,
    /// WhatsApp backend: the WhatsApp Web version to announce, like
    /// 2.3000.1023456789 (default: fetched from web.whatsapp.com once a day).
    #[arg(long, env = "SWITCHBOARD_WHATSAPP_VERSION", value_parser = parse_version)]
    pub whatsapp_version: Option<(u32, u32, u32)>,
    /// WhatsApp backend: how long a send waits for WhatsApp to accept or
    /// refuse it, in milliseconds (a refusal fails the send; no answer in
    /// time answers as written).
    #[arg(
        long,
        env = "SWITCHBOARD_WHATSAPP_SEND_ACK_WAIT_MS",
        default_value = "20000"
    )]
    pub whatsapp_send_ack_wait_ms: u64,
    /// WhatsApp backend, test builds only: the wire server's media host
    /// (127.0.0.1:port), reached over plain HTTP.
    #[cfg(feature = "wire")]
    #[arg(long, env = "SWITCHBOARD_WHATSAPP_WIRE_MEDIA_HOST")]
    pub whatsapp_wire_media_host: Option<String>,
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
    /// Largest accepted request body, in bytes (JSON; uploads and plugin
    /// components have their own limits).
    #[arg(long, env = "SWITCHBOARD_MAX_BODY_BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Largest plugin component upload, in bytes.
    #[arg(long, env = "SWITCHBOARD_MAX_PLUGIN_BYTES", default_value_t = DEFAULT_MAX_PLUGIN_BYTES)]
    pub max_plugin_bytes: usize,
    /// Media: the store, downloads, uploads and retention.
    #[command(flatten)]
    pub media: MediaArgs,
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
    /// Total delivery attempts per webhook event before it is dead-lettered.
    #[arg(long, env = "WEBHOOK_RETRY_MAX_ATTEMPTS", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub webhook_retry_max_attempts: u32,
    /// Retry 4xx answers too (408 and 429 are retried either way).
    #[arg(long, env = "WEBHOOK_RETRY_ON_4XX", default_value_t = true, action = clap::ArgAction::Set)]
    pub webhook_retry_on_4xx: bool,
    /// Dead-letter entries kept per session (oldest evicted).
    #[arg(long, env = "WEBHOOK_DLQ_CAPACITY", default_value_t = 100)]
    pub webhook_dlq_capacity: usize,
    /// Pauses before the 2nd, 3rd… attempt, in seconds; then the last doubles.
    #[arg(long, env = "WEBHOOK_RETRY_DELAYS_SECS", default_value = "5,30", value_parser = parse_secs_list)]
    pub webhook_retry_delays_secs: SecsList,
    /// Longest pause between attempts, in seconds.
    #[arg(long, env = "WEBHOOK_RETRY_MAX_DELAY_SECS", default_value = "300", value_parser = parse_secs)]
    pub webhook_retry_max_delay_secs: std::time::Duration,
    /// Consecutive failed deliveries that suspend a URL.
    #[arg(long, env = "WEBHOOK_SUSPEND_THRESHOLD", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..))]
    pub webhook_suspend_threshold: u32,
    /// First suspension of a URL, in seconds; doubles per failed probe.
    #[arg(long, env = "WEBHOOK_SUSPEND_SECS", default_value = "300", value_parser = parse_secs)]
    pub webhook_suspend_secs: std::time::Duration,
    /// Longest suspension, in seconds.
    #[arg(long, env = "WEBHOOK_SUSPEND_MAX_SECS", default_value = "3600", value_parser = parse_secs)]
    pub webhook_suspend_max_secs: std::time::Duration,
    /// Timeout of one delivery request, in seconds.
    #[arg(long, env = "WEBHOOK_TIMEOUT_SECS", default_value = "10", value_parser = parse_secs)]
    pub webhook_timeout_secs: std::time::Duration,
    /// Allow webhook URLs on loopback, private, link-local and other internal addresses.
    #[arg(long, env = "WEBHOOK_ALLOW_PRIVATE", default_value_t = false, action = clap::ArgAction::Set)]
    pub webhook_allow_private: bool,
    /// Deliveries a webhook URL may have pending in the durable outbox; past
    /// it the oldest go to the dead-letter queue with the reason `backlog_full`.
    #[arg(long, env = "WEBHOOK_BACKLOG_LIMIT", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_backlog_limit: u64,
    /// Allow media URLs of sends on loopback, private, link-local and other
    /// internal addresses (apart from `WEBHOOK_ALLOW_PRIVATE`: media URLs
    /// come from whoever may send).
    #[arg(long, env = "MEDIA_URL_ALLOW_PRIVATE", default_value_t = false, action = clap::ArgAction::Set)]
    pub media_url_allow_private: bool,
    /// Longest one fetch of a send's media URL may take in all, in seconds
    /// (more than zero).
    #[arg(long, env = "MEDIA_URL_TIMEOUT_SECS", default_value = "20", value_parser = parse_positive_secs)]
    pub media_url_timeout_secs: std::time::Duration,
    /// Webhooks one session may have; registering one more is refused (409
    /// `webhook_limit_reached`).
    #[arg(long, env = "MAX_WEBHOOKS_PER_SESSION", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_webhooks_per_session: u64,
    /// Most recorded events kept for event streams that resume (`Last-Event-ID`);
    /// 0 keeps none.
    #[arg(long, env = "EVENT_RETENTION_COUNT", default_value_t = 100_000)]
    pub event_retention_count: u64,
    /// Oldest recorded event kept for event streams that resume, in seconds.
    #[arg(long, env = "EVENT_RETENTION_SECS", default_value = "86400", value_parser = parse_secs)]
    pub event_retention_secs: std::time::Duration,
    /// How often recorded events past their age are pruned, in seconds.
    #[arg(long, env = "EVENT_RETENTION_SWEEP_SECS", default_value = "60", value_parser = parse_secs)]
    pub event_retention_sweep_secs: std::time::Duration,
    /// Pauses before automatic reconnect attempts after a drop, in seconds: the
    /// first, then one step per consecutive failure; the last repeats.
    #[arg(long, env = "SWITCHBOARD_RECONNECT_DELAYS_SECS", default_value = "1,2,5,10,30,60", value_parser = parse_secs_list)]
    pub reconnect_delays_secs: SecsList,
    /// Account-lock cooldowns in seconds: repeated locks of a session walk the
    /// list; the last step repeats.
    #[arg(long, env = "ACCOUNT_LOCK_BACKOFF_SECS", default_value = "300,900,3600", value_parser = parse_secs_list)]
    pub account_lock_backoff_secs: SecsList,
    /// How long a login must last, in seconds, before a drop starts the
    /// reconnect schedule over; a drop sooner counts as one more failure.
    #[arg(long, env = "SWITCHBOARD_RECONNECT_STABLE_AFTER_SECS", default_value = "30", value_parser = parse_secs)]
    pub reconnect_stable_after_secs: std::time::Duration,
    /// How long a reach-out timelock is assumed to last, in seconds, when
    /// WhatsApp refused a send for one (error 463) without saying until when:
    /// sends to people without a chat are held that long.
    #[arg(long, env = "SWITCHBOARD_REACH_OUT_HOLD_SECS", default_value = "3600", value_parser = parse_secs)]
    pub reach_out_hold_secs: std::time::Duration,
    /// Up to how many percent each automatic reconnect pause is stretched at
    /// random (0 to 100), so sessions dropped together do not return
    /// together; account-lock cooldowns are kept exact.
    #[arg(long, env = "SWITCHBOARD_RECONNECT_JITTER_PERCENT", default_value = "20", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub reconnect_jitter_percent: u8,
    /// How long a trust contact token lives on the sim before it can be pruned, in seconds.
    #[arg(long, env = "SWITCHBOARD_SIM_TCTOKEN_LIFETIME_SECS", default_value = "604800", value_parser = parse_secs)]
    pub sim_tctoken_lifetime_secs: std::time::Duration,
    /// How long a due scheduled send waits for its session to be able to send
    /// (paused, disconnected) before it fails, in seconds.
    #[arg(long, env = "SWITCHBOARD_SCHEDULE_MAX_WAIT_SECS", default_value = "86400", value_parser = parse_secs)]
    pub schedule_max_wait_secs: std::time::Duration,
    /// Network attempts per scheduled send before it fails.
    #[arg(long, env = "SWITCHBOARD_SCHEDULE_MAX_ATTEMPTS", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub schedule_max_attempts: u32,
    /// Pauses before the 2nd, 3rd… attempt of a scheduled send after a network
    /// failure, in seconds; then the last repeats.
    #[arg(long, env = "SWITCHBOARD_SCHEDULE_RETRY_DELAYS_SECS", default_value = "10,60", value_parser = parse_secs_list)]
    pub schedule_retry_delays_secs: SecsList,
    /// Sessions whose due scheduled sends are handed to the network at
    /// once (each session's one at a time, in order; the sessions take turns).
    #[arg(long, env = "SWITCHBOARD_SCHEDULE_CONCURRENCY", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub schedule_concurrency: u64,
    /// Longest one scheduled send may take, its media fetch included, before
    /// it is abandoned and retried like a network failure, in seconds.
    #[arg(long, env = "SWITCHBOARD_SCHEDULE_SEND_TIMEOUT_SECS", default_value = "120", value_parser = parse_send_bound)]
    pub schedule_send_timeout_secs: std::time::Duration,
    /// How often an idle blast worker looks for work anyway, in milliseconds
    /// (it is also woken at once on create, retry and a session connecting).
    #[arg(long, env = "SWITCHBOARD_BLAST_IDLE_POLL_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub blast_idle_poll_ms: u64,
    /// How long a blast whose session cannot send is set aside before the
    /// worker looks at the session again, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_BLAST_OFFLINE_RETRY_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub blast_offline_retry_ms: u64,
    /// Longest one blast recipient's send may take, its media fetch
    /// included, before it is abandoned and counted as a failed attempt, in
    /// seconds.
    #[arg(long, env = "SWITCHBOARD_BLAST_SEND_TIMEOUT_SECS", default_value = "120", value_parser = parse_send_bound)]
    pub blast_send_timeout_secs: std::time::Duration,
    /// How long blasts and scheduled sends show the recipient typing before
    /// each message, in milliseconds; 0 (the default) sends at once.
    #[arg(long, env = "SWITCHBOARD_TYPING_BEFORE_SEND_MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub typing_before_send_ms: u64,
    /// The window a token's `rate_per_minute` counts requests in, in
    /// milliseconds: a minute; shorter only to test the limit quickly.
    #[arg(long, env = "SWITCHBOARD_TOKEN_RATE_WINDOW_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub token_rate_window_ms: u64,
    /// Least time between two ordinary sends of one session (the API's and
    /// the NATS send queue's; not blasts or scheduled sends), in
    /// milliseconds; 0 (the default) sets no gap.
    #[arg(long, env = "SWITCHBOARD_SEND_MIN_GAP_MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub send_min_gap_ms: u64,
    /// Most ordinary sends of one session in any 60-second window (a
    /// sliding window); 0 (the default) sets no cap.
    #[arg(long, env = "SWITCHBOARD_SEND_PER_MINUTE", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub send_per_minute: u32,
    /// What a send over the gap or the cap does: `queue` waits its turn (up
    /// to `--send-pacing-max-wait-ms`), `refuse` answers `429` at once.
    #[arg(
        long,
        env = "SWITCHBOARD_SEND_PACING",
        value_enum,
        default_value = "queue"
    )]
    pub send_pacing: SendPacing,
    /// Longest a queued send waits for its turn, in milliseconds; a longer
    /// wait is refused with `429`.
    #[arg(long, env = "SWITCHBOARD_SEND_PACING_MAX_WAIT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub send_pacing_max_wait_ms: u64,
    /// Most recipients in one blast.
    #[arg(long, env = "SWITCHBOARD_BLAST_MAX_RECIPIENTS", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub blast_max_recipients: u64,
    /// Deadline of one integration plugin call (which may wait on HTTP), in
    /// milliseconds.
    #[arg(long, env = "SWITCHBOARD_INTEGRATION_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub integration_timeout_ms: u64,
    /// Pause after an integration plugin's first failed attempt at an
    /// event, in milliseconds; it doubles after each, up to five minutes.
    #[arg(long, env = "SWITCHBOARD_INTEGRATION_RETRY_BASE_MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=300_000))]
    pub integration_retry_base_ms: u64,
    /// Attempts at an event before an integration's delivery is dead-lettered.
    #[arg(long, env = "SWITCHBOARD_INTEGRATION_MAX_ATTEMPTS", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub integration_max_attempts: u32,
    /// CPU deadline of one plugin call, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_PLUGIN_TIMEOUT_MS", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub plugin_timeout_ms: u64,
    /// Linear memory cap of one plugin instance, in MiB.
    #[arg(long, env = "SWITCHBOARD_PLUGIN_MAX_MEMORY_MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..4096))]
    pub plugin_max_memory_mib: u64,
    /// Size cap of one plugin's key-value store, in KiB.
    #[arg(long, env = "SWITCHBOARD_PLUGIN_KV_CAP_KIB", default_value_t = 1024)]
    pub plugin_kv_cap_kib: u64,
    /// Failed plugin calls in a row that quarantine the plugin.
    #[arg(long, env = "SWITCHBOARD_PLUGIN_QUARANTINE_AFTER", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub plugin_quarantine_after: u32,
    /// Directory to hot-load plugins from: each `<name>.toml` manifest names
    /// a component and its bindings (see docs/plugins.md).
    #[arg(long, env = "SWITCHBOARD_PLUGIN_DIR")]
    pub plugin_dir: Option<PathBuf>,
    /// How often the plugin directory is scanned for changes, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_PLUGIN_DIR_POLL_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub plugin_dir_poll_ms: u64,
    /// NATS servers, comma-separated (`nats://host:4222`, `tls://…`): events go
    /// to a JetStream stream and send commands are read from one. Unset: no
    /// broker, and nothing NATS-related starts.
    #[arg(long, env = "SWITCHBOARD_NATS_URL", value_delimiter = ',')]
    pub nats_url: Vec<String>,
    /// NATS credentials file (JWT and NKey seed, as `nsc` writes it).
    #[arg(long, env = "SWITCHBOARD_NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
    /// NATS token.
    #[arg(long, env = "SWITCHBOARD_NATS_TOKEN", hide_env_values = true)]
    pub nats_token: Option<String>,
    /// NATS user name (with --nats-password).
    #[arg(long, env = "SWITCHBOARD_NATS_USER")]
    pub nats_user: Option<String>,
    /// NATS password.
    #[arg(long, env = "SWITCHBOARD_NATS_PASSWORD", hide_env_values = true)]
    pub nats_password: Option<String>,
    /// Refuse a NATS server that does not speak TLS.
    #[arg(long, env = "SWITCHBOARD_NATS_TLS_REQUIRED", default_value_t = false, action = clap::ArgAction::Set)]
    pub nats_tls_required: bool,
    /// PEM file of the CA certificates to trust for NATS (instead of the system's).
    #[arg(long, env = "SWITCHBOARD_NATS_TLS_CA")]
    pub nats_tls_ca: Option<PathBuf>,
    /// PEM client certificate for NATS servers that verify clients (with --nats-tls-key).
    #[arg(long, env = "SWITCHBOARD_NATS_TLS_CERT")]
    pub nats_tls_cert: Option<PathBuf>,
    /// PEM private key of --nats-tls-cert.
    #[arg(long, env = "SWITCHBOARD_NATS_TLS_KEY")]
    pub nats_tls_key: Option<PathBuf>,
    /// First token of every NATS subject (`<prefix>.events.<session>.<event>`,
    /// `<prefix>.send.<session>`, `<prefix>.results.<session>`).
    #[arg(long, env = "SWITCHBOARD_NATS_PREFIX", default_value = "switchboard", value_parser = parse_subject_token)]
    pub nats_prefix: String,
    /// The JetStream stream of events (and send results).
    #[arg(long, env = "SWITCHBOARD_NATS_EVENTS_STREAM", default_value = "SWITCHBOARD_EVENTS", value_parser = parse_stream_name)]
    pub nats_events_stream: String,
    /// Oldest event the events stream keeps, in seconds (0: no limit).
    #[arg(long, env = "SWITCHBOARD_NATS_EVENTS_MAX_AGE_SECS", default_value = "604800", value_parser = parse_secs)]
    pub nats_events_max_age_secs: Duration,
    /// Most bytes the events stream keeps (0: no limit).
    #[arg(long, env = "SWITCHBOARD_NATS_EVENTS_MAX_BYTES", default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..))]
    pub nats_events_max_bytes: i64,
    /// How the streams store messages: `file` (survives a NATS restart) or `memory`.
    #[arg(
        long,
        env = "SWITCHBOARD_NATS_STORAGE",
        value_enum,
        default_value = "file"
    )]
    pub nats_storage: NatsStorage,
    /// Replicas of each stream (1 on one server, 3 on a 3-node cluster).
    #[arg(long, env = "SWITCHBOARD_NATS_REPLICAS", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=5))]
    pub nats_replicas: u64,
    /// JetStream's duplicate window, in seconds: a republished event (same
    /// Nats-Msg-Id) within it is stored once.
    #[arg(long, env = "SWITCHBOARD_NATS_DUPLICATE_WINDOW_SECS", default_value = "120", value_parser = parse_secs)]
    pub nats_duplicate_window_secs: Duration,
    /// The work-queue stream of send commands.
    #[arg(long, env = "SWITCHBOARD_NATS_SEND_STREAM", default_value = "SWITCHBOARD_SEND", value_parser = parse_stream_name)]
    pub nats_send_stream: String,
    /// The durable consumer the gateway reads send commands with.
    #[arg(long, env = "SWITCHBOARD_NATS_SEND_CONSUMER", default_value = "switchboard-send", value_parser = parse_stream_name)]
    pub nats_send_consumer: String,
    /// Most event publishes waiting for their acknowledgement at once.
    #[arg(long, env = "SWITCHBOARD_NATS_PUBLISH_WINDOW", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub nats_publish_window: u64,
    /// How long a publish waits for its acknowledgement, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_NATS_ACK_TIMEOUT_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_ack_timeout_ms: u64,
    /// First pause after a failed publish, in milliseconds; it doubles.
    #[arg(long, env = "SWITCHBOARD_NATS_RETRY_BASE_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_retry_base_ms: u64,
    /// Longest pause between publish attempts, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_NATS_RETRY_MAX_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_retry_max_ms: u64,
    /// Deliveries of a send command that fails for a passing reason (the
    /// session reconnecting) before it is answered as failed.
    #[arg(long, env = "SWITCHBOARD_NATS_COMMAND_ATTEMPTS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub nats_command_attempts: u32,
    /// First pause before a command is delivered again, in milliseconds; it doubles.
    #[arg(long, env = "SWITCHBOARD_NATS_COMMAND_RETRY_BASE_MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_command_retry_base_ms: u64,
    /// Longest pause before a command is delivered again, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_NATS_COMMAND_RETRY_MAX_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_command_retry_max_ms: u64,
    /// How long a delivered command may go unanswered before NATS delivers it
    /// again (a gateway that died mid-send), in seconds.
    #[arg(long, env = "SWITCHBOARD_NATS_COMMAND_ACK_WAIT_SECS", default_value = "30", value_parser = parse_secs)]
    pub nats_command_ack_wait_secs: Duration,
    /// How long an idle per-session reader of NATS send commands is kept
    /// before it is retired, in milliseconds (a new command starts it again).
    #[arg(long, env = "SWITCHBOARD_NATS_COMMAND_WORKER_IDLE_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub nats_command_worker_idle_ms: u64,
    /// Longest a client may take to send a request's head (request line and
    /// headers), in milliseconds, counted from when the connection opens or,
    /// on a keep-alive connection, from the previous answer; then the
    /// connection is closed.
    #[arg(long, env = "SWITCHBOARD_HTTP_HEADER_READ_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub http_header_read_timeout_ms: u64,
    /// Longest pause while a request body is read (between two of its
    /// chunks), in milliseconds; then the request fails.
    #[arg(long, env = "SWITCHBOARD_HTTP_BODY_READ_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub http_body_read_timeout_ms: u64,
    /// A connection on which no byte moves for this long while no request is
    /// being handled is closed, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_HTTP_IDLE_TIMEOUT_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub http_idle_timeout_ms: u64,
    /// Largest request head (request line and headers), in bytes; a larger
    /// one is answered 431. At least 8192.
    #[arg(long, env = "SWITCHBOARD_HTTP_MAX_HEADER_BYTES", default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(MIN_HEADER_BYTES as u64..=16_777_216))]
    pub http_max_header_bytes: u64,
    /// Most HTTP connections served at once (each listener); one more is
    /// answered 503 `too_many_connections` and closed.
    #[arg(long, env = "SWITCHBOARD_HTTP_MAX_CONNECTIONS", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub http_max_connections: u64,
    /// Most sessions a token limited to some sessions may hold: the ids it is
    /// minted with and the sessions it creates (`409 session_limit_reached`
    /// past it).
    #[arg(long, env = "SWITCHBOARD_TOKEN_MAX_SESSIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub token_max_sessions: u64,
}

/// What a send over its session's pacing does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SendPacing {
    /// Wait for its turn.
    Queue,
    /// Refuse it at once with `429`.
    Refuse,
}

/// How NATS streams store messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NatsStorage {
    /// On disk.
    File,
    /// In memory.
    Memory,
}

/// A subject token: letters, digits, `_` and `-`, no dots or wildcards.
fn parse_subject_token(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then(|| s.to_owned())
        .ok_or_else(|| format!("`{s}` is not a NATS subject token (letters, digits, `_`, `-`)"))
}

/// A send's time bound: (fractional) seconds, more than zero (a zero bound
/// would abandon every send before it could reach the network).
fn parse_send_bound(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_secs(s)?;
    if d.is_zero() {
        return Err(format!("`{s}` must be more than zero seconds"));
    }
    Ok(d)
}

/// A stream or consumer name: letters, digits, `_` and `-`.
fn parse_stream_name(s: &str) -> Result<String, String> {
    parse_subject_token(s)
        .map_err(|_| format!("`{s}` is not a JetStream name (letters, digits, `_`, `-`)"))
}

/// Seconds, as [`parse_secs`] reads them, more than zero: a bound of
/// nothing would fail every fetch.
fn parse_positive_secs(s: &str) -> Result<Duration, String> {
    let d = parse_secs(s)?;
    if d.is_zero() {
        return Err(format!("`{s}` must be more than zero seconds"));
    }
    Ok(d)
}

impl ServeArgs {
    /// The server configuration these flags describe.
    pub fn config(&self) -> Config {
        Config {
            listen: self.listen,
            metrics_listen: self.metrics_listen,
            data_dir: self.data_dir.clone(),
            storage: crate::store::StoreOptions {
                reopen_backoff_min: Duration::from_millis(self.store_reopen_backoff_min_ms),
                reopen_backoff_max: Duration::from_millis(
                    self.store_reopen_backoff_max_ms
                        .max(self.store_reopen_backoff_min_ms),
                ),
                min_free_bytes: self.min_free_space_mb.saturating_mul(1024 * 1024),
            },
            api_token: self.api_token.clone().filter(|t| !t.trim().is_empty()),
            network: self.network.clone(),
            max_body_bytes: self.max_body_bytes,
            max_plugin_bytes: self.max_plugin_bytes,
            media_store: self.media.store(&self.data_dir),
            media: self.media.config(),
            sim_enabled: self.sim,
            sim: SimConfig {
                seed: self.sim_seed,
                auto_pair: self.sim_auto_pair,
                pair_delay: Duration::from_millis(self.sim_pair_delay_ms),
                qr_interval: Duration::from_millis(self.sim_qr_interval_ms.max(1)),
                tctoken_lifetime: self.sim_tctoken_lifetime_secs,
            },
            webhooks: WebhookConfig {
                max_attempts: self.webhook_retry_max_attempts,
                retry_on_4xx: self.webhook_retry_on_4xx,
                dlq_capacity: self.webhook_dlq_capacity,
                retry_delays: self.webhook_retry_delays_secs.0.clone(),
                max_retry_delay: self.webhook_retry_max_delay_secs,
                suspend_threshold: self.webhook_suspend_threshold,
                suspend_base: self.webhook_suspend_secs,
                suspend_max: self.webhook_suspend_max_secs,
                timeout: self.webhook_timeout_secs,
                allow_private: self.webhook_allow_private,
                backlog_limit: usize::try_from(self.webhook_backlog_limit).unwrap_or(usize::MAX),
                max_per_session: usize::try_from(self.max_webhooks_per_session)
                    .unwrap_or(usize::MAX),
                ..WebhookConfig::default()
            },
            event_log: EventLogConfig {
                max_count: self.event_retention_count,
                max_age: self.event_retention_secs,
                sweep_every: self.event_retention_sweep_secs,
            },
            reconnect: ReconnectConfig {
                delays: self.reconnect_delays_secs.0.clone(),
                lock_backoff: self.account_lock_backoff_secs.0.clone(),
                stable_after: self.reconnect_stable_after_secs,
                reach_out_hold: self.reach_out_hold_secs,
                jitter_percent: self.reconnect_jitter_percent,
            },
            schedule: ScheduleConfig {
                max_wait: self.schedule_max_wait_secs,
                max_attempts: self.schedule_max_attempts,
                retry_delays: self.schedule_retry_delays_secs.0.clone(),
                concurrency: usize::try_from(self.schedule_concurrency).unwrap_or(1),
                send_timeout: self.schedule_send_timeout_secs,
            },
            typing_before_send: Duration::from_millis(self.typing_before_send_ms),
            token_rate_window: Duration::from_millis(self.token_rate_window_ms),
            send_pacing: PacingConfig {
                min_gap: Duration::from_millis(self.send_min_gap_ms),
                per_minute: self.send_per_minute,
                mode: match self.send_pacing {
                    SendPacing::Queue => PacingMode::Queue,
                    SendPacing::Refuse => PacingMode::Refuse,
                },
                max_wait: Duration::from_millis(self.send_pacing_max_wait_ms),
                ..PacingConfig::default()
            },
            blasts: BlastConfig {
                idle_poll: Duration::from_millis(self.blast_idle_poll_ms),
                offline_retry: Duration::from_millis(self.blast_offline_retry_ms),
                max_recipients: usize::try_from(self.blast_max_recipients).unwrap_or(usize::MAX),
                send_timeout: self.blast_send_timeout_secs,
            },
            plugins: PluginConfig {
                call_timeout: Duration::from_millis(self.plugin_timeout_ms),
                // Multiplied, not shifted: a shift drops the high bits, so a
                // cap too large to count in bytes would wrap to a tiny one
                // instead of saturating to "no practical cap".
                max_memory_bytes: usize::try_from(
                    self.plugin_max_memory_mib.saturating_mul(1 << 20),
                )
                .unwrap_or(usize::MAX),
                kv_cap_bytes: usize::try_from(self.plugin_kv_cap_kib.saturating_mul(1 << 10))
                    .unwrap_or(usize::MAX),
                quarantine_after: self.plugin_quarantine_after,
                dir: self.plugin_dir.clone(),
                dir_poll: Duration::from_millis(self.plugin_dir_poll_ms),
                integration_timeout: Duration::from_millis(self.integration_timeout_ms),
                ..PluginConfig::default()
            },
            integrations: IntegrationConfig {
                retry_base: Duration::from_millis(self.integration_retry_base_ms),
                max_attempts: self.integration_max_attempts,
                // The plugin's own deadline, and some room for the host's
                // last HTTP phase and the instance's teardown.
                call_limit: Duration::from_millis(self.integration_timeout_ms)
                    .saturating_add(Duration::from_secs(15)),
                ..IntegrationConfig::default()
            },
            media_urls: MediaUrlConfig {
                allow_private: self.media_url_allow_private,
                timeout: self.media_url_timeout_secs,
                ..MediaUrlConfig::default()
            },
            whatsapp: WhatsAppConfig {
                ws_url: self
                    .whatsapp_ws_url
                    .clone()
                    .filter(|u| !u.trim().is_empty()),
                version: self.whatsapp_version,
                send_ack_wait: Duration::from_millis(self.whatsapp_send_ack_wait_ms),
                #[cfg(feature = "wire")]
                wire_media_host: self.whatsapp_wire_media_host.clone(),
                proxy: self.proxy.clone(),
                ..WhatsAppConfig::default()
            },
            proxy: self.proxy.clone(),
            nats: self.nats_config(),
            http: HttpLimits {
                header_read_timeout: Duration::from_millis(self.http_header_read_timeout_ms),
                body_read_timeout: Duration::from_millis(self.http_body_read_timeout_ms),
                idle_timeout: Duration::from_millis(self.http_idle_timeout_ms),
                max_header_bytes: usize::try_from(self.http_max_header_bytes).unwrap_or(usize::MAX),
                max_connections: usize::try_from(self.http_max_connections).unwrap_or(usize::MAX),
            },
            token_max_sessions: usize::try_from(self.token_max_sessions).unwrap_or(10_000),
        }
    }
}

impl ServeArgs {
    fn nats_config(&self) -> NatsConfig {
        let some = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        NatsConfig {
            servers: self
                .nats_url
                .iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            creds_file: self.nats_creds.clone(),
            token: some(&self.nats_token),
            user: some(&self.nats_user),
            password: some(&self.nats_password),
            tls_required: self.nats_tls_required,
            tls_ca: self.nats_tls_ca.clone(),
            tls_cert: self.nats_tls_cert.clone(),
            tls_key: self.nats_tls_key.clone(),
            prefix: self.nats_prefix.clone(),
            events_stream: self.nats_events_stream.clone(),
            events_max_age: self.nats_events_max_age_secs,
            events_max_bytes: self.nats_events_max_bytes,
            storage: match self.nats_storage {
                NatsStorage::File => Storage::File,
                NatsStorage::Memory => Storage::Memory,
            },
            replicas: usize::try_from(self.nats_replicas).unwrap_or(1),
            duplicate_window: self.nats_duplicate_window_secs,
            send_stream: self.nats_send_stream.clone(),
            send_consumer: self.nats_send_consumer.clone(),
            publish_window: usize::try_from(self.nats_publish_window).unwrap_or(256),
            ack_timeout: Duration::from_millis(self.nats_ack_timeout_ms),
            retry_base: Duration::from_millis(self.nats_retry_base_ms),
            retry_max: Duration::from_millis(self.nats_retry_max_ms),
            command_attempts: self.nats_command_attempts,
            command_retry_base: Duration::from_millis(self.nats_command_retry_base_ms),
            command_retry_max: Duration::from_millis(self.nats_command_retry_max_ms),
            command_ack_wait: self.nats_command_ack_wait_secs,
            command_worker_idle: Duration::from_millis(self.nats_command_worker_idle_ms),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
