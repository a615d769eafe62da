//! Where the media store keeps its bytes: a local directory or an
//! S3-compatible bucket, and whether media routes may answer with a
//! presigned URL instead of the bytes.

use std::path::PathBuf;
use std::time::Duration;

/// The media store's backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaStoreConfig {
    /// Files under a directory (by default `<data-dir>/media`).
    Local {
        /// The directory; created when missing.
        dir: PathBuf,
    },
    /// Objects in an S3-compatible bucket.
    S3(S3Config),
}

/// An S3-compatible bucket.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Config {
    /// The endpoint URL for a non-AWS service (MinIO, Ceph, R2, moto);
    /// `None` is AWS itself.
    pub endpoint: Option<String>,
    /// The bucket (it must exist).
    pub bucket: String,
    /// The region (`us-east-1` when the service ignores it).
    pub region: String,
    /// The access key id; `None` takes credentials from the environment
    /// the AWS way (instance profile, web identity).
    pub access_key_id: Option<String>,
    /// The secret access key.
    pub secret_access_key: Option<String>,
    /// A session token for temporary credentials.
    pub session_token: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), which most self-hosted
    /// services need, instead of virtual-hosted ones (`bucket.endpoint/key`).
    pub path_style: bool,
    /// Whether a plain `http://` endpoint is allowed.
    pub allow_http: bool,
    /// When set, media routes answer `302` to a presigned URL valid this
    /// long instead of streaming the bytes through the gateway.
    pub presign_for: Option<Duration>,
}

impl std::fmt::Debug for S3Config {
    /// Credentials are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field(
                "access_key_id",
                &self.access_key_id.as_ref().map(|_| "<set>"),
            )
            .field(
                "secret_access_key",
                &self.secret_access_key.as_ref().map(|_| "<set>"),
            )
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<set>"),
            )
            .field("path_style", &self.path_style)
            .field("allow_http", &self.allow_http)
            .field("presign_for", &self.presign_for)
            .finish()
    }
}
