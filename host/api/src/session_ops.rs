//! Session operations: spam reports, trust contact tokens, auto-reconnect,
//! history sync and app-state resync.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{delete, get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::contacts::{account_jid, checked_list};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::jid::{Jid, JidKind};
use switchboard_runtime::network::account::{
    Collection, ResyncMode, ResyncSummary, SpamFlow, SpamReport,
};

/// The session-operation routes. `tctoken/list` and `tctoken/expired` are
/// literal segments and win over `tctoken/{jid}`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/spam/report", post(report_spam))
        .route("/api/v1/sessions/{id}/tctoken/issue", post(issue_tokens))
        .route("/api/v1/sessions/{id}/tctoken/list", get(list_tokens))
        .route(
            "/api/v1/sessions/{id}/tctoken/expired",
            delete(prune_tokens),
        )
        .route("/api/v1/sessions/{id}/tctoken/{jid}", get(get_token))
        .route(
            "/api/v1/sessions/{id}/reconnect",
            get(get_reconnect).put(set_reconnect),
        )
        .route(
            "/api/v1/sessions/{id}/history-sync",
            get(get_history_sync).put(set_history_sync),
        )
        .route("/api/v1/sessions/{id}/appstate/resync", post(resync))
}

/// Body of `POST …/spam/report`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SpamReportIn)]
struct SpamIn {
    message_id: String,
    message_timestamp: f64,
    from_jid: Option<String>,
    participant_jid: Option<String>,
    group_jid: Option<String>,
    group_subject: Option<String>,
    spam_flow: Option<String>,
    media_type: Option<String>,
}

/// Checks a spam report body into what the network receives.
fn spam_report(b: SpamIn) -> ApiResult<SpamReport> {
    if b.message_id.trim().is_empty() {
        return Err(ApiError::invalid_field("message_id", "must not be empty"));
    }
    if b.message_timestamp < 0.0 {
        return Err(ApiError::invalid_field(
            "message_timestamp",
            "must be zero or more",
        ));
    }
    let user = |field: &str, v: Option<String>| -> ApiResult<Option<String>> {
        v.map(|v| account_jid(field, &v).map(|j| j.to_string()))
            .transpose()
    };
    let group_jid = match b.group_jid {
        None => None,
        Some(g) => {
            let jid = Jid::parse(&g).map_err(|e| ApiError::invalid_field("group_jid", e))?;
            if jid.kind() != JidKind::Group {
                return Err(ApiError::invalid_field(
                    "group_jid",
                    format!("`{jid}` is not a group JID (`<id>@g.us`)"),
                ));
            }
            Some(jid.to_string())
        }
    };
    let spam_flow = match b.spam_flow.as_deref() {
        None => SpamFlow::MessageMenu,
        Some(f) => SpamFlow::parse(f).ok_or_else(|| {
            ApiError::invalid_field(
                "spam_flow",
                format!("`{f}` is not a spam flow; use one of {}", SpamFlow::list()),
            )
        })?,
    };
    if b.media_type.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(ApiError::invalid_field(
            "media_type",
            "must not be empty when given",
        ));
    }
    Ok(SpamReport {
        message_id: b.message_id,
        message_timestamp: b.message_timestamp,
        from_jid: user("from_jid", b.from_jid)?,
        participant_jid: user("participant_jid", b.participant_jid)?,
        group_jid,
        group_subject: b.group_subject,
        spam_flow,
        media_type: b.media_type,
    })
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/spam/report",
    operation_id = "session_ops_report_spam",
    tag = "session-ops",
    summary = "Report a message as spam",
    params(crate::openapi::common::SessionPath),
    request_body = SpamIn,
    responses(
        (status = 200, body = crate::openapi::answers::SpamReported),
        crate::openapi::common::ApiErrors,
    )
)]
async fn report_spam(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<SpamIn>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let report = spam_report(body)?;
    let (client, _) = state.sessions.sender(&id)?;
    let report_id = client.report_spam(&report).await?;
    Ok(Json(json!({ "success": true, "report_id": report_id })))
}

