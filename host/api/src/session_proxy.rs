//! A session's proxy: read, set and clear it (it can also be given at
//! create). Answers name a proxy by `scheme://host:port` and say whether it
//! has credentials; the credentials themselves are never answered.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::error::ApiResult;
use super::extract::{ApiJson, ApiPath};
use crate::domain::proxy::{DIRECT, Proxy, ProxyChoice, StoredProxy};
use crate::openapi::common::SessionPath;
use switchboard_runtime::sessions::{ProxyView, SessionError};

/// The proxy routes.
pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/api/v1/sessions/{id}/proxy",
        get(get_proxy).put(set_proxy).delete(clear_proxy),
    )
}

/// A session's proxy as a request gives it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyIn {
    /// `socks5://host:port` (or `socks5h://`; names are resolved by the
    /// proxy either way) or `http://host:port`, credentials in the URL
    /// allowed; `none` connects directly even when the gateway has a
    /// default proxy.
    pub url: String,
    /// The username, when the proxy asks for one (wins over one in `url`).
    pub username: Option<String>,
    /// The password (wins over one in `url`); never answered or logged.
    pub password: Option<String>,
}

/// A proxy URL as the document describes it: the scheme, a host name
/// whose labels start with a letter (no doubled hyphen, so never an
/// internationalised name's `xn--` form) or an IPv4 address, and a port. The
/// gateway takes more (IPv6 in brackets, credentials in the URL); the
/// pattern is what every conforming value can be, so nothing it allows is
/// refused.
const PROXY_URL_PATTERN: &str = r"^(socks5h?|http)://([A-Za-z](-?[A-Za-z0-9]){0,62}(\.[A-Za-z](-?[A-Za-z0-9]){0,62}){0,8}|(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$";

/// Longest username or password the document allows, in characters: at
/// most 252 bytes however they are spelled (the gateway takes 255 bytes).
const CREDENTIAL_CHARS: usize = 63;

impl utoipa::PartialSchema for ProxyIn {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Type};
        let direct = ObjectBuilder::new()
            .property(
                "url",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([DIRECT]))
                    .description(Some("A direct connection, whatever the gateway's default.")),
            )
            .required("url")
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        let via = ObjectBuilder::new()
            .property(
                "url",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(PROXY_URL_PATTERN))
                    .examples(["socks5://proxy.example:1080"])
                    .description(Some(
                        "`socks5://host:port` (`socks5h://` alike: the proxy resolves names) or `http://host:port`; credentials may also be given in the URL, percent-encoded.",
                    )),
            )
            .required("url")
            .property(
                "username",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(CREDENTIAL_CHARS))
                    .description(Some("The username (wins over one in `url`); at most 255 bytes.")),
            )
            .property(
                "password",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(CREDENTIAL_CHARS))
                    .description(Some(
                        "The password (wins over one in `url`); never answered or logged; at most 255 bytes.",
                    )),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        OneOfBuilder::new()
            .item(direct)
            .item(via)
            .description(Some(
                "A session's proxy: `none`, or a SOCKS5 or HTTP proxy with optional credentials.",
            ))
            .into()
    }
}

impl ToSchema for ProxyIn {}

impl ProxyIn {
    /// The choice this asks for; a refusal names the field and never
    /// repeats a password.
    pub fn choice(self) -> Result<ProxyChoice, SessionError> {
        let invalid = |message: String| SessionError::Invalid {
            field: "proxy.url",
            message,
        };
        if self.url.trim() == DIRECT {
            if self.username.is_some() || self.password.is_some() {
                return Err(invalid(format!(
                    "is `{DIRECT}` (a direct connection), which takes no username or password"
                )));
            }
            return Ok(ProxyChoice::Direct);
        }
        Proxy::parse(&self.url, self.username, self.password)
            .map(ProxyChoice::Via)
            .map_err(invalid)
    }
}

/// A proxy as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ProxyOut {
    /// `scheme://host:port`, or `none` for a direct connection.
    #[schema(example = "socks5://proxy.example:1080")]
    pub url: String,
    /// Whether it has a username and password (never shown).
    pub credentials: bool,
}

impl ProxyOut {
    /// A stored choice as shown (no unsealing: the address is in the clear).
    pub fn of_stored(stored: &StoredProxy) -> Self {
        Self {
            url: stored.address.clone(),
            credentials: stored.sealed_credentials.is_some(),
        }
    }

    fn of_choice(choice: &ProxyChoice) -> Self {
        match choice {
            ProxyChoice::Direct => Self {
                url: DIRECT.into(),
                credentials: false,
            },
            ProxyChoice::Via(p) => Self::of_proxy(p),
        }
    }

    fn of_proxy(p: &Proxy) -> Self {
        Self {
            url: p.address(),
            credentials: p.credentials.is_some(),
        }
    }
}

/// `GET`, `PUT` and `DELETE …/proxy`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionProxyOut {
    /// The session's own choice; `null` when it takes the gateway's
    /// default (`--proxy`).
    pub proxy: Option<ProxyOut>,
    /// The proxy its connections go through; `null` is a direct connection.
    pub effective: Option<ProxyOut>,
    /// Where `effective` comes from.
    #[schema(value_type = String, example = "session")]
    pub source: &'static str,
    /// Whether the change reconnected the session through the new route
    /// (a session that is connected or connecting is; otherwise it applies
    /// at the next connect). Always `false` on `GET`.
    pub reconnected: bool,
}

impl SessionProxyOut {
    fn of(view: &ProxyView, reconnected: bool) -> Self {
        Self {
            proxy: view.own.as_ref().map(ProxyOut::of_choice),
            effective: view.effective.as_ref().map(ProxyOut::of_proxy),
            source: view.source(),
            reconnected,
        }
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/proxy",
    operation_id = "session_proxy_get",
    tag = "sessions",
    summary = "The session's proxy",
    description = "The session's own proxy, the one its connections use (its own or the gateway's default), and where that comes from. Credentials are never shown.",
    params(SessionPath),
    responses(
        (status = 200, body = SessionProxyOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_proxy(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionProxyOut>> {
    let view = state.sessions.proxy(&id)?;
    Ok(Json(SessionProxyOut::of(&view, false)))
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/proxy",
    operation_id = "session_proxy_set",
    tag = "sessions",
    summary = "Set the session's proxy",
    description = "Sets the proxy the session's WhatsApp connection and media transfers go through (`none`: a direct connection, whatever the default). A connected or connecting session reconnects through it at once. The credentials are kept sealed and never shown.",
    params(SessionPath),
    request_body = ProxyIn,
    responses(
        (status = 200, body = SessionProxyOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_proxy(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<ProxyIn>,
) -> ApiResult<Json<SessionProxyOut>> {
    let choice = body.choice()?;
    let (view, reconnected) = state.sessions.set_proxy(&id, Some(choice)).await?;
    Ok(Json(SessionProxyOut::of(&view, reconnected)))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/proxy",
    operation_id = "session_proxy_clear",
    tag = "sessions",
    summary = "Clear the session's proxy",
    description = "The session takes the gateway's default proxy again (or connects directly when there is none); a connected or connecting session reconnects.",
    params(SessionPath),
    responses(
        (status = 200, body = SessionProxyOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn clear_proxy(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionProxyOut>> {
    let (view, reconnected) = state.sessions.set_proxy(&id, None).await?;
    Ok(Json(SessionProxyOut::of(&view, reconnected)))
}
