//! The wiring from `switchboard serve` flags and their environment variables
//! into [`Config`], driven by one table checked against the clap definitions
//! that also print `--help`, so a flag added without a row here fails a test.
//!
//! Environment variables are tested in child processes of this test binary:
//! clap reads them from the process environment, which these tests may not
//! change (the workspace forbids `unsafe`, and `set_var` is unsafe), and a
//! child with a cleared environment is also immune to whatever the developer
//! or CI has exported.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Args, Command, CommandFactory, FromArgMatches, Parser};

use super::{Config, DEFAULT_NETWORK, LogFormat, ServeArgs};
use crate::media_store::{MediaStoreConfig, S3Config};

/// `switchboard serve` on its own, as the binary flattens it.
#[derive(Debug, Parser)]
#[command(name = "serve")]
struct Serve {
    #[command(flatten)]
    args: ServeArgs,
}

/// A network name that is not the default of this build.
const OTHER_NETWORK: &str = if cfg!(feature = "whatsapp") {
    "sim"
} else {
    "whatsapp"
};

/// Where a flag's value lands.
enum Lands {
    /// In [`Config`]: the default configuration with this change applied,
    /// and no other.
    InConfig(fn(&mut Config)),
    /// Only in [`ServeArgs`], which `main` reads before building [`Config`]
    /// (logging is set up first); the check holds for the row's value.
    InArgsOnly(fn(&ServeArgs) -> bool),
}

/// One `serve` flag: a value other than its default, and where it lands.
struct Row {
    long: &'static str,
    value: &'static str,
    lands: Lands,
}

