//! API tokens (`/api/v1/tokens`): the admin token mints tokens limited to
//! some sessions and some scopes, lists them (never their secrets), revokes
//! and rotates them; any token can ask what it is (`GET …/tokens/current`).
//! The registry is `registry.rs`; what each route needs is `scopes.rs`.

mod registry;

pub use registry::{
    DEFAULT_SESSION_QUOTA, NewToken, QuotaFull, QuotaSlot, Refusal, Tokens, hash_secret,
};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::session::validate_session_id;
use crate::domain::time::unix_now;
use crate::domain::token::{AllSessions, Scope, SessionSet, TokenRecord};
use crate::openapi::common::SuccessMessage;

/// Longest token name, in characters.
const MAX_NAME_CHARS: usize = 100;
/// Most session ids one token names (the session quota, configurable
/// below it, is the limit each registry holds them to).
const MAX_SESSIONS: usize = registry::DEFAULT_SESSION_QUOTA;
/// The longest lifetime a token can be minted with: ten years.
const MAX_LIFETIME_SECS: i64 = 10 * 365 * 24 * 3600;

/// The token routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/tokens", post(mint).get(list))
        .route("/api/v1/tokens/current", get(current))
        .route("/api/v1/tokens/{token_id}", get(get_one).delete(revoke))
        .route("/api/v1/tokens/{token_id}/rotate", post(rotate))
}

/// A token's sessions in a body: `"*"` or a list of session ids.
pub struct SessionSetSchema;

impl PartialSchema for SessionSetSchema {
    fn schema() -> RefOr<Schema> {
        let star = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["*"]))
            .description(Some("Every session, now and to come."));
        let id = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$"));
        let ids = ArrayBuilder::new()
            .items(id)
            .max_items(Some(MAX_SESSIONS))
            .description(Some("These session ids (they need not exist yet)."));
        OneOfBuilder::new().item(star).item(ids).into()
    }
}

impl ToSchema for SessionSetSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("TokenSessions")
    }
}

/// A token as lists show it: everything but its secret and hash.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TokenView {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The start of its secret (`sbt_` and six characters).
    pub prefix: String,
    /// `"*"` or the session ids it may act on.
    #[schema(value_type = SessionSetSchema)]
    pub sessions: SessionSet,
    /// Its scopes.
    pub scopes: Vec<Scope>,
    /// Unix seconds of minting.
    pub created_at: i64,
    /// Unix seconds after which it stops working; `null`: never.
    pub expires_at: Option<i64>,
    /// Unix seconds of its last use (to the minute); `null`: never used.
    pub last_used_at: Option<i64>,
    /// Unix seconds of its revocation; `null` while it works.
    pub revoked_at: Option<i64>,
    /// Most requests per minute; `null`: no limit.
    pub rate_per_minute: Option<u32>,
    /// `active`, `expired` or `revoked`.
    pub status: String,
}

impl From<TokenRecord> for TokenView {
    fn from(t: TokenRecord) -> Self {
        let status = match t.check(unix_now()) {
            Ok(()) => "active",
            Err(crate::domain::token::TokenRefusal::Expired) => "expired",
            Err(crate::domain::token::TokenRefusal::Revoked) => "revoked",
        };
        Self {
            id: t.id,
            name: t.name,
            prefix: t.prefix,
            sessions: t.sessions,
            scopes: t.scopes,
            created_at: t.created_at,
            expires_at: t.expires_at,
            last_used_at: t.last_used_at,
            revoked_at: t.revoked_at,
            rate_per_minute: t.rate_per_minute,
            status: status.to_owned(),
        }
    }
}

/// Body of `POST /api/v1/tokens`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MintTokenIn)]
struct MintIn {
    /// A name to tell it by (shown in lists, logs and metrics); 1 to 100
    /// characters, not blank.
    #[schema(min_length = 1, max_length = 100, pattern = r"[^\s\x85]")]
    name: String,
    /// `"*"` (every session) or the session ids it may act on.
    #[schema(value_type = SessionSetSchema)]
    sessions: SessionSet,
    /// What it may do: `read`, `send`, `manage`, `admin` (at least one).
    #[schema(min_items = 1)]
    scopes: Vec<Scope>,
    /// It stops working this many seconds from now (at most ten years);
    /// never when absent.
    #[schema(minimum = 1, maximum = 315_360_000)]
    expires_in_seconds: Option<i64>,
    /// Most requests per minute (`429` with `Retry-After` beyond); no limit
    /// when absent.
    #[schema(minimum = 1, maximum = 1_000_000)]
    rate_per_minute: Option<u32>,
}

