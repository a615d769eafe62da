//! The request body of `POST /api/v1/sessions/{id}/messages/{kind}` (and of
//! a blast's `body`): one of the send kinds' wire bodies, whose schemas are
//! derived from the very structs that parse them (`domain::send::wire`),
//! with what their field attributes cannot say added here: the `send_at`
//! every body may carry, and the rules that tie two fields together.

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AllOfBuilder, AnyOfBuilder, ArrayBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, Schema,
    SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::domain::send::SendKind;
use crate::domain::send::wire::{
    AudioWire, ButtonsWire, ContactWire, CtaUrlWire, DocumentWire, ListWire, LocationWire,
    PollWire, ReactionWire, TextWire, VisualWire, media_schema,
};

/// Which body goes with which kind, in the order of the API reference.
const KINDS: &str = "`text`: SendText; `image`: SendImage; `video`: SendVideo; \
    `audio`: SendAudio; `document`: SendDocument; `location`: SendLocation; \
    `contact`: SendContact; `poll`: SendPoll; `reaction`: SendReaction; `cta-url`: SendCtaUrl; \
    `buttons`: SendButtons; `list`: SendList. Every body may also carry `send_at` (an ISO-8601 \
    time, or null): a future one schedules the send.";

/// The bodies' component names, in the order of [`KINDS`].
const BODIES: [&str; 12] = [
    "SendText",
    "SendImage",
    "SendVideo",
    "SendAudio",
    "SendDocument",
    "SendLocation",
    "SendContact",
    "SendPoll",
    "SendReaction",
    "SendCtaUrl",
    "SendButtons",
    "SendList",
];

/// A group JID as a send's `to` takes it (the group part of the domain's
/// chat address pattern).
pub const GROUP_JID_PATTERN: &str = r"^[0-9]{1,40}@g\.us$";

/// Most options of a poll, hence most choices a voter may make.
const MAX_POLL_OPTIONS: usize = 12;

/// One of the send kinds' bodies; the path's `kind` says which.
pub struct SendBody;

/// The schemas pushed so far, by name.
type Schemas = Vec<(String, RefOr<Schema>)>;

/// A rule over several fields of a body, which the body's schema must also meet.
type Rule = fn() -> Schema;

/// Pushes `T`'s schema (with `send_at`, and meeting `rule`) and every schema
/// it refers to.
fn with<T: ToSchema>(out: &mut Schemas, rule: Option<Rule>) {
    push(out, T::name().into_owned(), T::schema(), rule);
    T::schemas(out);
}

/// Pushes the body of the media `kind` (wire body `T`) as `name`: it takes
/// exactly one source.
fn media<T: ToSchema>(out: &mut Schemas, name: &str, kind: SendKind) {
    push(out, name.to_owned(), media_schema(kind), Some(one_source));
    T::schemas(out);
}

/// Pushes `schema` as `name`, with `send_at`, and meeting `rule`.
fn push(out: &mut Schemas, name: String, mut schema: RefOr<Schema>, rule: Option<Rule>) {
    let mut description = None;
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        object.properties.insert("send_at".into(), send_at().into());
        description = object.description.clone();
    }
    let schema = match rule {
        None => schema,
        Some(rule) => AllOfBuilder::new()
            .item(schema)
            .item(rule())
            .description(description)
            .into(),
    };
    out.push((name, schema));
}

/// Marks the array `field` of the pushed schema `name` as holding distinct
/// items: equal ones would repeat an id.
fn distinct(out: &mut Schemas, name: &str, field: &str) {
    for (_, schema) in out.iter_mut().filter(|(n, _)| n == name) {
        if let RefOr::T(Schema::Object(object)) = schema
            && let Some(RefOr::T(Schema::Array(array))) = object.properties.get_mut(field)
        {
            array.unique_items = true;
        }
    }
}

/// The `send_at` of every body.
fn send_at() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .description(Some(
            "When to send: an ISO-8601 date-time with an offset; a future one stores the send \
             and answers 202, a past one or null sends now.",
        ))
}

/// `{"properties": {name: schema}}`: a constraint on one field when present.
fn when(name: &str, schema: impl Into<RefOr<Schema>>) -> ObjectBuilder {
    ObjectBuilder::new().property(name, schema)
}

/// A media body takes exactly one of `url` and `data` (null counts as absent).
fn one_source() -> Schema {
    let given =
        |name: &str| when(name, ObjectBuilder::new().schema_type(Type::String)).required(name);
    OneOfBuilder::new()
        .item(given("url"))
        .item(given("data"))
        .description(Some("Exactly one of `url` and `data`."))
        .into()
}

