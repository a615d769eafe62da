//! Plugin administration: upload, list, get, replace in place, delete,
//! re-enable; and the bindings that attach plugins to hooks.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{post, put};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::plugins::{BindingIn, PluginError, PluginView, Plugins};

/// The plugin routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/plugins", post(upload).get(list))
        .route(
            "/api/v1/plugins/bindings",
            post(create_binding).get(list_bindings),
        )
        .route(
            "/api/v1/plugins/bindings/{id}",
            put(update_binding).delete(delete_binding),
        )
        .route(
            "/api/v1/plugins/{id}",
            put(replace).get(get_one).delete(remove),
        )
        .route("/api/v1/plugins/{id}/enable", post(enable))
}

impl From<PluginError> for ApiError {
    fn from(e: PluginError) -> Self {
        let msg = e.to_string();
        match e {
            PluginError::NotFound(_) => ApiError::not_found("plugin_not_found", msg),
            PluginError::BindingNotFound(_) => ApiError::not_found("binding_not_found", msg),
            PluginError::Load(l) => ApiError::bad_request(l.code(), msg),
            PluginError::Invalid { .. } => ApiError::bad_request("invalid_field", msg),
            PluginError::Store(s) => s.into(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct UploadQuery {
    name: Option<String>,
}

/// Runs a compile-heavy registry operation off the async threads.
async fn blocking<T: Send + 'static>(
    plugins: &Plugins,
    f: impl FnOnce(&Plugins) -> Result<T, PluginError> + Send + 'static,
) -> ApiResult<T> {
    let p = plugins.clone();
    tokio::task::spawn_blocking(move || f(&p))
        .await
        .map_err(ApiError::internal)?
        .map_err(Into::into)
}

fn non_empty(bytes: &Bytes) -> ApiResult<()> {
    if bytes.is_empty() {
        return Err(ApiError::bad_request(
            "not_a_component",
            "the body is empty; send the component's bytes with `Content-Type: application/wasm`",
        ));
    }
    Ok(())
}

async fn upload(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UploadQuery>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<PluginView>)> {
    non_empty(&body)?;
    let view = blocking(&state.plugins, move |p| p.upload(&body, q.name)).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

async fn list(State(state): State<AppState>) -> Json<Value> {
    let plugins = state.plugins.list();
    Json(json!({ "count": plugins.len(), "plugins": plugins }))
}

async fn get_one(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<PluginView>> {
    Ok(Json(state.plugins.get(&id)?))
}

async fn replace(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> ApiResult<Json<PluginView>> {
    non_empty(&body)?;
    let view = blocking(&state.plugins, move |p| p.replace(&id, &body)).await?;
    Ok(Json(view))
}

async fn remove(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    state.plugins.delete(&id)?;
    Ok(Json(
        json!({ "success": true, "message": format!("plugin `{id}` and its bindings deleted") }),
    ))
}

async fn enable(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<PluginView>> {
    Ok(Json(state.plugins.enable(&id)?))
}

async fn create_binding(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<BindingIn>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let b = state.plugins.put_binding(None, body)?;
    Ok((StatusCode::CREATED, Json(json!(b))))
}

async fn list_bindings(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let b = state.plugins.bindings()?;
    Ok(Json(json!({ "count": b.len(), "bindings": b })))
}

async fn update_binding(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<BindingIn>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(state.plugins.put_binding(Some(&id), body)?)))
}

async fn delete_binding(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    state.plugins.delete_binding(&id)?;
    Ok(Json(
        json!({ "success": true, "message": format!("binding `{id}` deleted") }),
    ))
}