fn row(long: &'static str, value: &'static str, change: fn(&mut Config)) -> Row {
    Row {
        long,
        value,
        lands: Lands::InConfig(change),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Every `serve` flag, with a non-default value and its effect.
fn rows() -> Vec<Row> {
    let mut rows = vec![
        row("listen", "0.0.0.0:8080", |c| {
            c.listen = SocketAddr::from(([0, 0, 0, 0], 8080));
        }),
        row("metrics-listen", "127.0.0.1:9100", |c| {
            c.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 9100)));
        }),
        row("data-dir", "/var/lib/switchboard", |c| {
            c.data_dir = PathBuf::from("/var/lib/switchboard");
            c.media_store = MediaStoreConfig::Local {
                dir: PathBuf::from("/var/lib/switchboard/media"),
            };
        }),
        row("api-token", "s3cret-token-0123456", |c| {
            c.api_token = Some("s3cret-token-0123456".into());
        }),
        row("network", OTHER_NETWORK, |c| {
            c.network = OTHER_NETWORK.into()
        }),
        row("whatsapp-ws-url", "ws://127.0.0.1:9/ws/chat", |c| {
            c.whatsapp.ws_url = Some("ws://127.0.0.1:9/ws/chat".into());
        }),
        row("whatsapp-version", "2.3000.1023456789", |c| {
            c.whatsapp.version = Some((2, 3000, 1_023_456_789));
        }),
        row("whatsapp-send-ack-wait-ms", "1500", |c| {
            c.whatsapp.send_ack_wait = Duration::from_millis(1500);
        }),
        Row {
            long: "log-level",
            value: "debug,switchboard=trace",
            lands: Lands::InArgsOnly(|a| a.log_level == "debug,switchboard=trace"),
        },
        Row {
            long: "log-format",
            value: "json",
            lands: Lands::InArgsOnly(|a| a.log_format == LogFormat::Json),
        },
        row("max-body-bytes", "1048576", |c| c.max_body_bytes = 1 << 20),
        row("max-plugin-bytes", "2097152", |c| {
            c.max_plugin_bytes = 2 << 20
        }),
        row("media-store", "s3", |c| {
            c.media_store = MediaStoreConfig::S3(S3Config {
                endpoint: None,
                bucket: String::new(),
                region: "us-east-1".into(),
                access_key_id: None,
                secret_access_key: None,
                session_token: None,
                path_style: false,
                allow_http: false,
                presign_for: None,
            });
        }),
        row("media-dir", "/srv/media", |c| {
            c.media_store = MediaStoreConfig::Local {
                dir: PathBuf::from("/srv/media"),
            };
        }),
        Row {
            long: "media-s3-endpoint",
            value: "http://minio:9000",
            lands: Lands::InArgsOnly(|a| {
                a.media.media_s3_endpoint.as_deref() == Some("http://minio:9000")
            }),
        },
        Row {
            long: "media-s3-bucket",
            value: "chat-media",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_bucket.as_deref() == Some("chat-media")),
        },
        Row {
            long: "media-s3-region",
            value: "eu-central-1",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_region == "eu-central-1"),
        },
        Row {
            long: "media-s3-access-key-id",
            value: "AKIA1",
            lands: Lands::InArgsOnly(|a| {
                a.media.media_s3_access_key_id.as_deref() == Some("AKIA1")
            }),
        },
        Row {
            long: "media-s3-secret-access-key",
            value: "s3cret",
            lands: Lands::InArgsOnly(|a| {
                a.media.media_s3_secret_access_key.as_deref() == Some("s3cret")
            }),
        },
        Row {
            long: "media-s3-session-token",
            value: "tok",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_session_token.as_deref() == Some("tok")),
        },
        Row {
            long: "media-s3-path-style",
            value: "true",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_path_style),
        },
        Row {
            long: "media-s3-allow-http",
            value: "true",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_allow_http),
        },
        Row {
            long: "media-s3-presign-secs",
            value: "300",
            lands: Lands::InArgsOnly(|a| a.media.media_s3_presign_secs == 300),
        },
        row("media-download", "lazy", |c| {
            c.media.mode = crate::runtime::media::DownloadMode::Lazy;
        }),
        row("media-download-timeout-secs", "9", |c| {
            c.media.download_timeout = secs(9);
        }),
        row("media-max-download-bytes", "1000", |c| {
            c.media.max_download_bytes = 1000;
        }),
        row("media-max-upload-bytes", "2000", |c| {
            c.media.max_upload_bytes = 2000;
        }),
        row("media-retention-secs", "0", |c| {
            c.media.retention_age = None
        }),
        row("media-retention-bytes", "5000", |c| {
            c.media.retention_bytes = Some(5000);
        }),
        row("media-max-upload-bytes-per-session", "0", |c| {
            c.media.max_upload_bytes_per_session = None;
        }),
        row("media-retention-bytes-per-session", "7000", |c| {
            c.media.retention_bytes_per_session = Some(7000);
        }),
        row("media-sweep-interval-ms", "250", |c| {
            c.media.sweep_interval = ms(250);
        }),
        row("media-download-concurrency", "2", |c| {
            c.media.download_concurrency = 2;
        }),
        row("media-orphan-grace-secs", "60", |c| {
            c.media.orphan_grace = secs(60);
        }),
        row("public-url", "https://gw.example.com/", |c| {
            c.media.public_url = "https://gw.example.com".into();
        }),
        row("sim", "false", |c| c.sim_enabled = false),
        row("sim-seed", "7", |c| c.sim.seed = 7),
        row("sim-auto-pair", "false", |c| c.sim.auto_pair = false),
        row("sim-pair-delay-ms", "250", |c| c.sim.pair_delay = ms(250)),
        row("sim-qr-interval-ms", "1500", |c| {
            c.sim.qr_interval = ms(1500)
        }),
        row("sim-tctoken-lifetime-secs", "120", |c| {
            c.sim.tctoken_lifetime = secs(120);
        }),
        row("webhook-retry-max-attempts", "9", |c| {
            c.webhooks.max_attempts = 9;
        }),
        row("webhook-retry-on-4xx", "false", |c| {
            c.webhooks.retry_on_4xx = false;
        }),
        row("webhook-dlq-capacity", "17", |c| {
            c.webhooks.dlq_capacity = 17
        }),
        row("webhook-retry-delays-secs", "0.5,2,8", |c| {
            c.webhooks.retry_delays = vec![ms(500), secs(2), secs(8)];
        }),
        row("webhook-retry-max-delay-secs", "90", |c| {
            c.webhooks.max_retry_delay = secs(90);
        }),
        row("webhook-suspend-threshold", "4", |c| {
            c.webhooks.suspend_threshold = 4;
        }),
        row("webhook-suspend-secs", "45", |c| {
            c.webhooks.suspend_base = secs(45);
        }),
        row("webhook-suspend-max-secs", "900", |c| {
            c.webhooks.suspend_max = secs(900);
        }),
        row("webhook-timeout-secs", "2.5", |c| {
            c.webhooks.timeout = ms(2500)
        }),
        row("webhook-allow-private", "true", |c| {
            c.webhooks.allow_private = true;
        }),
        row("webhook-backlog-limit", "250", |c| {
            c.webhooks.backlog_limit = 250;
        }),
        row("event-retention-count", "0", |c| c.event_log.max_count = 0),
        row("event-retention-secs", "3600", |c| {
            c.event_log.max_age = secs(3600);
        }),
        row("event-retention-sweep-secs", "0.2", |c| {
            c.event_log.sweep_every = ms(200);
        }),
        row("reconnect-delays-secs", "0.1,3", |c| {
            c.reconnect.delays = vec![ms(100), secs(3)];
        }),
        row("account-lock-backoff-secs", "60", |c| {
            c.reconnect.lock_backoff = vec![secs(60)];
        }),
        row("reconnect-stable-after-secs", "5", |c| {
            c.reconnect.stable_after = secs(5);
        }),
        row("reach-out-hold-secs", "120", |c| {
            c.reconnect.reach_out_hold = secs(120);
        }),
        row("reconnect-jitter-percent", "0", |c| {
            c.reconnect.jitter_percent = 0;
        }),
        row("schedule-max-wait-secs", "30", |c| {
            c.schedule.max_wait = secs(30);
        }),
        row("schedule-max-attempts", "6", |c| {
            c.schedule.max_attempts = 6
        }),
        row("schedule-retry-delays-secs", "1,4,16", |c| {
            c.schedule.retry_delays = vec![secs(1), secs(4), secs(16)];
        }),
        row("schedule-concurrency", "9", |c| c.schedule.concurrency = 9),
        row("schedule-send-timeout-secs", "2.5", |c| {
            c.schedule.send_timeout = ms(2500);
        }),
        row("blast-send-timeout-secs", "7", |c| {
            c.blasts.send_timeout = secs(7);
        }),
        row("blast-idle-poll-ms", "750", |c| {
            c.blasts.idle_poll = ms(750)
        }),
        row("blast-offline-retry-ms", "125", |c| {
            c.blasts.offline_retry = ms(125);
        }),
        row("token-rate-window-ms", "250", |c| {
            c.token_rate_window = ms(250)
        }),
        row("typing-before-send-ms", "1500", |c| {
            c.typing_before_send = ms(1500)
        }),
        row("send-min-gap-ms", "1500", |c| {
            c.send_pacing.min_gap = ms(1500)
        }),
        row("send-per-minute", "20", |c| c.send_pacing.per_minute = 20),
        row("send-pacing", "refuse", |c| {
            c.send_pacing.mode = crate::messages::PacingMode::Refuse
        }),
        row("send-pacing-max-wait-ms", "5000", |c| {
            c.send_pacing.max_wait = ms(5000)
        }),
        row("blast-max-recipients", "12", |c| {
            c.blasts.max_recipients = 12
        }),
        row("plugin-timeout-ms", "20", |c| {
            c.plugins.call_timeout = ms(20)
        }),
        row("integration-timeout-ms", "2500", |c| {
            c.plugins.integration_timeout = ms(2500);
            c.integrations.call_limit = ms(17_500);
        }),
        row("integration-retry-base-ms", "40", |c| {
            c.integrations.retry_base = ms(40)
        }),
        row("integration-max-attempts", "3", |c| {
            c.integrations.max_attempts = 3
        }),
        row("plugin-max-memory-mib", "3", |c| {
            c.plugins.max_memory_bytes = 3 << 20;
        }),
        row("plugin-kv-cap-kib", "16", |c| {
            c.plugins.kv_cap_bytes = 16 << 10
        }),
        row("plugin-quarantine-after", "2", |c| {
            c.plugins.quarantine_after = 2;
        }),
        row("plugin-dir", "/srv/switchboard/plugins", |c| {
            c.plugins.dir = Some(PathBuf::from("/srv/switchboard/plugins"));
        }),
        row("plugin-dir-poll-ms", "40", |c| c.plugins.dir_poll = ms(40)),
        row("nats-url", "nats://127.0.0.1:4222,tls://n2:4222", |c| {
            c.nats.servers = vec!["nats://127.0.0.1:4222".into(), "tls://n2:4222".into()];
        }),
        row("nats-creds", "/etc/switchboard/nats.creds", |c| {
            c.nats.creds_file = Some(PathBuf::from("/etc/switchboard/nats.creds"));
        }),
        row("nats-token", "t0ken", |c| {
            c.nats.token = Some("t0ken".into())
        }),
        row("nats-user", "gw", |c| c.nats.user = Some("gw".into())),
        row("nats-password", "pw", |c| {
            c.nats.password = Some("pw".into())
        }),
        row("nats-tls-required", "true", |c| c.nats.tls_required = true),
        row("nats-tls-ca", "/etc/ca.pem", |c| {
            c.nats.tls_ca = Some(PathBuf::from("/etc/ca.pem"));
        }),
        row("nats-tls-cert", "/etc/client.pem", |c| {
            c.nats.tls_cert = Some(PathBuf::from("/etc/client.pem"));
        }),
        row("nats-tls-key", "/etc/client.key", |c| {
            c.nats.tls_key = Some(PathBuf::from("/etc/client.key"));
        }),
        row("nats-prefix", "acme", |c| c.nats.prefix = "acme".into()),
        row("nats-events-stream", "ACME_EVENTS", |c| {
            c.nats.events_stream = "ACME_EVENTS".into();
        }),
        row("nats-events-max-age-secs", "3600", |c| {
            c.nats.events_max_age = secs(3600);
        }),
        row("nats-events-max-bytes", "1048576", |c| {
            c.nats.events_max_bytes = 1 << 20;
        }),
        row("nats-storage", "memory", |c| {
            c.nats.storage = switchboard_nats::Storage::Memory;
        }),
        row("nats-replicas", "3", |c| c.nats.replicas = 3),
        row("nats-duplicate-window-secs", "30", |c| {
            c.nats.duplicate_window = secs(30);
        }),
        row("nats-send-stream", "ACME_SEND", |c| {
            c.nats.send_stream = "ACME_SEND".into();
        }),
        row("nats-send-consumer", "acme-send", |c| {
            c.nats.send_consumer = "acme-send".into();
        }),
        row("nats-publish-window", "64", |c| c.nats.publish_window = 64),
        row("nats-ack-timeout-ms", "750", |c| {
            c.nats.ack_timeout = ms(750)
        }),
        row("nats-retry-base-ms", "20", |c| c.nats.retry_base = ms(20)),
        row("nats-retry-max-ms", "900", |c| c.nats.retry_max = ms(900)),
        row("nats-command-attempts", "2", |c| {
            c.nats.command_attempts = 2
        }),
        row("nats-command-retry-base-ms", "30", |c| {
            c.nats.command_retry_base = ms(30);
        }),
        row("nats-command-retry-max-ms", "300", |c| {
            c.nats.command_retry_max = ms(300);
        }),
        row("nats-command-ack-wait-secs", "2", |c| {
            c.nats.command_ack_wait = secs(2);
        }),
        row("nats-command-worker-idle-ms", "250", |c| {
            c.nats.command_worker_idle = ms(250);
        }),
        row("http-header-read-timeout-ms", "1500", |c| {
            c.http.header_read_timeout = ms(1500);
        }),
        row("http-body-read-timeout-ms", "2500", |c| {
            c.http.body_read_timeout = ms(2500);
        }),
        row("http-idle-timeout-ms", "3500", |c| {
            c.http.idle_timeout = ms(3500);
        }),
        row("http-max-header-bytes", "16384", |c| {
            c.http.max_header_bytes = 16384;
        }),
        row("http-max-connections", "7", |c| {
            c.http.max_connections = 7;
        }),
        row("token-max-sessions", "25", |c| {
            c.token_max_sessions = 25;
        }),
        row("min-free-space-mb", "0", |c| c.storage.min_free_bytes = 0),
        row("store-reopen-backoff-min-ms", "250", |c| {
            c.storage.reopen_backoff_min = ms(250);
        }),
        row("store-reopen-backoff-max-ms", "20000", |c| {
            c.storage.reopen_backoff_max = ms(20_000);
        }),
        row("media-url-allow-private", "true", |c| {
            c.media_urls.allow_private = true;
        }),
        row("media-url-timeout-secs", "5", |c| {
            c.media_urls.timeout = secs(5);
        }),
        row("max-webhooks-per-session", "3", |c| {
            c.webhooks.max_per_session = 3;
        }),
        row("proxy", "socks5://u:p@127.0.0.1:1080", |c| {
            let proxy =
                crate::domain::proxy::Proxy::parse("socks5://u:p@127.0.0.1:1080", None, None)
                    .expect("a proxy URL");
            c.proxy = Some(proxy.clone());
            c.whatsapp.proxy = Some(proxy);
        }),
    ];
    #[cfg(feature = "wire")]
    rows.push(row("whatsapp-wire-media-host", "127.0.0.1:9", |c| {
        c.whatsapp.wire_media_host = Some("127.0.0.1:9".into());
    }));
    rows
}

