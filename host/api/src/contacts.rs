//! Contacts: the stored directory of a session (`GET …/contacts`, local data
//! only) and the lookups the network answers (check phones, contact info,
//! profile picture, user info).

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use crate::domain::contact::StoredContact;
use crate::domain::jid::{Jid, JidKind};
use crate::openapi::common::{PhoneOrUserJid, SessionJidPath, SessionPath};
use switchboard_runtime::network::contacts::{ContactInfo, ProfilePicture, UserInfo};

/// Most phones or JIDs in one lookup.
pub const MAX_LOOKUP: usize = 1000;

/// The contacts routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/contacts", get(list))
        .route("/api/v1/sessions/{id}/contacts/check", post(check))
        .route("/api/v1/sessions/{id}/contacts/info", post(info))
        .route("/api/v1/sessions/{id}/contacts/users", post(users))
        .route("/api/v1/sessions/{id}/contacts/{jid}/picture", get(picture))
}

/// An account's address: a user JID, a phone number or an `@lid`.
pub(super) fn account_jid(field: &str, value: &str) -> ApiResult<Jid> {
    let jid = Jid::parse_recipient(value).map_err(|e| ApiError::invalid_field(field, e))?;
    match jid.kind() {
        JidKind::User | JidKind::Lid => Ok(jid),
        _ => Err(ApiError::invalid_field(
            field,
            format!("`{jid}` is not a user: give a user JID, a phone number or an `@lid`"),
        )),
    }
}

/// A non-empty list of at most [`MAX_LOOKUP`] entries, each checked by `one`
/// (errors name the entry, `jids[2]`); duplicates are dropped, order kept.
pub(super) fn checked_list<T: PartialEq>(
    field: &str,
    values: &[String],
    one: impl Fn(&str, &str) -> ApiResult<T>,
) -> ApiResult<Vec<T>> {
    if values.is_empty() {
        return Err(ApiError::invalid_field(field, "must not be empty"));
    }
    if values.len() > MAX_LOOKUP {
        return Err(ApiError::invalid_field(
            field,
            format!(
                "has {} entries; at most {MAX_LOOKUP} are allowed",
                values.len()
            ),
        ));
    }
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let item = one(&format!("{field}[{i}]"), v)?;
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

/// Query of `GET …/contacts`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Keeps the contacts whose phone or any name (full, first, push,
    /// business) contains this text, case-insensitively; all of them when
    /// absent or empty.
    q: Option<String>,
    /// Page size: 100 when absent, clamped to 1..=1000.
    limit: Option<i64>,
    /// Contacts to skip: 0 when absent; a negative value counts as 0.
    offset: Option<i64>,
}

/// `GET /api/v1/sessions/{id}/contacts`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactPage {
    /// The page of the directory.
    pub contacts: Vec<StoredContact>,
    /// The page size used.
    pub limit: usize,
    /// Contacts skipped.
    pub offset: usize,
    /// Matching contacts in all.
    pub total: usize,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/contacts",
    operation_id = "contacts_list",
    tag = "contacts",
    summary = "Search the session's contact directory",
    params(SessionPath, ListQuery),
    responses(
        (status = 200, body = ContactPage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<ContactPage>> {
    let (limit, offset) = Paging {
        limit: query.limit,
        offset: query.offset,
    }
    .resolve();
    let q = query.q.unwrap_or_default();
    let page = state.sessions.contacts(&id, &q, limit, offset)?;
    Ok(Json(ContactPage {
        contacts: page.contacts,
        limit,
        offset,
        total: page.total,
    }))
}

/// Body of `POST …/contacts/check`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PhoneCheckIn)]
struct CheckIn {
    /// The phone numbers (or user JIDs) to check; duplicates are checked
    /// once. Also taken as `phone_numbers`, as a client written for waxum
    /// sends it.
    #[serde(alias = "phone_numbers")]
    #[schema(value_type = Vec<PhoneOrUserJid>, min_items = 1, max_items = 1000)]
    phones: Vec<String>,
}

/// One phone of `POST …/contacts/check`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneCheckOut {
    /// Whether an account has it.
    pub exists: bool,
    /// The same as `exists`, under waxum's name, for its clients.
    pub is_registered: bool,
    /// The account's JID; `null` when no account has the number.
    pub jid: Option<String>,
    /// The phone as given.
    pub phone: String,
}

/// `POST …/contacts/check`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneChecks {
    /// One result per distinct phone, in the order given.
    pub results: Vec<PhoneCheckOut>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/check",
    operation_id = "contacts_check",
    tag = "contacts",
    summary = "Which phone numbers have an account",
    params(SessionPath),
    request_body = CheckIn,
    responses(
        (status = 200, body = PhoneChecks),
        crate::openapi::common::ApiErrors,
    )
)]
async fn check(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<CheckIn>,
) -> ApiResult<Json<PhoneChecks>> {
    state.sessions.get(&id)?;
    // Each entry keeps the spelling it was given, for the answer.
    let asked = checked_list("phones", &body.phones, |field, p| {
        let jid = Jid::parse_recipient(p).map_err(|e| ApiError::invalid_field(field, e))?;
        let digits = jid.phone().ok_or_else(|| {
            ApiError::invalid_field(field, format!("`{p}` is not a phone number"))
        })?;
        Ok((p.to_owned(), digits.to_owned()))
    })?;
    let digits: Vec<String> = asked.iter().map(|(_, d)| d.clone()).collect();
    let (client, _) = state.sessions.sender(&id)?;
    let checks = client.check_phones(&digits).await?;
    let results = asked
        .into_iter()
        .zip(checks)
        .map(|((given, _), c)| PhoneCheckOut {
            exists: c.jid.is_some(),
            is_registered: c.jid.is_some(),
            jid: c.jid,
            phone: given,
        })
        .collect();
    Ok(Json(PhoneChecks { results }))
}

