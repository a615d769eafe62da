//! Plugin administration: upload, list, get, replace in place, delete,
//! re-enable; and the bindings that attach plugins to hooks.

use axum::Extension;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post, put};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiBytes, ApiJson, ApiPath, ApiQuery, BodyLimit};
use crate::openapi::common::{PluginPath, SuccessMessage};
use switchboard_plugins::directory::DirectoryView;
use switchboard_plugins::model::Binding;
use switchboard_plugins::{BindingIn, PluginError, PluginView, Plugins};

/// The plugin routes.
/// Components are uploaded whole and may be larger than a JSON body (an
/// interpreter-based plugin is tens of MiB): they have their own limit,
/// `max_component_bytes`.
pub fn routes(max_component_bytes: usize) -> Router<AppState> {
    let component_limit = (
        DefaultBodyLimit::max(max_component_bytes),
        Extension(BodyLimit {
            bytes: max_component_bytes,
            name: "the plugin component limit (--max-plugin-bytes)",
            instead: "",
        }),
    );
    Router::new()
        .route(
            "/api/v1/plugins",
            post(upload).layer(component_limit).get(list),
        )
        .route("/api/v1/plugins/directory", get(directory))
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
            put(replace)
                .layer(component_limit)
                .get(get_one)
                .delete(remove),
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
            PluginError::Managed(_) => ApiError::conflict("managed_by_directory", msg),
            PluginError::Store(s) => s.into(),
        }
    }
}

/// Query of an upload.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct UploadQuery {
    /// The plugin's name (else what the component says of itself).
    name: Option<String>,
}

/// `GET /api/v1/plugins`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PluginList {
    /// How many.
    pub count: usize,
    /// Every plugin.
    pub plugins: Vec<PluginView>,
}

/// `GET /api/v1/plugins/bindings`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BindingList {
    /// How many.
    pub count: usize,
    /// Every binding, by hook then chain order.
    pub bindings: Vec<Binding>,
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

#[utoipa::path(
    post,
    path = "/api/v1/plugins",
    operation_id = "plugins_upload",
    tag = "plugins",
    summary = "Upload a plugin (a WebAssembly component)",
    params(UploadQuery),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The component's bytes (a WebAssembly component for wasm32-wasip2)."),
    responses(
        (status = 201, body = PluginView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn upload(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UploadQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<PluginView>)> {
    non_empty(&body)?;
    let view = blocking(&state.plugins, move |p| p.upload(&body, q.name)).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

#[utoipa::path(
    get,
    path = "/api/v1/plugins",
    operation_id = "plugins_list",
    tag = "plugins",
    summary = "Every plugin",
    responses(
        (status = 200, body = PluginList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(State(state): State<AppState>) -> Json<PluginList> {
    let plugins = state.plugins.list();
    Json(PluginList {
        count: plugins.len(),
        plugins,
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/plugins/directory",
    operation_id = "plugins_directory",
    tag = "plugins",
    summary = "The plugin directory and its manifests",
    responses(
        (status = 200, body = DirectoryView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn directory(State(state): State<AppState>) -> Json<DirectoryView> {
    Json(state.plugins.directory())
}

#[utoipa::path(
    get,
    path = "/api/v1/plugins/{id}",
    operation_id = "plugins_get_one",
    tag = "plugins",
    summary = "A plugin",
    params(PluginPath),
    responses(
        (status = 200, body = PluginView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
) -> ApiResult<Json<PluginView>> {
    Ok(Json(state.plugins.get(&id)?))
}

#[utoipa::path(
    put,
    path = "/api/v1/plugins/{id}",
    operation_id = "plugins_replace",
    tag = "plugins",
    summary = "Replace a plugin's component in place",
    params(PluginPath),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The component's bytes (a WebAssembly component for wasm32-wasip2)."),
    responses(
        (status = 200, body = PluginView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn replace(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<PluginView>> {
    non_empty(&body)?;
    let view = blocking(&state.plugins, move |p| p.replace(&id, &body)).await?;
    Ok(Json(view))
}

#[utoipa::path(
    delete,
    path = "/api/v1/plugins/{id}",
    operation_id = "plugins_remove",
    tag = "plugins",
    summary = "Delete a plugin and its bindings",
    params(PluginPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn remove(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
) -> ApiResult<Json<SuccessMessage>> {
    state.plugins.delete(&id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("plugin `{id}` and its bindings deleted"),
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/plugins/{id}/enable",
    operation_id = "plugins_enable",
    tag = "plugins",
    summary = "Re-enable a quarantined plugin",
    params(PluginPath),
    responses(
        (status = 200, body = PluginView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn enable(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
) -> ApiResult<Json<PluginView>> {
    Ok(Json(state.plugins.enable(&id)?))
}

#[utoipa::path(
    post,
    path = "/api/v1/plugins/bindings",
    operation_id = "plugins_create_binding",
    tag = "plugins",
    summary = "Bind a plugin to a hook",
    request_body = BindingIn,
    responses(
        (status = 201, body = Binding),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create_binding(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<BindingIn>,
) -> ApiResult<(StatusCode, Json<Binding>)> {
    let b = state.plugins.put_binding(None, body)?;
    Ok((StatusCode::CREATED, Json(b)))
}

#[utoipa::path(
    get,
    path = "/api/v1/plugins/bindings",
    operation_id = "plugins_list_bindings",
    tag = "plugins",
    summary = "Every binding",
    responses(
        (status = 200, body = BindingList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_bindings(State(state): State<AppState>) -> ApiResult<Json<BindingList>> {
    let bindings = state.plugins.bindings()?;
    Ok(Json(BindingList {
        count: bindings.len(),
        bindings,
    }))
}

#[utoipa::path(
    put,
    path = "/api/v1/plugins/bindings/{id}",
    operation_id = "plugins_update_binding",
    tag = "plugins",
    summary = "Replace a binding",
    params(PluginPath),
    request_body = BindingIn,
    responses(
        (status = 200, body = Binding),
        crate::openapi::common::ApiErrors,
    )
)]
async fn update_binding(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
    ApiJson(body): ApiJson<BindingIn>,
) -> ApiResult<Json<Binding>> {
    Ok(Json(state.plugins.put_binding(Some(&id), body)?))
}

#[utoipa::path(
    delete,
    path = "/api/v1/plugins/bindings/{id}",
    operation_id = "plugins_delete_binding",
    tag = "plugins",
    summary = "Delete a binding",
    params(PluginPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn delete_binding(
    State(state): State<AppState>,
    ApiPath(PluginPath { id }): ApiPath<PluginPath>,
) -> ApiResult<Json<SuccessMessage>> {
    state.plugins.delete_binding(&id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("binding `{id}` deleted"),
    }))
}
