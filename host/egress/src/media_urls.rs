//! The knobs of media fetched by URL for a send (`url` in an image, video,
//! audio or document send, from the API, blasts, scheduled sends, NATS
//! commands and plugin sends). They are apart from the webhooks' own: a
//! webhook's URL is the operator's integration, while a media URL comes
//! from whoever may send, so opening private addresses for one must not
//! open them for the other.

use std::time::Duration;

use crate::fetch::{FetchError, Fetcher};
use crate::guard::Guard;
use crate::hosts::StaticHosts;

/// How media URLs are checked and fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaUrlConfig {
    /// Allow media URLs that lead to loopback, private, link-local or
    /// other internal addresses (`MEDIA_URL_ALLOW_PRIVATE`, false).
    pub allow_private: bool,
    /// The longest one fetch may take in all, connecting and reading the
    /// whole answer (`MEDIA_URL_TIMEOUT_SECS`, 20): a scheduled send's or
    /// a blast's fetch holds its worker no longer than this.
    pub timeout: Duration,
    /// Test-only fixed DNS answers (`None`, the system's resolver); no flag
    /// or environment variable sets it. The guard checks what it answers.
    #[doc(hidden)]
    pub static_hosts: Option<StaticHosts>,
}

impl Default for MediaUrlConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            timeout: Duration::from_secs(20),
            static_hosts: None,
        }
    }
}

impl MediaUrlConfig {
    /// The public-address rule of media URLs.
    pub fn guard(&self) -> Guard {
        Guard::new(
            self.allow_private,
            "set MEDIA_URL_ALLOW_PRIVATE=true to allow them",
        )
        .with_hosts(self.static_hosts.clone())
    }

    /// A fetcher holding media URLs to this rule and time bound.
    pub fn fetcher(&self) -> Result<Fetcher, FetchError> {
        Fetcher::new(self.guard(), self.timeout)
    }
}