/// Values each flag must refuse, as `(flag, value)`.
const REFUSED: &[(&str, &str)] = &[
    ("plugin-quarantine-after", "0"),
    ("plugin-max-memory-mib", "4096"),
    ("plugin-timeout-ms", "0"),
    ("integration-timeout-ms", "0"),
    ("integration-retry-base-ms", "0"),
    ("integration-max-attempts", "0"),
    ("whatsapp-version", "2.3000"),
    ("whatsapp-version", "2.x.1023456789"),
    ("listen", "localhost:3451"),
    ("metrics-listen", "9100"),
    ("webhook-retry-max-attempts", "0"),
    ("webhook-retry-delays-secs", "5,,30"),
    ("webhook-timeout-secs", "-1"),
    ("webhook-backlog-limit", "0"),
    ("blast-max-recipients", "0"),
    ("schedule-max-attempts", "0"),
    ("schedule-concurrency", "0"),
    ("schedule-send-timeout-secs", "0"),
    ("blast-send-timeout-secs", "0"),
    ("media-max-upload-bytes-per-session", "-1"),
    ("send-pacing", "sometimes"),
    ("send-per-minute", "-1"),
    ("send-min-gap-ms", "3600001"),
    ("log-format", "yaml"),
    ("sim", "maybe"),
    ("sim-seed", "-3"),
    ("max-body-bytes", "lots"),
    ("media-store", "ftp"),
    ("media-download", "sometimes"),
    ("media-download-timeout-secs", "0"),
    ("media-sweep-interval-ms", "0"),
    ("media-download-concurrency", "0"),
    ("media-max-upload-bytes", "-5"),
    ("nats-prefix", "a.b"),
    ("nats-events-stream", "has space"),
    ("nats-storage", "tape"),
    ("nats-replicas", "0"),
    ("nats-publish-window", "0"),
    ("nats-command-attempts", "0"),
    ("nats-events-max-bytes", "-1"),
    ("http-header-read-timeout-ms", "0"),
    ("http-max-header-bytes", "4096"),
    ("http-max-connections", "0"),
    ("token-max-sessions", "0"),
    ("token-max-sessions", "10001"),
    ("nats-command-worker-idle-ms", "0"),
    ("store-reopen-backoff-min-ms", "0"),
    ("media-url-timeout-secs", "0"),
    ("max-webhooks-per-session", "0"),
    ("proxy", "ftp://127.0.0.1:21"),
    ("proxy", "socks5://127.0.0.1"),
];