/// Body of `POST …/tctoken/issue`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = IssueTokensIn)]
struct IssueIn {
    jids: Vec<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/tctoken/issue",
    operation_id = "session_ops_issue_tokens",
    tag = "session-ops",
    summary = "Issue trust tokens to contacts",
    params(crate::openapi::common::SessionPath),
    request_body = IssueIn,
    responses(
        (status = 200, body = crate::openapi::answers::IssuedTokens),
        crate::openapi::common::ApiErrors,
    )
)]
async fn issue_tokens(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<IssueIn>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let jids = checked_list("jids", &body.jids, account_jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let tokens = client.issue_trust_tokens(&jids).await?;
    Ok(Json(json!({ "tokens": tokens })))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/tctoken/{jid}",
    operation_id = "session_ops_get_token",
    tag = "session-ops",
    summary = "The trust token held from a contact",
    params(crate::openapi::common::SessionJidPath),
    responses(
        (status = 200, body = crate::openapi::answers::TokenLookup),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_token(
    State(state): State<AppState>,
    ApiPath((id, jid)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    let client = state.sessions.client(&id)?;
    let jid = account_jid("jid", &jid)?;
    let body = match client.trust_token(&jid).await? {
        Some(t) => json!({
            "jid": t.jid,
            "token_timestamp": t.token_timestamp,
            "sender_timestamp": t.sender_timestamp,
            "found": true,
            "expired": t.expired,
        }),
        None => json!({
            "jid": jid.to_string(),
            "token_timestamp": null,
            "sender_timestamp": null,
            "found": false,
            "expired": false,
        }),
    };
    Ok(Json(body))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/tctoken/list",
    operation_id = "session_ops_list_tokens",
    tag = "session-ops",
    summary = "The JIDs the session holds a trust token from",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::TokenJids),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_tokens(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let jids = state.sessions.client(&id)?.trust_token_jids().await?;
    Ok(Json(json!({ "jids": jids })))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/tctoken/expired",
    operation_id = "session_ops_prune_tokens",
    tag = "session-ops",
    summary = "Remove expired trust tokens",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::TokensPruned),
        crate::openapi::common::ApiErrors,
    )
)]
async fn prune_tokens(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let pruned = state.sessions.client(&id)?.prune_trust_tokens().await?;
    Ok(Json(json!({ "pruned_count": pruned })))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/reconnect",
    operation_id = "session_ops_get_reconnect",
    tag = "session-ops",
    summary = "Auto-reconnect state",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = switchboard_runtime::sessions::reconnect::ReconnectStatus),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_reconnect(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(state.sessions.reconnect_status(&id)?)))
}

