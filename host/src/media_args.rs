//! The media flags of `switchboard serve`: where media bytes are kept (a
//! directory, or an S3-compatible bucket), when inbound media is
//! downloaded, the limits, and retention.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::media_store::{MediaStoreConfig, S3Config};
use crate::runtime::media::{
    DEFAULT_DOWNLOAD_CONCURRENCY, DEFAULT_MAX_DOWNLOAD_BYTES, DEFAULT_MAX_UPLOAD_BYTES,
    DEFAULT_MAX_UPLOAD_BYTES_PER_SESSION, DEFAULT_ORPHAN_GRACE, DownloadMode, MediaConfig,
};

/// Where media bytes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MediaStoreKind {
    /// A directory (--media-dir, by default `<data-dir>/media`).
    Local,
    /// An S3-compatible bucket (--media-s3-*).
    S3,
}

/// When inbound media is downloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MediaDownloadArg {
    /// Before the message's event is published.
    Eager,
    /// On the first read of its media route.
    Lazy,
}

/// The media flags.
#[derive(Debug, Clone, Args)]
pub struct MediaArgs {
    /// Where media bytes are kept.
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_STORE",
        value_enum,
        default_value = "local"
    )]
    pub media_store: MediaStoreKind,
    /// The local media directory (default `<data-dir>/media`).
    #[arg(long, env = "SWITCHBOARD_MEDIA_DIR")]
    pub media_dir: Option<PathBuf>,
    /// S3: the endpoint URL of a non-AWS service (MinIO, Ceph, R2).
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_ENDPOINT")]
    pub media_s3_endpoint: Option<String>,
    /// S3: the bucket (it must exist).
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_BUCKET")]
    pub media_s3_bucket: Option<String>,
    /// S3: the region.
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_REGION", default_value = "us-east-1")]
    pub media_s3_region: String,
    /// S3: the access key id (unset: the AWS environment's credentials).
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_S3_ACCESS_KEY_ID",
        hide_env_values = true
    )]
    pub media_s3_access_key_id: Option<String>,
    /// S3: the secret access key.
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_S3_SECRET_ACCESS_KEY",
        hide_env_values = true
    )]
    pub media_s3_secret_access_key: Option<String>,
    /// S3: a session token for temporary credentials.
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_S3_SESSION_TOKEN",
        hide_env_values = true
    )]
    pub media_s3_session_token: Option<String>,
    /// S3: path-style requests (endpoint/bucket/key), which most self-hosted services need.
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_PATH_STYLE", default_value_t = false, action = clap::ArgAction::Set)]
    pub media_s3_path_style: bool,
    /// S3: allow a plain http:// endpoint.
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_ALLOW_HTTP", default_value_t = false, action = clap::ArgAction::Set)]
    pub media_s3_allow_http: bool,
    /// S3: answer media reads with a 302 to a presigned URL valid this many
    /// seconds, instead of streaming through the gateway (0: stream).
    #[arg(long, env = "SWITCHBOARD_MEDIA_S3_PRESIGN_SECS", default_value_t = 0)]
    pub media_s3_presign_secs: u64,
    /// When inbound media is downloaded: eager (before the webhook fires) or lazy (on first read).
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_DOWNLOAD",
        value_enum,
        default_value = "eager"
    )]
    pub media_download: MediaDownloadArg,
    /// Longest one inbound media download may take, in seconds.
    #[arg(long, env = "SWITCHBOARD_MEDIA_DOWNLOAD_TIMEOUT_SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub media_download_timeout_secs: u64,
    /// Largest inbound media downloaded, in bytes.
    #[arg(long, env = "SWITCHBOARD_MEDIA_MAX_DOWNLOAD_BYTES", default_value_t = DEFAULT_MAX_DOWNLOAD_BYTES)]
    pub media_max_download_bytes: u64,
    /// Largest upload (POST /api/v1/sessions/{id}/media), in bytes.
    #[arg(long, env = "SWITCHBOARD_MEDIA_MAX_UPLOAD_BYTES", default_value_t = DEFAULT_MAX_UPLOAD_BYTES)]
    pub media_max_upload_bytes: u64,
    /// Most bytes one session may hold in uploads, stored and being written
    /// (0: no quota).
    #[arg(long, env = "SWITCHBOARD_MEDIA_MAX_UPLOAD_BYTES_PER_SESSION", default_value_t = DEFAULT_MAX_UPLOAD_BYTES_PER_SESSION)]
    pub media_max_upload_bytes_per_session: u64,
    /// Media older than this many seconds is removed (0: kept by age; default 30 days).
    #[arg(long, env = "SWITCHBOARD_MEDIA_RETENTION_SECS", default_value_t = 30 * 24 * 3600)]
    pub media_retention_secs: u64,
    /// Media is removed while the store holds more than this many bytes, the
    /// oldest of the session holding the most first (0: no bound).
    #[arg(long, env = "SWITCHBOARD_MEDIA_RETENTION_BYTES", default_value_t = 0)]
    pub media_retention_bytes: u64,
    /// A session's oldest media is removed while it holds more than this
    /// many bytes, before the total bound is looked at (0: no bound).
    #[arg(
        long,
        env = "SWITCHBOARD_MEDIA_RETENTION_BYTES_PER_SESSION",
        default_value_t = 0
    )]
    pub media_retention_bytes_per_session: u64,
    /// Pause between media retention sweeps, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_MEDIA_SWEEP_INTERVAL_MS", default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub media_sweep_interval_ms: u64,
    /// Inbound media downloads in flight at once, gateway-wide.
    #[arg(long, env = "SWITCHBOARD_MEDIA_DOWNLOAD_CONCURRENCY", default_value_t = DEFAULT_DOWNLOAD_CONCURRENCY, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub media_download_concurrency: u64,
    /// Media bytes that no record names (left by a crash) are removed by the
    /// sweep once they are this many seconds old.
    #[arg(long, env = "SWITCHBOARD_MEDIA_ORPHAN_GRACE_SECS", default_value_t = DEFAULT_ORPHAN_GRACE.as_secs())]
    pub media_orphan_grace_secs: u64,
    /// The gateway's public base URL (`https://gw.example.com`): media URLs
    /// in events and answers are written under it (unset: paths).
    #[arg(long, env = "SWITCHBOARD_PUBLIC_URL")]
    pub public_url: Option<String>,
}

