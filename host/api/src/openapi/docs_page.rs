//! `/docs`: the interactive API reference (Swagger UI 5, vendored from the
//! npm package `swagger-ui-dist` into `host/api/assets/swagger-ui/` with its
//! licence) and the small script that points it at the document. Every asset
//! is compiled into the binary; the page loads nothing from elsewhere, and
//! its Content-Security-Policy forbids it to.

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;

use crate::AppState;

const INDEX: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-initializer.js"></script>
</body>
</html>
"#;

/// Points Swagger UI at the document; no validator badge (it would call
/// validator.swagger.io), the token kept across reloads in this browser.
const INITIALIZER: &str = r##"window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
};
"##;

const CSS: &str = include_str!("../../assets/swagger-ui/swagger-ui.css");
const BUNDLE: &str = include_str!("../../assets/swagger-ui/swagger-ui-bundle.js");

/// Same-origin only: scripts, styles, fetches and images from this gateway
/// (images also as `data:` URIs, which the stylesheet uses).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'";

/// How long browsers may keep the assets; they change only with the binary.
const ASSET_CACHE: &str = "public, max-age=3600";

/// The reference page's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/docs", get(index))
        .route("/docs/swagger-initializer.js", get(initializer))
        .route("/docs/swagger-ui.css", get(stylesheet))
        .route("/docs/swagger-ui-bundle.js", get(bundle))
}

/// The interactive API reference.
#[utoipa::path(
    get,
    path = "/docs",
    tag = "reference",
    security(()),
    responses((status = 200, description = "The reference page; it loads only the assets below.", content_type = "text/html", body = String))
)]
pub(super) async fn index() -> impl IntoResponse {
    ([(header::CONTENT_SECURITY_POLICY, CSP)], Html(INDEX))
}

/// The script that starts Swagger UI on the document.
#[utoipa::path(
    get,
    path = "/docs/swagger-initializer.js",
    tag = "reference",
    security(()),
    responses((status = 200, description = "JavaScript.", content_type = "text/javascript", body = String))
)]
pub(super) async fn initializer() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", INITIALIZER)
}

/// Swagger UI's stylesheet.
#[utoipa::path(
    get,
    path = "/docs/swagger-ui.css",
    tag = "reference",
    security(()),
    responses((status = 200, description = "CSS.", content_type = "text/css", body = String))
)]
pub(super) async fn stylesheet() -> impl IntoResponse {
    asset("text/css; charset=utf-8", CSS)
}

/// Swagger UI's script bundle.
#[utoipa::path(
    get,
    path = "/docs/swagger-ui-bundle.js",
    tag = "reference",
    security(()),
    responses((status = 200, description = "JavaScript.", content_type = "text/javascript", body = String))
)]
pub(super) async fn bundle() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", BUNDLE)
}

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, ASSET_CACHE),
        ],
        body,
    )
}
