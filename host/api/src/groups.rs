//! Groups (`/sessions/{id}/groups…`): list, get, info, create, subject,
//! description, settings, leave, add/remove participants, promote/demote and
//! the invite link. Every operation acts as the session's account and needs a
//! logged-in, unpaused session; the network decides the rest.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post, put};
use serde::{Deserialize, Deserializer, Serialize};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::group::{
    Group, GroupInfo, GroupSettings, GroupSummary, MAX_PARTICIPANTS, MemberAddMode, MemberLinkMode,
    MembershipApprovalMode, ParticipantResult, SettingsUpdate, check_description, check_subject,
};
use crate::domain::jid::{Jid, JidKind};
use crate::openapi::common::{GroupPath, SessionPath, Success};
use switchboard_runtime::network::NetworkSession;
use switchboard_runtime::network::groups::{GroupError, NewGroup};
use switchboard_runtime::sessions::SessionError;

/// The group routes (membership and the invite link are in `group_members`).
pub fn routes() -> Router<AppState> {
    let g = "/api/v1/sessions/{id}/groups/{group}";
    Router::new()
        .route("/api/v1/sessions/{id}/groups", get(list).post(create))
        .route(g, get(get_group))
        .route(&format!("{g}/info"), get(info))
        .route(&format!("{g}/subject"), put(subject))
        .route(&format!("{g}/description"), put(description))
        .route(&format!("{g}/settings"), put(settings))
        .route(&format!("{g}/leave"), post(leave))
}

impl From<GroupError> for ApiError {
    fn from(e: GroupError) -> Self {
        let msg = e.to_string();
        match e {
            GroupError::NotFound(_) => Self::not_found("group_not_found", msg),
            GroupError::NotAdmin(_) => Self::new(StatusCode::FORBIDDEN, "not_group_admin", msg),
            GroupError::DescriptionConflict(_) => Self::conflict("description_conflict", msg),
            GroupError::NotParticipant(_) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "not_a_participant", msg)
            }
            GroupError::NotAllowed(_) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "not_allowed", msg)
            }
            GroupError::Network(n) => n.into(),
        }
    }
}

/// 404 `session_not_found` unless the session exists.
pub(super) fn known(state: &AppState, id: &str) -> ApiResult<()> {
    if state.sessions.exists(id) {
        Ok(())
    } else {
        Err(SessionError::NotFound(id.to_owned()).into())
    }
}

/// The client of a session that can act now (logged in, not paused).
pub(super) fn operable(state: &AppState, id: &str) -> ApiResult<Arc<dyn NetworkSession>> {
    match state.sessions.sender(id) {
        Ok((client, _)) => Ok(client),
        Err(SessionError::WrongState(_)) => Err(ApiError::conflict(
            "invalid_session_state",
            format!("session `{id}` is not logged_in; group operations need a logged-in session"),
        )),
        Err(e) => Err(e.into()),
    }
}

/// The group of the path: `<id>@g.us`, or the bare id.
pub(super) fn group_path(raw: &str) -> ApiResult<Jid> {
    let full = if raw.contains('@') {
        raw.to_owned()
    } else {
        format!("{raw}@g.us")
    };
    match Jid::parse(&full) {
        Ok(j) if j.is_group() => Ok(j),
        Ok(_) => Err(ApiError::bad_request(
            "invalid_path",
            format!("`group_jid` must be a group JID (`<id>@g.us`), not `{raw}`"),
        )),
        Err(e) => Err(ApiError::bad_request(
            "invalid_path",
            format!("`group_jid` is invalid: {e}"),
        )),
    }
}