/// `201` of minting and `200` of rotating: the token and its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct MintedOut {
    /// The token.
    pub token: TokenView,
    /// The secret, shown this once: send it as `Authorization: Bearer
    /// <secret>`. Only its hash is kept.
    pub secret: String,
}

fn checked(body: MintIn) -> ApiResult<NewToken> {
    let name = body.name.trim();
    if name.is_empty() {
        return Err(ApiError::invalid_field("name", "must not be blank"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::invalid_field(
            "name",
            format!("is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if body.scopes.is_empty() {
        return Err(ApiError::invalid_field(
            "scopes",
            "must name at least one scope",
        ));
    }
    let mut scopes = body.scopes;
    scopes.sort();
    scopes.dedup();
    let sessions = match body.sessions {
        SessionSet::All(s) => SessionSet::All(s),
        SessionSet::Only(ids) => {
            if ids.len() > MAX_SESSIONS {
                return Err(ApiError::invalid_field(
                    "sessions",
                    format!("names {} sessions; at most {MAX_SESSIONS}", ids.len()),
                ));
            }
            let mut out: Vec<String> = Vec::with_capacity(ids.len());
            for (i, id) in ids.into_iter().enumerate() {
                validate_session_id(&id)
                    .map_err(|m| ApiError::invalid_field(&format!("sessions[{i}]"), m))?;
                if !out.contains(&id) {
                    out.push(id);
                }
            }
            SessionSet::Only(out)
        }
    };
    let expires_at = match body.expires_in_seconds {
        None => None,
        Some(s) if !(1..=MAX_LIFETIME_SECS).contains(&s) => {
            return Err(ApiError::invalid_field(
                "expires_in_seconds",
                format!("must be from 1 to {MAX_LIFETIME_SECS} (ten years)"),
            ));
        }
        Some(s) => Some(unix_now() + s),
    };
    if body.rate_per_minute == Some(0) || body.rate_per_minute > Some(1_000_000) {
        return Err(ApiError::invalid_field(
            "rate_per_minute",
            "must be from 1 to 1000000",
        ));
    }
    Ok(NewToken {
        name: name.to_owned(),
        sessions,
        scopes,
        expires_at,
        rate_per_minute: body.rate_per_minute,
    })
}

#[utoipa::path(
    post,
    path = "/api/v1/tokens",
    operation_id = "tokens_mint",
    tag = "tokens",
    summary = "Mint a token limited to some sessions and scopes",
    description = "The secret is in this answer only; the gateway keeps its hash. Admin only.",
    request_body = MintIn,
    responses((status = 201, body = MintedOut), crate::openapi::common::ApiErrors)
)]
async fn mint(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<MintIn>,
) -> ApiResult<(StatusCode, Json<MintedOut>)> {
    let new = checked(body)?;
    let quota = state.tokens.session_quota();
    if let SessionSet::Only(ids) = &new.sessions
        && ids.len() > quota
    {
        return Err(ApiError::invalid_field(
            "sessions",
            format!(
                "names {} sessions; a token may hold at most {quota} (--token-max-sessions)",
                ids.len()
            ),
        ));
    }
    let (token, secret) = state.tokens.mint(new)?;
    tracing::info!(token = %token.name, token_id = %token.id, "token minted");
    Ok((
        StatusCode::CREATED,
        Json(MintedOut {
            token: token.into(),
            secret,
        }),
    ))
}

/// `GET /api/v1/tokens`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    /// Every token, newest first (revoked and expired ones too).
    pub tokens: Vec<TokenView>,
    /// How many.
    pub count: usize,
}

#[utoipa::path(
    get,
    path = "/api/v1/tokens",
    operation_id = "tokens_list",
    tag = "tokens",
    summary = "List the tokens (never their secrets)",
    responses((status = 200, body = TokenList), crate::openapi::common::ApiErrors)
)]
async fn list(State(state): State<AppState>) -> Json<TokenList> {
    let tokens: Vec<TokenView> = state.tokens.list().into_iter().map(Into::into).collect();
    Json(TokenList {
        count: tokens.len(),
        tokens,
    })
}