/// The `serve` flag definitions, exactly as `--help` prints them.
fn definitions() -> Command {
    <ServeArgs as Args>::augment_args(Command::new("serve"))
}

/// The environment variable of a flag, from its definition.
fn env_of(long: &str) -> Option<String> {
    definitions()
        .get_arguments()
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
}

/// Parses `serve` arguments with every environment variable detached, so the
/// result depends on `argv` alone, whatever this process's environment holds.
fn parse_flags<I: AsRef<str>>(argv: &[I]) -> Result<ServeArgs, clap::Error> {
    let argv = std::iter::once("serve").chain(argv.iter().map(AsRef::as_ref));
    let matches = Serve::command()
        .mut_args(|a| a.env(None))
        .try_get_matches_from(argv)?;
    Serve::from_arg_matches(&matches).map(|s| s.args)
}

/// A `Debug` rendering, which compares every field (the configuration types
/// do not all implement `PartialEq`).
fn shown(value: &impl std::fmt::Debug) -> String {
    format!("{value:?}")
}

/// Where two [`shown`] renderings differ, as the `, `-separated pieces only
/// one of them has, so a failure names the field instead of printing it all.
fn difference(got: &str, expected: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) =
        (got.split(", ").collect(), expected.split(", ").collect());
    // Longest common subsequence of pieces; the renderings are short.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut only_got, mut only_expected) = (0, 0, Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            (i, j) = (i + 1, j + 1);
        } else if j == b.len() || (i < a.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            only_got.push(a[i]);
            i += 1;
        } else {
            only_expected.push(b[j]);
            j += 1;
        }
    }
    format!("got {only_got:?}, expected {only_expected:?}")
}

