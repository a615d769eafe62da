//! The data directory's layout where both sides of the binary need it: the
//! server writes the API token there, and the command-line client reads it
//! back when no token is given.

/// The data directory when none is configured (relative to the working
/// directory; the server resolves it to an absolute path at start).
pub const DEFAULT_DATA_DIR: &str = "./data";

/// The generated API token's file inside the data directory.
pub const TOKEN_FILE: &str = "api-token";

/// The media directory inside the data directory (the local media store's
/// default).
pub const MEDIA_DIR: &str = "media";
