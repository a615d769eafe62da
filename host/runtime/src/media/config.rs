//! The media knobs: when inbound media is downloaded, how long and how
//! large a download may be, the upload limit, retention, and the public
//! URL media routes are written under; and what each session may hold
//! (its upload quota and its share of retained media), so one tenant's
//! media cannot crowd out another's.

use std::time::Duration;

/// When inbound media is downloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DownloadMode {
    /// Before the message's event is published, so a webhook can fetch it
    /// at once.
    #[default]
    Eager,
    /// On the first read of its media route.
    Lazy,
}

impl std::str::FromStr for DownloadMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "eager" => Ok(Self::Eager),
            "lazy" => Ok(Self::Lazy),
            other => Err(format!(
                "`{other}` is not a download mode; use eager or lazy"
            )),
        }
    }
}

/// Default longest download of one inbound media.
pub const DEFAULT_DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// Default largest inbound media downloaded: 512 MiB.
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 512 * 1024 * 1024;
/// Default largest upload: 100 MiB (the largest document a send takes).
pub const DEFAULT_MAX_UPLOAD_BYTES: u64 = 100 * 1024 * 1024;
/// Default most bytes one session may hold in uploads: 1 GiB (ten of the
/// largest uploads).
pub const DEFAULT_MAX_UPLOAD_BYTES_PER_SESSION: u64 = 1024 * 1024 * 1024;
/// Default age after which media is removed: 30 days.
pub const DEFAULT_RETENTION_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Default downloads in flight at once, gateway-wide.
pub const DEFAULT_DOWNLOAD_CONCURRENCY: u64 = 4;
/// Default age after which bytes without a record (left by a crash between
/// writing an upload and recording it) are removed by the sweep.
pub const DEFAULT_ORPHAN_GRACE: Duration = Duration::from_secs(3600);
/// Default pause between retention sweeps.
pub const DEFAULT_SWEEP_INTERVAL: Duration = Duration::from_secs(600);

/// Everything the media service is configured with.
#[derive(Debug, Clone)]
pub struct MediaConfig {
    /// When inbound media is downloaded.
    pub mode: DownloadMode,
    /// Longest one download may take, start to end.
    pub download_timeout: Duration,
    /// Largest inbound media downloaded; a larger one fails, saying so.
    pub max_download_bytes: u64,
    /// Largest upload.
    pub max_upload_bytes: u64,
    /// Most bytes one session may hold in uploads (stored, and being
    /// written); an upload past it is refused before its bytes are kept.
    /// `None` sets no quota.
    pub max_upload_bytes_per_session: Option<u64>,
    /// Media older than this is removed; `None` keeps it by age.
    pub retention_age: Option<Duration>,
    /// The oldest media is removed while the store holds more than this
    /// many bytes; `None` sets no bound. The session holding the most
    /// gives up its oldest first, so one session's media never evicts
    /// another's while it holds more.
    pub retention_bytes: Option<u64>,
    /// A session's oldest media is removed while it holds more than this
    /// many bytes, before the total bound is looked at; `None` sets no
    /// bound.
    pub retention_bytes_per_session: Option<u64>,
    /// Pause between retention sweeps.
    pub sweep_interval: Duration,
    /// Downloads in flight at once, gateway-wide.
    pub download_concurrency: usize,
    /// Bytes in the store that no record names (a crash between writing
    /// and recording them, a session deleted mid-download) are removed by
    /// the sweep once they are this old.
    pub orphan_grace: Duration,
    /// Written before media routes in media objects (the gateway's public
    /// URL, no trailing slash); empty gives paths.
    pub public_url: String,
}

impl Default for MediaConfig {
    fn default() -> Self {
        Self {
            mode: DownloadMode::Eager,
            download_timeout: DEFAULT_DOWNLOAD_TIMEOUT,
            max_download_bytes: DEFAULT_MAX_DOWNLOAD_BYTES,
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            max_upload_bytes_per_session: Some(DEFAULT_MAX_UPLOAD_BYTES_PER_SESSION),
            retention_age: Some(DEFAULT_RETENTION_AGE),
            retention_bytes: None,
            retention_bytes_per_session: None,
            sweep_interval: DEFAULT_SWEEP_INTERVAL,
            download_concurrency: DEFAULT_DOWNLOAD_CONCURRENCY as usize,
            orphan_grace: DEFAULT_ORPHAN_GRACE,
            public_url: String::new(),
        }
    }
}