/// The configuration of a `serve` without flags: [`Config::new`]'s defaults
/// at the documented data directory, on this build's default network.
fn documented_defaults() -> Config {
    let mut config = Config::new(crate::domain::data_dir::DEFAULT_DATA_DIR);
    config.network = DEFAULT_NETWORK.into();
    config
}

#[test]
fn every_serve_flag_has_a_table_row_and_every_row_names_a_serve_flag() {
    let defined: Vec<String> = definitions()
        .get_arguments()
        .filter(|a| !["help", "version"].contains(&a.get_id().as_str()))
        .map(|a| {
            a.get_long()
                .unwrap_or_else(|| panic!("`{}` has no long flag", a.get_id()))
                .to_owned()
        })
        .collect();
    let tabled: Vec<&str> = rows().iter().map(|r| r.long).collect();

    let untested: Vec<&String> = defined
        .iter()
        .filter(|l| !tabled.contains(&l.as_str()))
        .collect();
    assert!(
        untested.is_empty(),
        "serve flags without a row: {untested:?}"
    );
    let unknown: Vec<&&str> = tabled
        .iter()
        .filter(|l| !defined.iter().any(|d| d == *l))
        .collect();
    assert!(unknown.is_empty(), "rows naming no serve flag: {unknown:?}");
    let mut sorted = tabled.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), tabled.len(), "a flag has two rows");
    for (long, _) in REFUSED {
        assert!(
            defined.iter().any(|d| d == long),
            "refused value for `--{long}`, which is no serve flag"
        );
    }
}