/// User JIDs (or phone numbers) of a `participants` list: canonical, at most
/// [`MAX_PARTICIPANTS`], and not empty unless `may_be_empty`.
pub(super) fn user_jids(values: &[String], may_be_empty: bool) -> ApiResult<Vec<Jid>> {
    if values.is_empty() && !may_be_empty {
        return Err(ApiError::invalid_field(
            "participants",
            "must name at least one user",
        ));
    }
    if values.len() > MAX_PARTICIPANTS {
        return Err(ApiError::invalid_field(
            "participants",
            format!(
                "names {} users; at most {MAX_PARTICIPANTS} are allowed",
                values.len()
            ),
        ));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let field = format!("participants[{i}]");
            match Jid::parse_recipient(v) {
                Ok(j) if j.kind() == JidKind::User => Ok(j),
                Ok(_) => Err(ApiError::invalid_field(
                    &field,
                    format!("must be a user JID or phone number, not `{v}`"),
                )),
                Err(e) => Err(ApiError::invalid_field(&field, e)),
            }
        })
        .collect()
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/groups",
    operation_id = "groups_list",
    tag = "groups",
    summary = "The groups the session's account is in",
    params(SessionPath),
    responses(
        (status = 200, body = GroupList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<GroupList>> {
    known(&state, &id)?;
    let groups = operable(&state, &id)?.groups().await?;
    Ok(Json(GroupList {
        total: groups.len(),
        groups,
    }))
}

/// Body of Create Group.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CreateGroupIn)]
struct CreateIn {
    /// The group's name: 1 to 100 characters, not only whitespace.
    // The pattern finds a character `str::trim` keeps: the class lists every
    // Unicode White_Space character, as `check_subject` counts them.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    name: String,
    /// The people to add besides the creator (may be empty); phone numbers
    /// or user JIDs.
    #[schema(value_type = Vec<crate::openapi::common::PhoneOrUserJid>, max_items = 1024)]
    participants: Vec<String>,
    /// Whether join requests need approval (`off` when absent).
    membership_approval_mode: Option<MembershipApprovalMode>,
    /// Who can add participants (`admin_add` when absent).
    member_add_mode: Option<MemberAddMode>,
    /// Who can read and reset the invite link (`admin_link` when absent).
    member_link_mode: Option<MemberLinkMode>,
}

/// `GET /api/v1/sessions/{id}/groups`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GroupList {
    /// The groups the account is a member of.
    pub groups: Vec<GroupSummary>,
    /// How many groups.
    pub total: usize,
}

/// `201` of `POST /api/v1/sessions/{id}/groups`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GroupCreated {
    /// The new group's JID.
    pub group_jid: String,
    /// What happened to each requested participant.
    pub participants: Vec<ParticipantResult>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/groups",
    operation_id = "groups_create",
    tag = "groups",
    summary = "Create a group",
    params(SessionPath),
    request_body = CreateIn,
    responses(
        (status = 201, body = GroupCreated),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<CreateIn>,
) -> ApiResult<(StatusCode, Json<GroupCreated>)> {
    known(&state, &id)?;
    check_subject(&body.name).map_err(|m| ApiError::invalid_field("name", m))?;
    let participants = user_jids(&body.participants, true)?;
    let mut settings = GroupSettings::default();
    settings.apply(&SettingsUpdate {
        membership_approval_mode: body.membership_approval_mode,
        member_add_mode: body.member_add_mode,
        member_link_mode: body.member_link_mode,
    });
    let new = NewGroup {
        name: body.name,
        participants,
        settings,
    };
    let created = operable(&state, &id)?.create_group(&new).await?;
    let answer = GroupCreated {
        group_jid: created.jid,
        participants: created.participants,
    };
    Ok((StatusCode::CREATED, Json(answer)))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/groups/{group}",
    operation_id = "groups_get_group",
    tag = "groups",
    summary = "A group's summary",
    params(GroupPath),
    responses(
        (status = 200, body = Group),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_group(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
) -> ApiResult<Json<Group>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    let info = operable(&state, &id)?.group_info(&group).await?;
    Ok(Json((&info).into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/groups/{group}/info",
    operation_id = "groups_info",
    tag = "groups",
    summary = "A group with its participants and settings",
    params(GroupPath),
    responses(
        (status = 200, body = GroupInfo),
        crate::openapi::common::ApiErrors,
    )
)]
async fn info(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
) -> ApiResult<Json<GroupInfo>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    Ok(Json(operable(&state, &id)?.group_info(&group).await?))
}

/// `{success: true}`: the change was applied.
pub(super) fn success() -> Json<Success> {
    Json(Success { success: true })
}

/// Body of Set Group Subject.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GroupSubjectIn)]
struct SubjectIn {
    /// The new name: 1 to 100 characters, not only whitespace.
    // The pattern finds a character `str::trim` keeps: the class lists every
    // Unicode White_Space character, as `check_subject` counts them.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    subject: String,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/groups/{group}/subject",
    operation_id = "groups_subject",
    tag = "groups",
    summary = "Rename a group",
    params(GroupPath),
    request_body = SubjectIn,
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn subject(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<SubjectIn>,
) -> ApiResult<Json<Success>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    check_subject(&body.subject).map_err(|m| ApiError::invalid_field("subject", m))?;
    let client = operable(&state, &id)?;
    client.set_group_subject(&group, &body.subject).await?;
    Ok(success())
}

/// A field that must be present but may be `null`: absent is `None`,
/// `null` is `Some(None)`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// Body of Set Group Description.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GroupDescriptionIn)]
struct DescriptionIn {
    /// The new description, at most 2048 characters; `null` or a blank
    /// string deletes it. Required.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, required = true, max_length = 2048)]
    description: Option<Option<String>>,
    /// The id of the description being replaced (`topic_id` of Get Group),
    /// to refuse the change with `409` when someone changed it meanwhile.
    #[serde(default)]
    prev_id: Option<String>,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/groups/{group}/description",
    operation_id = "groups_description",
    tag = "groups",
    summary = "Set or delete a group's description",
    params(GroupPath),
    request_body = DescriptionIn,
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn description(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<DescriptionIn>,
) -> ApiResult<Json<Success>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    let Some(text) = body.description else {
        return Err(ApiError::invalid_field(
            "description",
            "is required: a string, or null to delete the description",
        ));
    };
    let text = check_description(text.as_deref())
        .map_err(|m| ApiError::invalid_field("description", m))?;
    let client = operable(&state, &id)?;
    client
        .set_group_description(&group, text, body.prev_id.as_deref())
        .await?;
    Ok(success())
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/groups/{group}/settings",
    operation_id = "groups_settings",
    tag = "groups",
    summary = "Change a group's settings",
    params(GroupPath),
    request_body = SettingsUpdate,
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn settings(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<SettingsUpdate>,
) -> ApiResult<Json<Success>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    let client = operable(&state, &id)?;
    client.update_group_settings(&group, &body).await?;
    Ok(success())
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/groups/{group}/leave",
    operation_id = "groups_leave",
    tag = "groups",
    summary = "Leave a group",
    params(GroupPath),
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn leave(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
) -> ApiResult<Json<Success>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    operable(&state, &id)?.leave_group(&group).await?;
    Ok(success())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::group::{MAX_DESCRIPTION_CHARS, MAX_SUBJECT_CHARS};

    #[test]
    fn a_group_path_takes_the_jid_or_the_bare_id() {
        let j = group_path("120363000000000001@g.us").unwrap();
        assert_eq!(j.to_string(), "120363000000000001@g.us");
        assert_eq!(group_path("120363000000000001").unwrap(), j);
        assert_eq!(
            group_path("15551234567@s.whatsapp.net").unwrap_err().status,
            400
        );
        assert_eq!(group_path("x@nowhere").unwrap_err().code, "invalid_path");
    }

    #[test]
    fn participants_name_the_entry_that_is_not_a_user() {
        let ok = user_jids(&["+1 555 123 4567".into()], false).unwrap();
        assert_eq!(ok[0].to_string(), "15551234567@s.whatsapp.net");
        let e = user_jids(&["15551234567".into(), "1@g.us".into()], false).unwrap_err();
        assert!(e.message.contains("participants[1]"), "{}", e.message);
        let e = user_jids(&[], false).unwrap_err();
        assert!(e.message.contains("participants"));
        assert!(user_jids(&[], true).unwrap().is_empty());
    }

    /// The JSON form of a type's schema.
    fn schema_of<T: utoipa::PartialSchema>() -> serde_json::Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    /// `[^…]` listing every character `str::trim` strips, as `\uXXXX`
    /// single characters and ranges.
    fn not_blank_pattern() -> String {
        let spaces: Vec<u32> = (0..=u32::from(char::MAX))
            .filter(|&c| char::from_u32(c).is_some_and(char::is_whitespace))
            .collect();
        let mut class = String::new();
        let mut i = 0;
        while i < spaces.len() {
            let mut j = i;
            while j + 1 < spaces.len() && spaces[j + 1] == spaces[j] + 1 {
                j += 1;
            }
            class.push_str(&format!("\\u{:04X}", spaces[i]));
            if j > i + 1 {
                class.push_str(&format!("-\\u{:04X}", spaces[j]));
            } else if j == i + 1 {
                class.push_str(&format!("\\u{:04X}", spaces[j]));
            }
            i = j + 1;
        }
        format!("[^{class}]")
    }

    #[test]
    fn names_are_documented_as_the_subject_check_enforces() {
        let create = schema_of::<CreateIn>();
        let subject = schema_of::<SubjectIn>();
        for name in [
            &create["properties"]["name"],
            &subject["properties"]["subject"],
        ] {
            assert_eq!(name["minLength"], 1, "{name}");
            assert_eq!(name["maxLength"], MAX_SUBJECT_CHARS, "{name}");
            // Matches exactly the strings with a character `trim` keeps,
            // which are the ones `check_subject` does not call blank.
            assert_eq!(name["pattern"], not_blank_pattern(), "{name}");
        }
    }

    #[test]
    fn list_bounds_and_the_description_are_documented_as_enforced() {
        let create = schema_of::<CreateIn>();
        let participants = &create["properties"]["participants"];
        assert_eq!(participants["maxItems"], MAX_PARTICIPANTS, "{participants}");
        assert!(participants.get("minItems").is_none(), "{participants}");
        let members = schema_of::<super::super::group_members::ParticipantsIn>();
        let participants = &members["properties"]["participants"];
        assert_eq!(participants["minItems"], 1, "{participants}");
        assert_eq!(participants["maxItems"], MAX_PARTICIPANTS, "{participants}");
        let description = schema_of::<DescriptionIn>();
        let required = description["required"].as_array().unwrap();
        assert_eq!(
            required,
            &[serde_json::json!("description")],
            "{description}"
        );
        let text = &description["properties"]["description"];
        assert_eq!(text["maxLength"], MAX_DESCRIPTION_CHARS, "{text}");
    }
}
