//! The client's HTTP calls: the base URL, the bearer token, and API errors
//! turned into [`CliError`]s that name the gateway's error code and message.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, RequestBuilder};
use serde_json::Value;

use switchboard_domain::data_dir::{DEFAULT_DATA_DIR, TOKEN_FILE};

use super::Connection;

/// Why a client command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The gateway answered with an error.
    #[error("the gateway answered {status} {code}: {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The API's error code.
        code: String,
        /// The API's message.
        message: String,
    },
    /// The gateway could not be reached or its answer not read.
    #[error("could not reach the gateway at {url}: {message}")]
    Transport {
        /// The base URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The command's own input is unusable (a file, a flag).
    #[error("{0}")]
    Input(String),
    /// The work the command followed ended badly (a blast that failed).
    #[error("{0}")]
    Outcome(String),
    /// Writing the output failed.
    #[error("could not write the output: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// The process exit code: 1 for an API error or a bad outcome, 2 for bad
    /// input, 3 when the gateway cannot be reached, 4 when output fails.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Api { .. } | CliError::Outcome(_) => 1,
            CliError::Input(_) => 2,
            CliError::Transport { .. } => 3,
            CliError::Output(_) => 4,
        }
    }
}

/// The token when `--token`/`SWITCHBOARD_TOKEN` is not given: `API_TOKEN`,
/// then the file the server generates in its data directory.
fn fallback_token() -> Option<String> {
    if let Ok(t) = std::env::var("API_TOKEN")
        && !t.trim().is_empty()
    {
        return Some(t.trim().to_owned());
    }
    let dir = std::env::var_os("SWITCHBOARD_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
    std::fs::read_to_string(dir.join(TOKEN_FILE))
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// A configured connection to one gateway.
pub(super) struct Api {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Api {
    /// A client for `conn`.
    pub fn new(conn: &Connection) -> Result<Self, CliError> {
        let base = conn.url.trim_end_matches('/').to_owned();
        let parsed = reqwest::Url::parse(&base)
            .map_err(|e| CliError::Input(format!("--url `{base}` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(CliError::Input(format!(
                "--url `{base}` must be an http or https URL"
            )));
        }
        // rustls's `ring` backend as the process's provider (kept when one is
        // already installed): reqwest is built without a provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(conn.timeout_secs.max(1)))
            .user_agent(concat!("switchboard-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CliError::Input(format!("could not build the HTTP client: {e}")))?;
        let token = conn
            .token
            .clone()
            .filter(|t| !t.trim().is_empty())
            .or_else(fallback_token);
        Ok(Self { base, token, http })
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        req
    }

    async fn call(&self, req: RequestBuilder) -> Result<Value, CliError> {
        let transport = |e: reqwest::Error| CliError::Transport {
            url: self.base.clone(),
            message: innermost(&e),
        };
        let resp = req.send().await.map_err(transport)?;
        let status = resp.status();
        let text = resp.text().await.map_err(transport)?;
        let body: Option<Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            if text.trim().is_empty() {
                return Ok(serde_json::json!({ "success": true }));
            }
            return body.ok_or_else(|| CliError::Transport {
                url: self.base.clone(),
                message: format!("the answer ({status}) is not JSON"),
            });
        }
        let error = body.as_ref().and_then(|b| b.get("error"));
        let field = |k: &str| {
            error
                .and_then(|e| e.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Err(CliError::Api {
            status: status.as_u16(),
            code: field("code").unwrap_or_else(|| "http_error".into()),
            message: field("message").unwrap_or_else(|| {
                let t = text.trim();
                if t.is_empty() {
                    status.canonical_reason().unwrap_or("error").to_owned()
                } else {
                    t.chars().take(200).collect()
                }
            }),
        })
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, CliError> {
        self.call(self.request(Method::GET, path)).await
    }

    /// `POST path` with a JSON body (or none).
    pub async fn post(&self, path: &str, body: Option<&Value>) -> Result<Value, CliError> {
        let mut req = self.request(Method::POST, path);
        if let Some(b) = body {
            req = req.json(b);
        }
        self.call(req).await
    }

    /// `POST path` with raw bytes of `content_type`.
    pub async fn post_bytes(
        &self,
        path: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> Result<Value, CliError> {
        let req = self
            .request(Method::POST, path)
            .header(CONTENT_TYPE, content_type)
            .body(bytes);
        self.call(req).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<Value, CliError> {
        self.call(self.request(Method::DELETE, path)).await
    }
}

/// The innermost cause of a transport error ("Connection refused").
fn innermost(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    if e.is_timeout() {
        format!("timed out ({cause})")
    } else {
        cause.to_string()
    }
}

/// One path segment, percent-encoded.
pub(super) fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(seg("alice-1.x_y"), "alice-1.x_y");
        assert_eq!(seg("a/b c"), "a%2Fb%20c");
    }
}