/// A token of the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct TokenPath {
    /// The token's id.
    token_id: String,
}

fn no_token(id: &str) -> ApiError {
    ApiError::not_found("token_not_found", format!("no token with id `{id}`"))
}

#[utoipa::path(
    get,
    path = "/api/v1/tokens/{token_id}",
    operation_id = "tokens_get",
    tag = "tokens",
    summary = "A token (never its secret)",
    params(TokenPath),
    responses((status = 200, body = TokenView), crate::openapi::common::ApiErrors)
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(TokenPath { token_id }): ApiPath<TokenPath>,
) -> ApiResult<Json<TokenView>> {
    let t = state
        .tokens
        .get(&token_id)
        .ok_or_else(|| no_token(&token_id))?;
    Ok(Json(t.into()))
}

#[utoipa::path(
    delete,
    path = "/api/v1/tokens/{token_id}",
    operation_id = "tokens_revoke",
    tag = "tokens",
    summary = "Revoke a token",
    description = "At once: its next request is refused and its open event streams end. The record stays, marked revoked.",
    params(TokenPath),
    responses((status = 200, body = SuccessMessage), crate::openapi::common::ApiErrors)
)]
async fn revoke(
    State(state): State<AppState>,
    ApiPath(TokenPath { token_id }): ApiPath<TokenPath>,
) -> ApiResult<Json<SuccessMessage>> {
    let t = state
        .tokens
        .revoke(&token_id)?
        .ok_or_else(|| no_token(&token_id))?;
    tracing::info!(token = %t.name, token_id = %t.id, "token revoked");
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("token `{}` revoked", t.name),
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/tokens/{token_id}/rotate",
    operation_id = "tokens_rotate",
    tag = "tokens",
    summary = "Give a token a new secret",
    description = "The old secret stops working at once; the id, name, scopes and sessions stay. A revoked token is `409 token_revoked`.",
    params(TokenPath),
    responses((status = 200, body = MintedOut), crate::openapi::common::ApiErrors)
)]
async fn rotate(
    State(state): State<AppState>,
    ApiPath(TokenPath { token_id }): ApiPath<TokenPath>,
) -> ApiResult<Json<MintedOut>> {
    if state.tokens.get(&token_id).is_none() {
        return Err(no_token(&token_id));
    }
    let (token, secret) = state.tokens.rotate(&token_id)?.ok_or_else(|| {
        ApiError::conflict(
            "token_revoked",
            format!("token `{token_id}` is revoked; mint a new one"),
        )
    })?;
    tracing::info!(token = %token.name, token_id = %token.id, "token rotated");
    Ok(Json(MintedOut {
        token: token.into(),
        secret,
    }))
}

/// `GET /api/v1/tokens/current`: what the calling token may do.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentOut {
    /// Whether it is the admin token (`API_TOKEN`).
    pub admin: bool,
    /// Its name (`admin` for the admin token).
    pub name: String,
    /// Its scopes.
    pub scopes: Vec<Scope>,
    /// `"*"` or its session ids.
    #[schema(value_type = SessionSetSchema)]
    pub sessions: SessionSet,
    /// When it stops working; `null`: never.
    pub expires_at: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/v1/tokens/current",
    operation_id = "tokens_current",
    tag = "tokens",
    summary = "What the calling token may do",
    description = "Any valid token may ask; the console reads it to show only what the token may do.",
    responses((status = 200, body = CurrentOut), crate::openapi::common::ApiErrors)
)]
async fn current(Extension(principal): Extension<Principal>) -> Json<CurrentOut> {
    Json(match principal {
        Principal::Admin => CurrentOut {
            admin: true,
            name: "admin".into(),
            scopes: vec![Scope::Admin],
            sessions: SessionSet::All(AllSessions::Star),
            expires_at: None,
        },
        Principal::Token(t) => CurrentOut {
            admin: false,
            name: t.name.clone(),
            scopes: t.scopes.clone(),
            sessions: t.sessions.clone(),
            expires_at: t.expires_at,
        },
    })
}