impl MediaArgs {
    /// The media service's configuration.
    pub fn config(&self) -> MediaConfig {
        let nonzero = |n: u64| (n > 0).then_some(n);
        MediaConfig {
            mode: match self.media_download {
                MediaDownloadArg::Eager => DownloadMode::Eager,
                MediaDownloadArg::Lazy => DownloadMode::Lazy,
            },
            download_timeout: Duration::from_secs(self.media_download_timeout_secs),
            max_download_bytes: self.media_max_download_bytes,
            max_upload_bytes: self.media_max_upload_bytes,
            max_upload_bytes_per_session: nonzero(self.media_max_upload_bytes_per_session),
            retention_age: nonzero(self.media_retention_secs).map(Duration::from_secs),
            retention_bytes: nonzero(self.media_retention_bytes),
            retention_bytes_per_session: nonzero(self.media_retention_bytes_per_session),
            sweep_interval: Duration::from_millis(self.media_sweep_interval_ms),
            download_concurrency: usize::try_from(self.media_download_concurrency).unwrap_or(1),
            orphan_grace: Duration::from_secs(self.media_orphan_grace_secs),
            public_url: self
                .public_url
                .as_deref()
                .map(|u| u.trim().trim_end_matches('/').to_owned())
                .unwrap_or_default(),
        }
    }

    /// The media store's backend; `data_dir` places the default directory.
    pub fn store(&self, data_dir: &Path) -> MediaStoreConfig {
        let some = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        match self.media_store {
            MediaStoreKind::Local => MediaStoreConfig::Local {
                dir: self
                    .media_dir
                    .clone()
                    .unwrap_or_else(|| data_dir.join(crate::domain::data_dir::MEDIA_DIR)),
            },
            MediaStoreKind::S3 => MediaStoreConfig::S3(S3Config {
                endpoint: some(&self.media_s3_endpoint),
                bucket: some(&self.media_s3_bucket).unwrap_or_default(),
                region: self.media_s3_region.clone(),
                access_key_id: some(&self.media_s3_access_key_id),
                secret_access_key: some(&self.media_s3_secret_access_key),
                session_token: some(&self.media_s3_session_token),
                path_style: self.media_s3_path_style,
                allow_http: self.media_s3_allow_http,
                presign_for: nonzero_secs(self.media_s3_presign_secs),
            }),
        }
    }
}

fn nonzero_secs(secs: u64) -> Option<Duration> {
    (secs > 0).then(|| Duration::from_secs(secs))
}