#[test]
fn every_serve_flag_has_its_own_environment_variable_shown_in_help() {
    let mut seen: Vec<String> = Vec::new();
    let help = definitions().render_long_help().to_string();
    for row in rows() {
        let env = env_of(row.long).unwrap_or_else(|| panic!("--{} has no env", row.long));
        assert!(!seen.contains(&env), "{env} is the variable of two flags");
        assert!(
            help.contains(&format!("--{}", row.long)),
            "help lacks --{}",
            row.long
        );
        assert!(help.contains(&format!("[env: {env}")), "help lacks {env}");
        seen.push(env);
    }
}

#[test]
fn parsing_no_serve_flags_gives_the_documented_defaults() {
    let args = parse_flags::<&str>(&[]).expect("no flags parse");
    let (got, expected) = (shown(&args.config()), shown(&documented_defaults()));
    assert!(got == expected, "{}", difference(&got, &expected));
    assert_eq!(args.log_level, "info");
    assert_eq!(args.log_format, LogFormat::Text);
}

#[test]
fn every_serve_flag_reaches_its_config_field() {
    let default_args = parse_flags::<&str>(&[]).expect("no flags parse");
    let defaults = shown(&default_args.config());
    let mut failures = Vec::new();
    for row in rows() {
        let argv = [format!("--{}", row.long), row.value.to_owned()];
        let args = match parse_flags(&argv) {
            Ok(args) => args,
            Err(e) => {
                failures.push(format!("--{} {}: refused: {e}", row.long, row.value));
                continue;
            }
        };
        let got = shown(&args.config());
        match row.lands {
            Lands::InConfig(change) => {
                // Against the flag-free parse, so a changed default fails
                // the defaults test alone rather than every row.
                let mut expected = default_args.config();
                change(&mut expected);
                let expected = shown(&expected);
                if expected == defaults {
                    failures.push(format!("--{}: row value is the default", row.long));
                }
                if got != expected {
                    failures.push(format!(
                        "--{} {}: {}",
                        row.long,
                        row.value,
                        difference(&got, &expected)
                    ));
                }
            }
            Lands::InArgsOnly(check) => {
                if check(&default_args) {
                    failures.push(format!("--{}: row value is the default", row.long));
                }
                if !check(&args) {
                    failures.push(format!("--{} {}: not in the args", row.long, row.value));
                }
                if got != defaults {
                    failures.push(format!(
                        "--{} changed the config: {}",
                        row.long,
                        difference(&got, &defaults)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn malformed_serve_values_are_refused_with_an_error_naming_the_flag() {
    for (long, value) in REFUSED {
        // `--flag=value`, so a value starting with `-` is still a value.
        let err = match parse_flags(&[format!("--{long}={value}")]) {
            Ok(args) => panic!("--{long}={value} was accepted: {:?}", args.config()),
            Err(e) => e,
        };
        assert!(
            matches!(
                err.kind(),
                ErrorKind::ValueValidation | ErrorKind::InvalidValue
            ),
            "--{long}={value}: {:?}: {err}",
            err.kind()
        );
        assert!(
            err.to_string().contains(&format!("--{long}")),
            "the error for --{long}={value} does not name the flag: {err}"
        );
    }
}

#[test]
fn a_plugin_kv_cap_too_large_to_count_in_bytes_saturates_instead_of_wrapping() {
    // 2^54 KiB is 2^64 bytes: one more than u64 holds. A shift would wrap
    // it to 0, a cap that refuses every write.
    let args = parse_flags(&["--plugin-kv-cap-kib", "18014398509481984"]).expect("a u64 parses");
    assert_eq!(args.config().plugins.kv_cap_bytes, usize::MAX);
}

/// Set in a child process started by the environment tests.
const CHILD_MARKER: &str = "SWITCHBOARD_CONFIG_TESTS_CHILD";

/// What a child process parsed from its environment alone.
#[derive(Debug, PartialEq)]
enum ChildParse {
    /// `ServeArgs` and `Config`, each as [`shown`].
    Parsed { args: String, config: String },
    /// The parse error's message.
    Refused(String),
}

/// Starts this test binary again running only the test `test`, with an
/// environment holding only `var` and the marker: that test then acts as
/// the child ([`answered_as_child`]) instead of running its checks.
fn spawn_child(test: &str, var: Option<(&str, &str)>) -> Child {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    let mut cmd = Process::new(std::env::current_exe().expect("the test binary"));
    cmd.arg(format!("{module}::{test}"))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(CHILD_MARKER, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((name, value)) = var {
        cmd.env(name, value);
    }
    cmd.spawn().expect("the test binary starts again")
}

fn child_result(child: Child, what: &str) -> ChildParse {
    let out = child.wait_with_output().expect("the child finishes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |prefix: &str| {
        stdout
            .lines()
            // libtest prints the test's name without ending the line.
            .find_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
            .map(str::to_owned)
    };
    if let Some(error) = line("SERVE-ERROR ") {
        return ChildParse::Refused(error);
    }
    match (line("SERVE-ARGS "), line("SERVE-CONFIG ")) {
        (Some(args), Some(config)) => ChildParse::Parsed { args, config },
        _ => panic!(
            "{what}: the child printed no parse ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// In a child process (the marker is set), parses `serve` from the
/// environment alone, prints the outcome for the parent and returns true;
/// in the parent, returns false. The child is the environment test itself,
/// started again, so no test of its own stands idle in the suite.
fn answered_as_child() -> bool {
    if std::env::var_os(CHILD_MARKER).is_none() {
        return false;
    }
    match Serve::try_parse_from(["serve"]) {
        Ok(serve) => {
            println!("SERVE-ARGS {}", shown(&serve.args));
            println!("SERVE-CONFIG {}", shown(&serve.args.config()));
        }
        Err(e) => println!("SERVE-ERROR {}", shown(&e.to_string())),
    }
    true
}

#[test]
fn every_serve_environment_variable_gives_the_same_config_as_its_flag() {
    const TEST: &str = "every_serve_environment_variable_gives_the_same_config_as_its_flag";
    if answered_as_child() {
        return;
    }
    // All children at once: each is a fresh process, so they cannot interfere.
    let baseline = spawn_child(TEST, None);
    let children: Vec<(Row, String, Child)> = rows()
        .into_iter()
        .map(|row| {
            let env = env_of(row.long).unwrap_or_else(|| panic!("--{} has no env", row.long));
            let child = spawn_child(TEST, Some((&env, row.value)));
            (row, env, child)
        })
        .collect();

    let defaults = parse_flags::<&str>(&[]).expect("no flags parse");
    assert_eq!(
        child_result(baseline, "no variable"),
        ChildParse::Parsed {
            args: shown(&defaults),
            config: shown(&defaults.config()),
        },
        "an empty environment does not give the flag defaults"
    );
    let mut failures = Vec::new();
    for (row, env, child) in children {
        let from_flag = parse_flags(&[format!("--{}", row.long), row.value.to_owned()])
            .expect("the flag form parses");
        let expected = ChildParse::Parsed {
            args: shown(&from_flag),
            config: shown(&from_flag.config()),
        };
        let got = child_result(child, &env);
        let why = match (&got, &expected) {
            _ if got == expected => continue,
            (
                ChildParse::Parsed { args, config },
                ChildParse::Parsed {
                    args: want_args,
                    config: want_config,
                },
            ) if config == want_config => difference(args, want_args),
            (ChildParse::Parsed { config, .. }, ChildParse::Parsed { config: want, .. }) => {
                difference(config, want)
            }
            _ => format!("got {got:?}"),
        };
        failures.push(format!("{env}={} (--{}): {why}", row.value, row.long));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn malformed_environment_values_are_refused_with_an_error_naming_the_flag() {
    const TEST: &str = "malformed_environment_values_are_refused_with_an_error_naming_the_flag";
    if answered_as_child() {
        return;
    }
    let children: Vec<(&str, &str, Child)> = REFUSED
        .iter()
        .map(|(long, value)| {
            let env = env_of(long).unwrap_or_else(|| panic!("--{long} has no env"));
            (*long, *value, spawn_child(TEST, Some((&env, value))))
        })
        .collect();
    for (long, value, child) in children {
        match child_result(child, long) {
            ChildParse::Refused(error) => assert!(
                error.contains(&format!("--{long}")),
                "the error for {value:?} in --{long}'s variable does not name it: {error}"
            ),
            parsed => panic!("{value:?} in --{long}'s variable was accepted: {parsed:?}"),
        }
    }
}
