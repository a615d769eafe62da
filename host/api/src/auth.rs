//! Authentication and authorization of every `/api/v1` route. The bearer
//! token is the admin token (`API_TOKEN`, compared in constant time) or a
//! minted token (found by the hash of its secret); the route's declared
//! access (`scopes.rs`) and, for a session's route, the token's sessions
//! decide. A token limited to some sessions gets `404 session_not_found`
//! for any other session, the answer an unknown session gets, so it cannot
//! learn which sessions exist. The caller ([`Principal`]) rides along in the
//! request's extensions for handlers that filter fleet-wide lists.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::AppState;
use super::error::ApiError;
use super::scopes::{self, Access};
use super::tokens::Refusal;
use crate::domain::token::{Scope, TokenRecord, TokenRefusal};

/// Who is calling.
#[derive(Debug, Clone)]
pub enum Principal {
    /// The admin token: everything.
    Admin,
    /// A minted token.
    Token(Arc<TokenRecord>),
}

impl Principal {
    /// Whether it may act on session `id`.
    pub fn covers(&self, id: &str) -> bool {
        match self {
            Principal::Admin => true,
            Principal::Token(t) => t.sessions.covers(id),
        }
    }

    /// Whether it has `scope`.
    pub fn allows(&self, scope: Scope) -> bool {
        match self {
            Principal::Admin => true,
            Principal::Token(t) => t.allows(scope),
        }
    }

    /// The name metrics and logs show (never the secret).
    pub fn name(&self) -> &str {
        match self {
            Principal::Admin => "admin",
            Principal::Token(t) => &t.name,
        }
    }
}

/// The bearer token of a request, or why there is none.
fn bearer(req: &Request) -> Result<&str, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ApiError::unauthorized("missing token: send `Authorization: Bearer <API_TOKEN>`")
        })?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => Ok(token.trim()),
        _ => Err(ApiError::unauthorized(
            "the Authorization header must use the Bearer scheme",
        )),
    }
}

/// Whether `presented` is the admin token. The SHA-256 digests are
/// compared, in constant time: both are 32 bytes whatever the tokens'
/// lengths, so neither the time taken nor an early exit on a length
/// mismatch tells a caller how long the admin token is or how much of it
/// they guessed.
fn is_admin(admin: &str, presented: &str) -> bool {
    let want = Sha256::digest(admin.as_bytes());
    let got = Sha256::digest(presented.as_bytes());
    bool::from(want.as_slice().ct_eq(got.as_slice()))
}

/// The caller a presented token stands for.
fn principal(state: &AppState, presented: &str) -> Result<Principal, ApiError> {
    if is_admin(&state.token, presented) {
        return Ok(Principal::Admin);
    }
    match state.tokens.authenticate(presented) {
        Ok(t) => Ok(Principal::Token(t)),
        Err(Refusal::Unknown) => Err(ApiError::unauthorized(
            "the bearer token is not valid for this gateway",
        )),
        Err(Refusal::Gone(TokenRefusal::Revoked)) => {
            Err(ApiError::unauthorized("this token was revoked"))
        }
        Err(Refusal::Gone(TokenRefusal::Expired)) => {
            Err(ApiError::unauthorized("this token expired"))
        }
    }
}

/// Lets a request through when its token may use the route (and, for a
/// session's route, that session), within the token's request rate.
pub async fn require_token(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Result<Response, Response> {
    let who = bearer(&req)
        .and_then(|t| principal(&state, t))
        .map_err(|e| {
            state.metrics.http().auth(None, "unauthorized");
            e.into_response()
        })?;
    let template = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default();
    if let Some(session) = scopes::session_of(&template, req.uri().path())
        && !who.covers(session)
    {
        state.metrics.http().auth(Some(who.name()), "hidden");
        return Err(ApiError::not_found(
            "session_not_found",
            format!("no session with id `{session}`"),
        )
        .into_response());
    }
    let allowed = match scopes::access(req.method(), &template) {
        Some(Access::Any) => true,
        Some(Access::Needs(scope)) => who.allows(scope),
        None => matches!(who, Principal::Admin),
    };
    if !allowed {
        state.metrics.http().auth(Some(who.name()), "forbidden");
        let need = match scopes::access(req.method(), &template) {
            Some(Access::Needs(scope)) => format!("the `{}` scope", scope.as_str()),
            _ => "the admin token".to_owned(),
        };
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("this token may not do this: it needs {need}"),
        )
        .into_response());
    }
    if let Principal::Token(t) = &who
        && let Err(wait) = state.tokens.admit(t)
    {
        state.metrics.http().auth(Some(who.name()), "rate_limited");
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let mut resp = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "token `{}` is over its {} requests a minute; retry in {} s",
                t.name,
                t.rate_per_minute.unwrap_or(0),
                secs.max(1)
            ),
        )
        .into_response();
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
        return Err(resp);
    }
    state.metrics.http().auth(Some(who.name()), "allowed");
    req.extensions_mut().insert(who);
    Ok(next.run(req).await)
}

#[cfg(test)]
mod tests {
    use super::is_admin;

    #[test]
    fn only_the_admin_token_itself_is_the_admin_token() {
        let admin = "admin-token-0123456789";
        assert!(is_admin(admin, admin));
        assert!(!is_admin(admin, "admin-token-012345678"));
        assert!(!is_admin(admin, "admin-token-01234567890"));
        assert!(!is_admin(admin, ""));
        assert!(!is_admin(admin, "Admin-token-0123456789"));
    }
}
