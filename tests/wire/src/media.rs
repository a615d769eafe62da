//! The local media host: the client uploads encrypted media to it (the
//! path and auth of its media connection) and downloads it back by the
//! `direct_path` the upload answered. The bytes are stored as they came:
//! the server never sees a media key, as WhatsApp's never does.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::server::State;

/// Serves uploads and downloads until the listener fails.
pub async fn serve(state: Arc<State>, listener: tokio::net::TcpListener) {
    // Media as large as WhatsApp takes (axum's 2 MB default would refuse it).
    let app = axum::Router::new()
        .fallback(handle)
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(state);
    let _ = axum::serve(listener, app).await;
}

async fn handle(
    AxumState(state): AxumState<Arc<State>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    if method == Method::POST && path.starts_with("/mms/") {
        // `/mms/<type>/<token>`: the token is the file's hash, so the same
        // bytes land on the same path.
        let token = path.rsplit('/').next().unwrap_or_default().to_owned();
        let kind = path.split('/').nth(2).unwrap_or("media").to_owned();
        let direct_path = format!("/v/t62.wire-{kind}/{token}.enc");
        state
            .world()
            .media
            .insert(direct_path.clone(), body.to_vec());
        let url = format!("https://{}{direct_path}", state.media_host);
        return axum::Json(serde_json::json!({
            "url": url,
            "direct_path": direct_path,
        }))
        .into_response();
    }
    if method == Method::GET {
        if let Some(bytes) = state.world().media.get(&path).cloned() {
            return bytes.into_response();
        }
        return StatusCode::NOT_FOUND.into_response();
    }
    StatusCode::METHOD_NOT_ALLOWED.into_response()
}
