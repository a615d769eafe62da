//! The simulated network's group controls (`/api/v1/sim/groups/...`): join a
//! group by invite code as a session's account or as any account on the
//! network, the way a phone following an invite link would.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::ApiJson;
use super::sim::sim;
use crate::domain::jid::{Jid, JidKind};
use switchboard_runtime::network::groups::{GroupError, INVITE_BASE};
use switchboard_runtime::network::sim::{JoinStatus, Joiner};
use switchboard_runtime::sessions::SessionError;

/// The sim group control routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/sim/groups/join", post(join))
}

/// Body of `POST /api/v1/sim/groups/join`: `code` and exactly one of
/// `session_id` and `phone`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinIn {
    code: String,
    session_id: Option<String>,
    phone: Option<String>,
}

/// The body's schema: "exactly one of `session_id` and `phone`" is two
/// alternatives, which a derived schema cannot say.
impl utoipa::PartialSchema for JoinIn {
    fn schema() -> RefOr<Schema> {
        let by = |field: &str, value: RefOr<Schema>| {
            let code = ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(format!(
                    r"^(?:{}/+)?[A-Za-z0-9]+$",
                    INVITE_BASE.replace('.', r"\.")
                )))
                .description(Some(
                    "An invite code, or the link `https://chat.whatsapp.com/<code>`.",
                ));
            ObjectBuilder::new()
                .property("code", code)
                .required("code")
                .property(field, value)
                .required(field)
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        };
        OneOfBuilder::new()
            .description(Some(
                "Join as a session's account (`session_id`) or as any phone on the network (`phone`).",
            ))
            .item(by(
                "session_id",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some("The joining session."))
                    .into(),
            ))
            .item(by("phone", Ref::from_schema_name("PhoneNumber").into()))
            .into()
    }
}

impl utoipa::ToSchema for JoinIn {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SimJoinIn")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        use utoipa::PartialSchema;
        schemas.push((
            "PhoneNumber".into(),
            crate::openapi::common::PhoneNumber::schema(),
        ));
    }
}

/// `POST /api/v1/sim/groups/join`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Joined {
    /// The group joined.
    pub group_jid: String,
    /// What joining did.
    pub status: JoinStatus,
}

/// The code of an invite link, or the code itself.
fn invite_code(raw: &str) -> ApiResult<&str> {
    let raw = raw.trim();
    let code = raw
        .strip_prefix(INVITE_BASE)
        .map(|rest| rest.trim_start_matches('/'))
        .unwrap_or(raw);
    if code.is_empty() || !code.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(ApiError::invalid_field(
            "code",
            format!("must be an invite code or a link `{INVITE_BASE}/<code>`"),
        ));
    }
    Ok(code)
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/groups/join",
    operation_id = "sim_join",
    tag = "sim",
    summary = "Join a group by invite, as a session's account or any phone",
    request_body = JoinIn,
    responses(
        (status = 200, body = Joined),
        crate::openapi::common::ApiErrors,
    )
)]
async fn join(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<JoinIn>,
) -> ApiResult<Json<Joined>> {
    let sim = sim(&state)?;
    let code = invite_code(&body.code)?;
    let joiner = match (body.session_id, body.phone) {
        (Some(id), None) => {
            if !state.sessions.exists(&id) {
                return Err(SessionError::NotFound(id).into());
            }
            Joiner::Session(id)
        }
        (None, Some(phone)) => match Jid::parse_recipient(&phone) {
            Ok(j) if j.kind() == JidKind::User => Joiner::User(j),
            Ok(_) => {
                return Err(ApiError::invalid_field(
                    "phone",
                    "must be a user JID or phone number",
                ));
            }
            Err(e) => return Err(ApiError::invalid_field("phone", e)),
        },
        _ => {
            return Err(ApiError::bad_request(
                "invalid_body",
                "give exactly one of `session_id` and `phone`",
            ));
        }
    };
    match sim.join_by_invite(&joiner, code).await {
        Ok((group_jid, status)) => Ok(Json(Joined { group_jid, status })),
        Err(GroupError::NotFound(m)) => Err(ApiError::not_found("invite_not_found", m)),
        Err(e) => Err(e.into()),
    }
}
