//! Pieces every operation of the document shares: the error body and the
//! error responses, the path parameters of each resource family (which the
//! handlers extract, so the document's parameters are the handlers' own),
//! the address formats, and the small answers several routes give.

use serde::{Deserialize, Serialize};
pub use switchboard_domain::address_schema::{
    ChatAddress, GroupAddress, PhoneNumber, PhoneOrUserJid, UserAddress,
};
use utoipa::{IntoParams, IntoResponses, ToSchema};

/// The body of every error answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"success": false, "error": {"code": "session_not_found", "message": "session `alice` does not exist"}}))]
pub struct ErrorBody {
    /// Always `false`.
    #[schema(value_type = bool, example = false)]
    pub success: bool,
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The `error` object of an error answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable, machine-readable snake_case reason (`invalid_field`,
    /// `session_not_found`, `unauthorized`, …).
    pub code: String,
    /// A sentence a person can act on; names the offending field for `invalid_field`.
    pub message: String,
    /// Whole seconds until the request could succeed, as the answer's
    /// `Retry-After` header says (`rate_limited`, `send_paced`,
    /// `reach_out_timelock`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

/// The error answers an authenticated operation may give. Which 4xx a route
/// gives for which mistake is listed in the API reference (docs/api.md).
#[derive(Debug, IntoResponses)]
pub enum ApiErrors {
    /// A client mistake: `400` a bad body, field, path or query; `401` a
    /// missing or wrong bearer token (with `WWW-Authenticate: Bearer`); `404`
    /// an unknown session or resource; `409` a session in the wrong state;
    /// `413` a body over the limit; `422` a rule of the network refused it;
    /// `429` too many requests (a token over its rate, a send over its
    /// session's pacing), with `Retry-After` in seconds.
    #[response(status = "4XX")]
    Client(ErrorBody),
    /// A gateway or network fault: `500` (opaque; logged), `502` the network
    /// failed the operation, `503` the network is unreachable.
    #[response(status = "5XX")]
    Server(ErrorBody),
}

/// `{success: true, message}`: a deletion or a request taken.
#[derive(Debug, Serialize, ToSchema)]
pub struct SuccessMessage {
    /// Always `true`.
    pub success: bool,
    /// What was done.
    pub message: String,
}

/// `{success: true}`: the change was applied.
#[derive(Debug, Serialize, ToSchema)]
pub struct Success {
    /// Always `true`.
    pub success: bool,
}

/// The session of the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SessionPath {
    /// The session id.
    pub id: String,
}

/// A group of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct GroupPath {
    /// The session id.
    pub id: String,
    /// The group: `<id>@g.us`, or the bare id.
    #[param(value_type = GroupAddress)]
    pub group: String,
}

/// A blast job of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct BlastPath {
    /// The session id.
    pub id: String,
    /// The blast job id (a UUID).
    pub job: String,
}

/// A user JID (or phone number) seen from a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SessionJidPath {
    /// The session id.
    pub id: String,
    /// A user JID or a phone number.
    #[param(value_type = UserAddress)]
    pub jid: String,
}

/// A scheduled send of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ScheduledPath {
    /// The session id.
    pub id: String,
    /// The scheduled send's id.
    pub scheduled_id: String,
}

/// A webhook of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct WebhookPath {
    /// The session id.
    pub id: String,
    /// The webhook id (a UUID).
    pub webhook_id: String,
}

/// A dead-lettered delivery of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DlqPath {
    /// The session id.
    pub id: String,
    /// The DLQ entry id (a UUID).
    pub entry_id: String,
}

/// A plugin or plugin binding.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct PluginPath {
    /// The plugin id (or, under `/bindings`, the binding id).
    pub id: String,
}

/// A send kind of a session's messages.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SendPath {
    /// The session id.
    pub id: String,
    /// The send kind: `text`, `image`, `video`, `audio`, `document`,
    /// `sticker`, `location`, `contact`, `poll`, `reaction`, `buttons`,
    /// `list`, `cta-url`, … (the request body's shape depends on it).
    pub kind: String,
}
