//! The API's one error type, rendered as
//! `{"success": false, "error": {"code": "snake_case_reason", "message": "…"}}`.
//! Client mistakes get a 4xx naming what to fix; anything else is logged and
//! answered with an opaque 500.

use std::borrow::Cow;
use std::time::Duration;

use crate::openapi::common::{ErrorBody, ErrorDetail};
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::domain::send::FieldError;
use crate::domain::storage_fault::StorageFault;
use switchboard_runtime::network::NetworkError;
use switchboard_runtime::sessions::SessionError;
use switchboard_runtime::store::StoreError;

/// An error answer of the API.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable reason.
    pub code: Cow<'static, str>,
    /// A sentence a person can act on.
    pub message: String,
    /// How long until the request could succeed, sent as `Retry-After` in
    /// whole seconds (a `429`).
    pub retry_after: Option<Duration>,
}

/// Shorthand for handler results.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error with any status.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// 429 with `Retry-After`: try again after `retry_after`.
    pub fn too_many_requests(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
        retry_after: Duration,
    ) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, code, message)
        }
    }

    /// 400.
    pub fn bad_request(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 400 `invalid_field`, naming the field.
    pub fn invalid_field(field: &str, message: impl std::fmt::Display) -> Self {
        Self::bad_request("invalid_field", format!("`{field}` {message}"))
    }

    /// 401 with `WWW-Authenticate: Bearer`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 404.
    pub fn not_found(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 409.
    pub fn conflict(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 500, logging the cause; the caller sees only an opaque message.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "the gateway failed to handle this request; the cause is in its log",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            success: false,
            error: ErrorDetail {
                code: self.code.into_owned(),
                message: self.message,
                retry_after: self
                    .retry_after
                    .map(switchboard_runtime::messages::retry_after_secs),
            },
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(wait) = self.retry_after {
            resp.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(switchboard_runtime::messages::retry_after_secs(wait)),
            );
        }
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        // A body over its limit (or an upload refused for lack of space) is
        // refused before it is read: the rest of it is still on the wire, so
        // the connection ends with the answer, and says so, or a client
        // would send its next request on it.
        if self.status == StatusCode::PAYLOAD_TOO_LARGE
            || self.status == StatusCode::INSUFFICIENT_STORAGE
        {
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        resp
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        if let StoreError::Secret(why) = &e {
            // The operator's to mend (the data directory's key), and the
            // message says how; it names no secret.
            return Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "secret_unreadable",
                why.clone(),
            );
        }
        match e.fault() {
            Some(fault) => Self::storage(fault, e.to_string()),
            None => Self::internal(e),
        }
    }
}

impl ApiError {
    /// A write refused for a storage fault: `507 insufficient_storage` for
    /// a full disk (or one under its free-space floor), `503
    /// storage_unavailable` for any other; either can succeed later, once
    /// the fault is gone, without a restart.
    pub fn storage(fault: StorageFault, message: impl Into<String>) -> Self {
        let status = match fault {
            StorageFault::NoSpace => StatusCode::INSUFFICIENT_STORAGE,
            StorageFault::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        };
        tracing::warn!(
            kind = fault.as_str(),
            "a request was refused for a storage fault"
        );
        Self::new(status, fault.code(), message)
    }
}

impl From<FieldError> for ApiError {
    fn from(e: FieldError) -> Self {
        Self::invalid_field(&e.field, &e.message)
    }
}

impl From<NetworkError> for ApiError {
    fn from(e: NetworkError) -> Self {
        let msg = e.to_string();
        match e {
            NetworkError::NotConnected => Self::conflict("session_not_connected", msg),
            NetworkError::InvalidState(_) => Self::conflict("invalid_session_state", msg),
            NetworkError::NotFound(_) => Self::not_found("not_found_on_network", msg),
            NetworkError::Rejected(_) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "network_rejected", msg)
            }
            NetworkError::Failed(_) => Self::new(StatusCode::BAD_GATEWAY, "network_error", msg),
            // Reached only by what the send core does not carry (a message
            // action): its sends learn the lock and answer with its end.
            NetworkError::ReachOutTimelock { until } => {
                let now = crate::domain::time::unix_now();
                let wait = until.map_or(1, |t| (t - now).max(1)) as u64;
                Self::too_many_requests("reach_out_timelock", msg, Duration::from_secs(wait))
            }
            NetworkError::NotSupported(_) => {
                Self::new(StatusCode::NOT_IMPLEMENTED, "not_supported_by_network", msg)
            }
            NetworkError::Storage(fault, _) => Self::storage(fault, msg),
        }
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> Self {
        let msg = e.to_string();
        match e {
            SessionError::NotFound(_) => Self::not_found("session_not_found", msg),
            SessionError::AlreadyExists(_) => Self::conflict("session_exists", msg),
            SessionError::Invalid { .. } => Self::bad_request("invalid_field", msg),
            SessionError::PhoneTaken(_) => Self::conflict("phone_taken", msg),
            SessionError::Paused(_) => Self::conflict("session_paused", msg),
            SessionError::WrongState(_) => Self::conflict("invalid_session_state", msg),
            SessionError::Conflict { code, .. } => Self::conflict(code, msg),
            SessionError::Network(n) => n.into(),
            SessionError::Store(s) => s.into(),
            SessionError::RejectedByPlugin(_) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "rejected_by_plugin", msg)
            }
            SessionError::SendPaced { retry_after, .. } => {
                Self::too_many_requests("send_paced", msg, retry_after)
            }
            SessionError::Timelocked { lock, .. } => {
                let wait = lock.retry_after_secs(crate::domain::time::unix_now()) as u64;
                Self::too_many_requests("reach_out_timelock", msg, Duration::from_secs(wait))
            }
        }
    }
}