/// A reaction names a `participant` only when `to` is a group.
fn participant_in_groups() -> Schema {
    let group = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(GROUP_JID_PATTERN));
    AnyOfBuilder::new()
        .item(when("to", group))
        .item(when(
            "participant",
            ObjectBuilder::new().schema_type(Type::Null),
        ))
        .description(Some("`participant` only when `to` is a group."))
        .into()
}

/// A poll's `selectable_count` is at most its number of options.
fn choices_within_options() -> Schema {
    let mut any = AnyOfBuilder::new().item(when(
        "selectable_count",
        ObjectBuilder::new().schema_type(Type::Null),
    ));
    for n in 2..=MAX_POLL_OPTIONS {
        let at_most = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .maximum(Some(n as f64));
        let at_least = ArrayBuilder::new().min_items(Some(n));
        any = any.item(when("selectable_count", at_most).property("options", at_least));
    }
    any.description(Some(
        "`selectable_count` is at most the number of `options`.",
    ))
    .into()
}

impl PartialSchema for SendBody {
    fn schema() -> RefOr<Schema> {
        // Any of them: bodies of different kinds may have the same shape.
        let mut any_of = AnyOfBuilder::new().description(Some(KINDS));
        for name in BODIES {
            any_of = any_of.item(Ref::from_schema_name(name));
        }
        RefOr::T(Schema::AnyOf(any_of.build()))
    }
}

impl ToSchema for SendBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SendBody")
    }

    fn schemas(out: &mut Schemas) {
        with::<TextWire>(out, None);
        media::<VisualWire>(out, "SendImage", SendKind::Image);
        media::<VisualWire>(out, "SendVideo", SendKind::Video);
        media::<AudioWire>(out, "SendAudio", SendKind::Audio);
        media::<DocumentWire>(out, "SendDocument", SendKind::Document);
        with::<LocationWire>(out, None);
        with::<ContactWire>(out, None);
        with::<PollWire>(out, Some(choices_within_options));
        with::<ReactionWire>(out, Some(participant_in_groups));
        with::<CtaUrlWire>(out, None);
        with::<ButtonsWire>(out, None);
        with::<ListWire>(out, None);
        distinct(out, "SendButtons", "buttons");
        distinct(out, "SendList", "sections");
        distinct(out, "ListSectionIn", "rows");
    }
}

#[cfg(test)]
mod tests {
    use switchboard_domain::jid::CHAT_PATTERN;

    use super::*;

    #[test]
    fn the_group_jid_pattern_is_the_chat_patterns_group_part() {
        let group = GROUP_JID_PATTERN
            .strip_prefix('^')
            .and_then(|p| p.strip_suffix('$'))
            .unwrap();
        assert!(
            CHAT_PATTERN.contains(&format!("|{group})$")),
            "{CHAT_PATTERN}"
        );
    }

    #[test]
    fn every_body_takes_send_at_and_the_combined_rules_are_added() {
        let mut out = Vec::new();
        SendBody::schemas(&mut out);
        let doc: serde_json::Map<String, serde_json::Value> = out
            .into_iter()
            .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap()))
            .collect();
        for name in BODIES {
            assert!(doc.contains_key(name), "{name}");
        }
        let text = &doc["SendText"];
        assert!(text["properties"]["send_at"].is_object(), "{text}");
        let image = &doc["SendImage"]["allOf"];
        assert!(image[0]["properties"]["send_at"].is_object(), "{image}");
        assert_eq!(image[1]["oneOf"].as_array().unwrap().len(), 2);
        let mimetype = image[0]["properties"]["mimetype"]["pattern"]
            .as_str()
            .unwrap();
        assert!(mimetype.starts_with("^[Ii][Mm][Aa][Gg][Ee]/"), "{mimetype}");
        let video = &doc["SendVideo"]["allOf"][0]["properties"];
        assert!(
            video["data"]["maxLength"].as_u64()
                > image[0]["properties"]["data"]["maxLength"].as_u64()
        );
        let poll = &doc["SendPoll"]["allOf"][1]["anyOf"];
        assert_eq!(poll.as_array().unwrap().len(), MAX_POLL_OPTIONS);
        assert_eq!(
            doc["SendList"]["properties"]["sections"]["uniqueItems"],
            true
        );
        assert_eq!(
            doc["ListSectionIn"]["properties"]["rows"]["uniqueItems"],
            true
        );
    }
}
