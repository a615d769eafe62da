//! The operator console: a browser app served at `/console/`, its files
//! (`host/api/console/`: HTML, CSS, ES modules, a vendored QR encoder) embedded
//! in the binary at compile time. No build step, no CDN.
//!
//! The console itself is public: it holds no data. It signs in with the API
//! token, which it keeps in the browser's `sessionStorage` and sends as
//! `Authorization: Bearer` on every `/api/v1` call it makes (the live event
//! stream too: it reads the stream with `fetch`, never `EventSource`, so the
//! token never goes into a URL).
//!
//! Every answer carries a strict Content-Security-Policy (same-origin
//! scripts, styles and connections; images also from `data:` URLs, which is
//! how the QR code is drawn), `X-Content-Type-Options: nosniff`, no referrer
//! and no framing.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;
use super::error::ApiError;

/// Embeds the listed files of `host/api/console/` as `(path, bytes)`.
macro_rules! assets {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/console/", $path)) as &[u8])),*]
    };
}

/// Every file of the console, by its path under `/console/`.
const ASSETS: &[(&str, &[u8])] = assets![
    "index.html",
    "icon.svg",
    "css/base.css",
    "css/layout.css",
    "css/components.css",
    "css/pages.css",
    "js/main.js",
    "js/router.js",
    "js/api.js",
    "js/auth.js",
    "js/dom.js",
    "js/ui.js",
    "js/format.js",
    "js/poll.js",
    "js/stream.js",
    "js/qr.js",
    "js/pages/signin.js",
    "js/pages/sessions.js",
    "js/pages/session-actions.js",
    "js/pages/pairing.js",
    "js/pages/session.js",
    "js/pages/tail.js",
    "js/pages/session-data.js",
    "js/pages/picker.js",
    "js/pages/webhooks.js",
    "js/pages/dlq.js",
    "js/pages/blasts.js",
    "js/pages/blast-form.js",
    "js/pages/blast-detail.js",
    "js/pages/plugins.js",
    "js/pages/bindings.js",
    "js/pages/sim.js",
    "vendor/qrcode.mjs",
    "vendor/qrcode-generator.LICENSE.txt",
];

/// The policy every console answer carries.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; \
     base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// The console routes (public: the console holds no data itself).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console", get(redirect))
        .route("/console/", get(index))
        .route("/console/{*path}", get(file))
}

/// The console lives under `/console/`, so its relative module paths resolve.
#[utoipa::path(
    get,
    path = "/console",
    operation_id = "console_redirect",
    tag = "console",
    summary = "The operator console (redirect)",
    security(()),
    responses(
        (status = 308, description = "Redirects to `/console/`.", headers(("Location" = String, description = "`/console/`"))),
    )
)]
pub(crate) async fn redirect() -> Redirect {
    Redirect::permanent("/console/")
}

/// A browser app over this API; it signs in with the API token, kept in the
/// browser's session storage.
#[utoipa::path(
    get,
    path = "/console/",
    operation_id = "console_index",
    tag = "console",
    summary = "The operator console",
    security(()),
    responses(
        (status = 200, description = "The console's page.", content_type = "text/html", body = String),
    )
)]
pub(crate) async fn index() -> Response {
    asset("index.html")
}

/// A script, stylesheet or image the console's page loads, by its path under
/// `/console/` (it may hold slashes, e.g. `js/main.js`).
#[utoipa::path(
    get,
    path = "/console/{path}",
    operation_id = "console_asset",
    tag = "console",
    summary = "A file of the console",
    security(()),
    params(("path" = String, Path, description = "The file's path under `/console/`.")),
    responses(
        (status = 200, description = "The file, with its own content type.", content_type = "application/octet-stream", body = String),
        (status = 404, description = "No such file (`route_not_found`).", body = crate::openapi::common::ErrorBody),
    )
)]
pub(crate) async fn file(Path(path): Path<String>) -> Response {
    asset(&path)
}

/// One embedded file with its content type and the console's headers, or
/// `404 route_not_found`.
fn asset(path: &str) -> Response {
    let Some(bytes) = find(path) else {
        return ApiError::not_found(
            "route_not_found",
            format!("the console has no file `{path}`; open /console/"),
        )
        .into_response();
    };
    let mut resp = (StatusCode::OK, bytes).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Small files, embedded: revalidating costs little and an upgraded
    // gateway never serves a stale mix of modules.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// The embedded bytes of `path`.
fn find(path: &str) -> Option<&'static [u8]> {
    ASSETS.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

/// The content type by file extension.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn console_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("console")
    }

    fn files_under(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("console directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                files_under(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_file_of_the_console_directory_is_embedded() {
        let mut on_disk = Vec::new();
        files_under(&console_dir(), &console_dir(), &mut on_disk);
        for file in &on_disk {
            assert!(
                find(file).is_some(),
                "host/api/console/{file} is not in ASSETS"
            );
        }
        assert_eq!(
            on_disk.len(),
            ASSETS.len(),
            "ASSETS lists a file twice or one that is gone"
        );
    }

    /// The live tail's event filter offers exactly the gateway's event
    /// names, in their order: a new event shows up there or fails here.
    #[test]
    fn the_tail_page_lists_every_event_name_and_no_other() {
        let page =
            std::fs::read_to_string(console_dir().join("js/pages/tail.js")).expect("tail.js");
        let start = page.find("EVENT_NAMES = [").expect("the list") + "EVENT_NAMES = [".len();
        let end = start + page[start..].find("];").expect("its end");
        let listed: Vec<&str> = page[start..end]
            .split(',')
            .map(|n| n.trim().trim_matches('\''))
            .filter(|n| !n.is_empty())
            .collect();
        let names: Vec<&str> = crate::domain::event::EventName::ALL
            .iter()
            .map(|n| n.as_str())
            .collect();
        assert_eq!(listed, names);
    }

    /// Every relative `import … from './x.js'` and every `href`/`src` of the
    /// page names an embedded file, so no module 404s in the browser.
    #[test]
    fn every_relative_reference_names_an_embedded_file() {
        for (path, bytes) in ASSETS
            .iter()
            .filter(|(p, _)| p.ends_with(".js") || p.ends_with(".html"))
        {
            let text = std::str::from_utf8(bytes).expect("utf-8");
            let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            for (at, quote) in text.match_indices(['\'', '"']) {
                let rest = &text[at + 1..];
                if !(rest.starts_with("./") || rest.starts_with("../")) {
                    continue;
                }
                let Some(end) = rest.find(quote) else {
                    continue;
                };
                let piece = &rest[..end];
                if piece
                    .rsplit_once('.')
                    .is_some_and(|(_, e)| ["js", "mjs", "css", "svg"].contains(&e))
                {
                    let target = resolve(dir, piece);
                    assert!(
                        find(&target).is_some(),
                        "{path} refers to `{piece}` ({target}), which is not embedded"
                    );
                }
            }
        }
    }

    fn resolve(dir: &str, reference: &str) -> String {
        let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        for seg in reference.split('/') {
            match seg {
                "." => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        parts.join("/")
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("js/main.js"), "text/javascript; charset=utf-8");
        assert_eq!(
            content_type("vendor/qrcode.mjs"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("css/base.css"), "text/css; charset=utf-8");
    }
}