/// Body of `POST …/contacts/info`: one account, or a list of them as waxum
/// sends it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged, try_from = "InfoFields")]
#[schema(as = ContactInfoIn)]
enum InfoIn {
    /// One account, answered with its info.
    One(InfoByJid),
    /// Several accounts, waxum's request, answered with `{contacts}`.
    Many(InfoByPhones),
}

/// `POST …/contacts/info` for one account.
// The body is read through `InfoFields`; the serde attributes here (and on
// `InfoByPhones`) are what the document reads to close each form to
// unknown fields, as the reading does.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ContactInfoByJidIn)]
struct InfoByJid {
    /// The account: a phone number, a user JID or a LID.
    #[schema(value_type = crate::openapi::common::UserAddress)]
    jid: String,
}

/// `POST …/contacts/info` for several accounts, as waxum asks.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ContactInfoByPhonesIn)]
struct InfoByPhones {
    /// The accounts: phone numbers, user JIDs or LIDs; duplicates are asked
    /// once. waxum's spelling; not with `jid`.
    #[schema(
        value_type = Vec<crate::openapi::common::UserAddress>,
        min_items = 1,
        max_items = 1000
    )]
    phones: Vec<String>,
}

/// The fields of `POST …/contacts/info` as sent, before [`InfoIn`] tells
/// which form they are (so a wrong type names its field, and both forms at
/// once are refused as one body).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InfoFields {
    jid: Option<String>,
    phones: Option<Vec<String>>,
}

impl TryFrom<InfoFields> for InfoIn {
    type Error = String;

    fn try_from(fields: InfoFields) -> Result<Self, String> {
        match (fields.jid, fields.phones) {
            (Some(jid), None) => Ok(InfoIn::One(InfoByJid { jid })),
            (None, Some(phones)) => Ok(InfoIn::Many(InfoByPhones { phones })),
            (Some(_), Some(_)) => {
                Err("give `jid` or `phones` (waxum's spelling), not both".to_owned())
            }
            // serde's own wording, which the extractor answers as the
            // missing field it names.
            (None, None) => Err("missing field `jid`".to_owned()),
        }
    }
}

/// `POST …/contacts/info`: the info of the account asked by `jid`, or, asked
/// by `phones` (waxum's form), waxum's `{contacts}` list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ContactInfoAnswer {
    /// The account asked by `jid`.
    One(ContactInfo),
    /// The accounts asked by `phones`.
    Many(ContactInfos),
}