/// Body of `PUT …/reconnect`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ReconnectSettingIn)]
struct ReconnectIn {
    enabled: bool,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/reconnect",
    operation_id = "session_ops_set_reconnect",
    tag = "session-ops",
    summary = "Turn auto-reconnect on or off",
    params(crate::openapi::common::SessionPath),
    request_body = ReconnectIn,
    responses(
        (status = 200, body = switchboard_runtime::sessions::reconnect::ReconnectStatus),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_reconnect(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ReconnectIn>,
) -> ApiResult<Json<Value>> {
    let status = state.sessions.set_auto_reconnect(&id, body.enabled)?;
    Ok(Json(json!(status)))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/history-sync",
    operation_id = "session_ops_get_history_sync",
    tag = "session-ops",
    summary = "Whether history sync is skipped",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::HistorySync),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_history_sync(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let skip = state.sessions.skip_history_sync(&id)?;
    Ok(Json(json!({ "skip_history_sync": skip })))
}

/// Body of `PUT …/history-sync`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = HistorySyncIn)]
struct HistorySyncIn {
    skip: bool,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/history-sync",
    operation_id = "session_ops_set_history_sync",
    tag = "session-ops",
    summary = "Skip history sync or not",
    params(crate::openapi::common::SessionPath),
    request_body = HistorySyncIn,
    responses(
        (status = 200, body = crate::openapi::answers::HistorySync),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_history_sync(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<HistorySyncIn>,
) -> ApiResult<Json<Value>> {
    let skip = state.sessions.set_skip_history_sync(&id, body.skip)?;
    Ok(Json(json!({ "skip_history_sync": skip })))
}

/// Body of `POST …/appstate/resync`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AppStateResyncIn)]
struct ResyncIn {
    collections: Vec<String>,
    mode: Option<String>,
}

/// Checks a resync body: a non-empty list of known collections (duplicates
/// dropped, order kept) and the mode.
fn resync_request(b: &ResyncIn) -> ApiResult<(Vec<Collection>, ResyncMode)> {
    if b.collections.is_empty() {
        return Err(ApiError::invalid_field(
            "collections",
            format!("must name at least one of {}", Collection::list()),
        ));
    }
    let mut collections = Vec::new();
    for (i, name) in b.collections.iter().enumerate() {
        let c = Collection::parse(name).ok_or_else(|| {
            ApiError::invalid_field(
                &format!("collections[{i}]"),
                format!(
                    "`{name}` is not an app-state collection; use one of {}",
                    Collection::list()
                ),
            )
        })?;
        if !collections.contains(&c) {
            collections.push(c);
        }
    }
    let mode = match b.mode.as_deref() {
        None => ResyncMode::Incremental,
        Some(m) => ResyncMode::parse(m).ok_or_else(|| {
            ApiError::invalid_field(
                "mode",
                format!("`{m}` is not a mode; use one of {}", ResyncMode::list()),
            )
        })?,
    };
    Ok((collections, mode))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/appstate/resync",
    operation_id = "session_ops_resync",
    tag = "session-ops",
    summary = "Resync app-state collections",
    params(crate::openapi::common::SessionPath),
    request_body = ResyncIn,
    responses(
        (status = 200, body = switchboard_runtime::network::account::ResyncSummary),
        crate::openapi::common::ApiErrors,
    )
)]
async fn resync(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ResyncIn>,
) -> ApiResult<Json<ResyncSummary>> {
    state.sessions.get(&id)?;
    let (collections, mode) = resync_request(&body)?;
    let client = state.sessions.logged_in_client(&id)?.ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_live_client",
            format!("session `{id}` has no live client: it must be logged in and not paused to resync app state"),
        )
    })?;
    let outcomes = match client.resync_app_state(&collections, mode).await {
        Ok(o) => o,
        // The connection went away between the check and the fetch.
        Err(switchboard_runtime::network::NetworkError::NotConnected) => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_live_client",
                format!("session `{id}` lost its connection before the resync started"),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Json(ResyncSummary::of(&outcomes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resync_body(collections: &[&str], mode: Option<&str>) -> ResyncIn {
        ResyncIn {
            collections: collections.iter().map(|s| s.to_string()).collect(),
            mode: mode.map(str::to_owned),
        }
    }

    #[test]
    fn a_resync_needs_known_collections_and_defaults_to_incremental() {
        let (cols, mode) = resync_request(&resync_body(
            &["regular", "regular", "critical_block"],
            None,
        ))
        .unwrap();
        assert_eq!(cols, [Collection::Regular, Collection::CriticalBlock]);
        assert_eq!(mode, ResyncMode::Incremental);
        let err = resync_request(&resync_body(&[], None)).unwrap_err();
        assert!(err.message.contains("`collections`"));
        let err = resync_request(&resync_body(&["regular", "contacts"], None)).unwrap_err();
        assert!(err.message.contains("`collections[1]`"), "{}", err.message);
        let err = resync_request(&resync_body(&["regular"], Some("full"))).unwrap_err();
        assert!(err.message.contains("`mode`"));
    }

    fn spam(flow: Option<&str>) -> SpamIn {
        SpamIn {
            message_id: "M1".into(),
            message_timestamp: 1_700_000_000.0,
            from_jid: Some("+1 555 000 1111".into()),
            participant_jid: None,
            group_jid: None,
            group_subject: None,
            spam_flow: flow.map(str::to_owned),
            media_type: None,
        }
    }

    #[test]
    fn a_spam_report_defaults_to_the_message_menu_and_normalises_jids() {
        let r = spam_report(spam(None)).unwrap();
        assert_eq!(r.spam_flow, SpamFlow::MessageMenu);
        assert_eq!(r.from_jid.as_deref(), Some("15550001111@s.whatsapp.net"));
        assert!(spam_report(spam(Some("status_report"))).is_ok());
        let err = spam_report(spam(Some("menu"))).unwrap_err();
        assert!(err.message.contains("`spam_flow`"));
        let mut b = spam(None);
        b.group_jid = Some("15550001111@s.whatsapp.net".into());
        assert!(spam_report(b).unwrap_err().message.contains("`group_jid`"));
    }
}
