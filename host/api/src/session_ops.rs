//! Session operations: spam reports, trust contact tokens, auto-reconnect,
//! history sync and app-state resync.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::contacts::{account_jid, checked_list};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::jid::{Jid, JidKind};
use crate::openapi::common::{SessionJidPath, SessionPath, UserAddress};
use switchboard_runtime::network::account::{
    Collection, IssuedToken, ResyncMode, ResyncSummary, SpamFlow, SpamReport,
};
use switchboard_runtime::sessions::reconnect::ReconnectStatus;

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
    /// The reported message's id; not blank.
    #[schema(min_length = 1, pattern = r"[^\s\x85]")]
    message_id: String,
    /// The reported message's timestamp (Unix seconds), zero or more.
    #[schema(minimum = 0)]
    message_timestamp: f64,
    /// The sender: a phone number, user JID or LID.
    #[schema(value_type = Option<UserAddress>)]
    from_jid: Option<String>,
    /// The participant who sent it, in a group: a phone number, user JID or LID.
    #[schema(value_type = Option<UserAddress>)]
    participant_jid: Option<String>,
    /// The group, for group reports: its JID `<digits>@g.us`.
    #[schema(pattern = r"^[0-9]{1,40}@g\.us$")]
    group_jid: Option<String>,
    /// The group's name, for group reports.
    group_subject: Option<String>,
    /// Where in the app the report was made; `message_menu` when absent.
    #[schema(value_type = Option<SpamFlow>)]
    spam_flow: Option<String>,
    /// The reported message's media type; not blank when given.
    #[schema(min_length = 1, pattern = r"[^\s\x85]")]
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
    params(SessionPath),
    request_body = SpamIn,
    responses(
        (status = 200, body = SpamReported),
        crate::openapi::common::ApiErrors,
    )
)]
async fn report_spam(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<SpamIn>,
) -> ApiResult<Json<SpamReported>> {
    state.sessions.get(&id)?;
    let report = spam_report(body)?;
    let (client, _) = state.sessions.sender(&id)?;
    let report_id = client.report_spam(&report).await?;
    Ok(Json(SpamReported {
        report_id,
        success: true,
    }))
}

/// The answer of `POST …/spam/report`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SpamReported {
    /// The network's report id.
    pub report_id: String,
    /// Always `true`.
    pub success: bool,
}

/// Body of `POST …/tctoken/issue`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = IssueTokensIn)]
struct IssueIn {
    /// The contacts: phone numbers, user JIDs or LIDs (1 to 1000;
    /// duplicates are dropped).
    #[schema(value_type = Vec<UserAddress>, min_items = 1, max_items = 1000)]
    jids: Vec<String>,
}