/// `POST …/contacts/info` asked by `phones`, as waxum answers it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactInfos {
    /// One entry per account on the network, in the order asked; accounts
    /// not on the network are left out.
    pub contacts: Vec<ContactInfo>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/info",
    operation_id = "contacts_info",
    tag = "contacts",
    summary = "A contact's info from the network",
    params(SessionPath),
    request_body = InfoIn,
    responses(
        (status = 200, body = ContactInfoAnswer),
        crate::openapi::common::ApiErrors,
    )
)]
async fn info(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<InfoIn>,
) -> ApiResult<Json<ContactInfoAnswer>> {
    state.sessions.get(&id)?;
    match body {
        InfoIn::One(InfoByJid { jid }) => {
            let jid = account_jid("jid", &jid)?;
            let (client, _) = state.sessions.sender(&id)?;
            Ok(Json(ContactInfoAnswer::One(
                client.contact_info(&jid).await?,
            )))
        }
        InfoIn::Many(InfoByPhones { phones }) => {
            let jids = checked_list("phones", &phones, account_jid)?;
            let (client, _) = state.sessions.sender(&id)?;
            let contacts = client.contact_infos(&jids).await?;
            Ok(Json(ContactInfoAnswer::Many(ContactInfos { contacts })))
        }
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/contacts/{jid}/picture",
    operation_id = "contacts_picture",
    tag = "contacts",
    summary = "A contact's profile picture",
    params(SessionJidPath),
    responses(
        (status = 200, body = ProfilePicture),
        crate::openapi::common::ApiErrors,
    )
)]
async fn picture(
    State(state): State<AppState>,
    ApiPath(SessionJidPath { id, jid }): ApiPath<SessionJidPath>,
) -> ApiResult<Json<ProfilePicture>> {
    state.sessions.get(&id)?;
    let jid = account_jid("jid", &jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let picture = client.profile_picture(&jid).await?.ok_or_else(|| {
        ApiError::not_found(
            "no_profile_picture",
            format!("{jid} has no profile picture (or does not show it to this account)"),
        )
    })?;
    Ok(Json(picture))
}

/// Body of `POST …/contacts/users`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = UserInfoIn)]
struct UsersIn {
    /// The accounts: phone numbers, user JIDs or LIDs; duplicates are asked
    /// once.
    #[schema(
        value_type = Vec<crate::openapi::common::UserAddress>,
        min_items = 1,
        max_items = 1000
    )]
    jids: Vec<String>,
}

/// `POST …/contacts/users`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserInfos {
    /// One entry per account on the network, in the order asked; accounts
    /// not on the network are left out.
    pub users: Vec<UserInfo>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/users",
    operation_id = "contacts_users",
    tag = "contacts",
    summary = "User info for several JIDs",
    params(SessionPath),
    request_body = UsersIn,
    responses(
        (status = 200, body = UserInfos),
        crate::openapi::common::ApiErrors,
    )
)]
async fn users(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<UsersIn>,
) -> ApiResult<Json<UserInfos>> {
    state.sessions.get(&id)?;
    let jids = checked_list("jids", &body.jids, account_jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let users = client.user_info(&jids).await?;
    Ok(Json(UserInfos { users }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON form of a type's schema.
    fn schema_of<T: utoipa::PartialSchema>() -> serde_json::Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    #[test]
    fn documented_list_bounds_are_the_enforced_ones() {
        for (schema, field) in [
            (schema_of::<CheckIn>(), "phones"),
            (schema_of::<UsersIn>(), "jids"),
            (schema_of::<InfoByPhones>(), "phones"),
        ] {
            let list = &schema["properties"][field];
            assert_eq!(list["minItems"], 1, "{field}: {list}");
            assert_eq!(list["maxItems"], MAX_LOOKUP, "{field}: {list}");
        }
    }

    #[test]
    fn contact_info_is_documented_as_one_of_its_two_forms() {
        let refs = |schema: serde_json::Value| -> Vec<String> {
            schema["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["$ref"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            refs(schema_of::<InfoIn>()),
            [
                "#/components/schemas/ContactInfoByJidIn",
                "#/components/schemas/ContactInfoByPhonesIn"
            ]
        );
        assert_eq!(
            refs(schema_of::<ContactInfoAnswer>()),
            [
                "#/components/schemas/ContactInfo",
                "#/components/schemas/ContactInfos"
            ]
        );
        for form in [schema_of::<InfoByJid>(), schema_of::<InfoByPhones>()] {
            assert_eq!(form["additionalProperties"], false, "{form}");
        }
    }

    #[test]
    fn contact_info_takes_one_form_or_the_other() {
        let parse = |body: serde_json::Value| {
            crate::extract::parse_json::<InfoIn>(body.to_string().as_bytes())
        };
        assert!(matches!(
            parse(serde_json::json!({ "jid": "15550001111" })),
            Ok(InfoIn::One(_))
        ));
        assert!(matches!(
            parse(serde_json::json!({ "phones": ["15550001111"] })),
            Ok(InfoIn::Many(_))
        ));
        let both = parse(serde_json::json!({ "jid": "1", "phones": ["1"] })).unwrap_err();
        assert_eq!(both.code, "invalid_body");
        let neither = parse(serde_json::json!({})).unwrap_err();
        assert_eq!(
            (neither.code.as_ref(), neither.message.as_str()),
            ("invalid_field", "`jid` is required")
        );
    }

    #[test]
    fn lists_refuse_empty_and_oversized_input_and_drop_duplicates() {
        let one = |_: &str, v: &str| Ok(v.to_owned());
        assert!(checked_list("jids", &[], one).is_err());
        let many = vec!["1".to_owned(); MAX_LOOKUP + 1];
        assert!(checked_list("jids", &many, one).is_err());
        let dup = ["a".to_owned(), "b".to_owned(), "a".to_owned()];
        assert_eq!(checked_list("jids", &dup, one).unwrap(), ["a", "b"]);
    }
}