/// The answer of `POST …/tctoken/issue`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct IssuedTokens {
    /// One token per distinct contact.
    pub tokens: Vec<IssuedToken>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/tctoken/issue",
    operation_id = "session_ops_issue_tokens",
    tag = "session-ops",
    summary = "Issue trust tokens to contacts",
    params(SessionPath),
    request_body = IssueIn,
    responses(
        (status = 200, body = IssuedTokens),
        crate::openapi::common::ApiErrors,
    )
)]
async fn issue_tokens(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<IssueIn>,
) -> ApiResult<Json<IssuedTokens>> {
    state.sessions.get(&id)?;
    let jids = checked_list("jids", &body.jids, account_jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let tokens = client.issue_trust_tokens(&jids).await?;
    Ok(Json(IssuedTokens { tokens }))
}

/// The answer of `GET …/tctoken/{jid}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TokenLookup {
    /// Whether it has expired.
    pub expired: bool,
    /// Whether a token is held.
    pub found: bool,
    /// The contact's JID.
    pub jid: String,
    /// Unix seconds this account last sent its own token; `null` when not found.
    pub sender_timestamp: Option<i64>,
    /// Unix seconds the contact's token was received; `null` when not found.
    pub token_timestamp: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/tctoken/{jid}",
    operation_id = "session_ops_get_token",
    tag = "session-ops",
    summary = "The trust token held from a contact",
    params(SessionJidPath),
    responses(
        (status = 200, body = TokenLookup),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_token(
    State(state): State<AppState>,
    ApiPath(SessionJidPath { id, jid }): ApiPath<SessionJidPath>,
) -> ApiResult<Json<TokenLookup>> {
    let client = state.sessions.client(&id)?;
    let jid = account_jid("jid", &jid)?;
    let body = match client.trust_token(&jid).await? {
        Some(t) => TokenLookup {
            expired: t.expired,
            found: true,
            jid: t.jid,
            sender_timestamp: t.sender_timestamp,
            token_timestamp: t.token_timestamp,
        },
        None => TokenLookup {
            expired: false,
            found: false,
            jid: jid.to_string(),
            sender_timestamp: None,
            token_timestamp: None,
        },
    };
    Ok(Json(body))
}

/// The answer of `GET …/tctoken/list`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TokenJids {
    /// The JIDs with a token, sorted.
    pub jids: Vec<String>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/tctoken/list",
    operation_id = "session_ops_list_tokens",
    tag = "session-ops",
    summary = "The JIDs the session holds a trust token from",
    params(SessionPath),
    responses(
        (status = 200, body = TokenJids),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_tokens(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<TokenJids>> {
    let jids = state.sessions.client(&id)?.trust_token_jids().await?;
    Ok(Json(TokenJids { jids }))
}

/// The answer of `DELETE …/tctoken/expired`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TokensPruned {
    /// Tokens removed.
    pub pruned_count: usize,
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/tctoken/expired",
    operation_id = "session_ops_prune_tokens",
    tag = "session-ops",
    summary = "Remove expired trust tokens",
    params(SessionPath),
    responses(
        (status = 200, body = TokensPruned),
        crate::openapi::common::ApiErrors,
    )
)]
async fn prune_tokens(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<TokensPruned>> {
    let pruned_count = state.sessions.client(&id)?.prune_trust_tokens().await?;
    Ok(Json(TokensPruned { pruned_count }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/reconnect",
    operation_id = "session_ops_get_reconnect",
    tag = "session-ops",
    summary = "Auto-reconnect state",
    params(SessionPath),
    responses(
        (status = 200, body = ReconnectStatus),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_reconnect(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<ReconnectStatus>> {
    Ok(Json(state.sessions.reconnect_status(&id)?))
}

/// Body of `PUT …/reconnect`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ReconnectSettingIn)]
struct ReconnectIn {
    /// Whether the session reconnects by itself after a drop.
    enabled: bool,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/reconnect",
    operation_id = "session_ops_set_reconnect",
    tag = "session-ops",
    summary = "Turn auto-reconnect on or off",
    params(SessionPath),
    request_body = ReconnectIn,
    responses(
        (status = 200, body = ReconnectStatus),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_reconnect(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<ReconnectIn>,
) -> ApiResult<Json<ReconnectStatus>> {
    Ok(Json(state.sessions.set_auto_reconnect(&id, body.enabled)?))
}

/// The answer of `GET` and `PUT …/history-sync`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HistorySync {
    /// Whether history sync is skipped at the next pairing.
    pub skip_history_sync: bool,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/history-sync",
    operation_id = "session_ops_get_history_sync",
    tag = "session-ops",
    summary = "Whether history sync is skipped",
    params(SessionPath),
    responses(
        (status = 200, body = HistorySync),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_history_sync(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<HistorySync>> {
    let skip_history_sync = state.sessions.skip_history_sync(&id)?;
    Ok(Json(HistorySync { skip_history_sync }))
}

/// Body of `PUT …/history-sync`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = HistorySyncIn)]
struct HistorySyncIn {
    /// Whether to skip history sync at the next pairing.
    skip: bool,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/history-sync",
    operation_id = "session_ops_set_history_sync",
    tag = "session-ops",
    summary = "Skip history sync or not",
    params(SessionPath),
    request_body = HistorySyncIn,
    responses(
        (status = 200, body = HistorySync),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_history_sync(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<HistorySyncIn>,
) -> ApiResult<Json<HistorySync>> {
    let skip_history_sync = state.sessions.set_skip_history_sync(&id, body.skip)?;
    Ok(Json(HistorySync { skip_history_sync }))
}

/// Body of `POST …/appstate/resync`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AppStateResyncIn)]
struct ResyncIn {
    /// The collections to resync, at least one (duplicates are dropped,
    /// order kept).
    #[schema(value_type = Vec<Collection>, min_items = 1)]
    collections: Vec<String>,
    /// How to fetch; `incremental` when absent.
    #[schema(value_type = Option<ResyncMode>)]
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
    params(SessionPath),
    request_body = ResyncIn,
    responses(
        (status = 200, body = ResyncSummary),
        crate::openapi::common::ApiErrors,
    )
)]
async fn resync(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
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

    #[test]
    fn the_documented_group_jid_is_the_one_sends_take() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(SpamIn::schema()).unwrap();
        assert_eq!(
            schema["properties"]["group_jid"]["pattern"],
            crate::openapi::send_bodies::GROUP_JID_PATTERN
        );
    }
}
