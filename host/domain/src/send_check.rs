//! Checks shared by the send kinds' modules: mapping serde errors to the
//! field they name, and the text, id, count and URL rules of the API.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Longest URL accepted anywhere in a send body, in characters.
pub const MAX_URL_CHARS: usize = 2048;

/// A rejected send body: which field is wrong and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct FieldError {
    /// JSON path of the field, like `to`, `buttons[1].id` or
    /// `sections[0].rows[2].id`; `body` for the body as a whole.
    pub field: String,
    /// What is wrong, phrased to follow the field name (`is required`).
    pub message: String,
}

impl FieldError {
    /// A new error for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Deserializes a wire struct, mapping serde's error to the field it names.
pub(super) fn decode<T: DeserializeOwned>(body: Value) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let path = path_of(e.path());
        serde_message_to_field_error(path, &e.into_inner().to_string())
    })
}

fn path_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out = at(&out, *index),
            Segment::Map { key } => out = join(&out, key),
            Segment::Enum { variant } => out = join(&out, variant),
            Segment::Unknown => out = join(&out, "?"),
        }
    }
    out
}

fn serde_message_to_field_error(path: String, message: &str) -> FieldError {
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        return FieldError::new(join(&path, name), "is required");
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        // The tail is serde's list of known fields; the name may hold anything.
        let tail = ["`, expected ", "`, there are no fields"]
            .into_iter()
            .find_map(|t| rest.rfind(t));
        let (name, known) = match tail {
            Some(i) => (
                rest.get(..i).unwrap_or(rest),
                rest.get(i + 3..).unwrap_or(""),
            ),
            None => (rest.strip_suffix('`').unwrap_or(rest), ""),
        };
        let known = if known.is_empty() {
            String::new()
        } else {
            format!("; {known}")
        };
        // serde_path_to_error may already have recorded the key in the path.
        let parent = match path.strip_suffix(name) {
            Some("") => "",
            Some(p) => p.strip_suffix('.').unwrap_or(&path),
            None => &path,
        };
        return FieldError::new(
            join(parent, &cut(name, 64)),
            format!("is not a known field{known}"),
        );
    }
    let field = if path.is_empty() {
        "body".to_owned()
    } else {
        path
    };
    // "invalid type: string \"…\", expected f64": cut the echoed value, keep the rest.
    let (head, expected) = match message.rfind(", expected ") {
        Some(i) => (
            message.get(..i).unwrap_or(message),
            message.get(i..).unwrap_or(""),
        ),
        None => (message, ""),
    };
    let polished = format!("{}{}", cut(head, 80), expected)
        .replace("invalid type: map", "invalid type: object")
        .replace("invalid type: sequence", "invalid type: array")
        .replace("invalid type: unit value", "invalid type: null")
        .replace("expected f64", "expected a number")
        .replace("expected u32", "expected a non-negative whole number")
        .replace("expected a sequence", "expected an array");
    FieldError::new(field, polished)
}

/// `s` cut to `max` characters, with `…` when something was cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or_default()),
        None => s.to_owned(),
    }
}

/// The path of `name` inside `base` (`base.name`, or `name` at the top).
pub(super) fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}.{name}")
    }
}

/// The path of item `index` of the array at `base` (`base[index]`).
pub(super) fn at(base: &str, index: usize) -> String {
    format!("{base}[{index}]")
}

/// How a JSON value's type is named in messages ("a string").
pub(super) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_len(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    let n = value.chars().count();
    if n > max {
        return Err(FieldError::new(
            field,
            format!("must be at most {max} characters, not {n}"),
        ));
    }
    Ok(())
}

/// Required text: non-empty after trimming, at most `max` characters; kept as given.
pub(super) fn required_text(field: &str, value: String, max: usize) -> Result<String, FieldError> {
    if value.trim().is_empty() {
        return Err(FieldError::new(field, "must not be empty"));
    }
    check_len(field, &value, max)?;
    Ok(value)
}

/// Optional free text: absent when empty after trimming, else at most `max` characters.
pub(super) fn optional_text(
    field: &str,
    value: Option<String>,
    max: usize,
) -> Result<Option<String>, FieldError> {
    match value {
        Some(v) if !v.trim().is_empty() => required_text(field, v, max).map(Some),
        _ => Ok(None),
    }
}

/// An identifier: non-empty after trimming, at most `max` characters; stored trimmed.
pub(super) fn id(field: &str, value: &str, max: usize) -> Result<String, FieldError> {
    let value = value.trim();
    required_text(field, value.to_owned(), max)
}

/// Checks that an array at `field` has between `min` and `max` items.
pub(super) fn count(field: &str, len: usize, min: usize, max: usize) -> Result<(), FieldError> {
    if len < min || len > max {
        let range = if min == max {
            format!("exactly {min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(FieldError::new(
            field,
            format!("must have {range} items, not {len}"),
        ));
    }
    Ok(())
}

/// An absolute `http://` or `https://` URL with a host, without whitespace,
/// at most [`MAX_URL_CHARS`] characters; stored trimmed.
pub(super) fn http_url(field: &str, value: &str) -> Result<String, FieldError> {
    let url = value.trim();
    if url.is_empty() {
        return Err(FieldError::new(field, "must not be empty"));
    }
    check_len(field, url, MAX_URL_CHARS)?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(FieldError::new(
            field,
            "must not contain whitespace or control characters",
        ));
    }
    let strip = |scheme: &str| {
        url.get(..scheme.len())
            .filter(|head| head.eq_ignore_ascii_case(scheme))
            .and_then(|_| url.get(scheme.len()..))
    };
    let Some(rest) = strip("https://").or_else(|| strip("http://")) else {
        return Err(FieldError::new(
            field,
            "must be an absolute http:// or https:// URL",
        ));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    if host.is_empty() {
        return Err(FieldError::new(field, "must name a host after the scheme"));
    }
    Ok(url.to_owned())
}

/// A MIME type `type/subtype` with optional `; parameters`, trimmed. When
/// `top` is given, the type must be it (`image`), ignoring ASCII case. At
/// most 255 characters; absent or blank gives `default`.
pub(super) fn mimetype(
    value: Option<String>,
    top: Option<&str>,
    default: &str,
) -> Result<String, FieldError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(default.to_owned());
    };
    let value = value.trim();
    let (essence, params) = value.split_once(';').unwrap_or((value, ""));
    let token = |s: &str| {
        (1..=127).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let well_formed = value.len() <= 255
        && matches!(essence.trim_end().split_once('/'), Some((t, s)) if token(t) && token(s))
        && params.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    if !well_formed {
        return Err(FieldError::new(
            "mimetype",
            "must be a MIME type like `type/subtype` or `type/subtype; param=value`",
        ));
    }
    if let Some(top) = top {
        let matches_top = essence
            .split_once('/')
            .is_some_and(|(t, _)| t.eq_ignore_ascii_case(top));
        if !matches_top {
            return Err(FieldError::new(
                "mimetype",
                format!("must be an `{top}/…` type"),
            ));
        }
    }
    Ok(value.to_owned())
}

/// Schemas of send body fields that the field attributes cannot state, for
/// the OpenAPI document.
#[cfg(feature = "openapi")]
pub(super) mod schema {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};

    use super::super::send_basic::{MAX_POLL_OPTION_CHARS, POLL_OPTIONS};
    use super::super::send_text::MAX_EMOJI_CHARS;

    /// A regular expression that only strings holding something other than
    /// whitespace match (as [`str::trim`] sees whitespace; U+0085 is one).
    pub const NOT_BLANK: &str = r"[^\s\x85]";

    /// A MIME type token (a type or a subtype).
    const MIME_TOKEN: &str = r"[A-Za-z0-9!#$&^_.+-]{1,127}";

    /// A regular expression that only MIME types [`super::mimetype`] takes
    /// match: `type/subtype` with optional `; parameters`, the type being
    /// `top` (in any ASCII case) when given.
    pub fn mimetype_of(top: Option<&str>) -> String {
        let top = match top {
            Some(top) => top
                .chars()
                .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()))
                .collect(),
            None => MIME_TOKEN.to_owned(),
        };
        format!("^{top}/{MIME_TOKEN}(?:;[ -~]*)?$")
    }

    /// The most base64 characters that always decode to at most `cap` bytes.
    pub fn base64_chars(cap: usize) -> usize {
        cap / 3 * 4
    }

    /// A string that is not blank, of 1 to `max` characters.
    fn not_blank(max: usize) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(max))
            .pattern(Some(NOT_BLANK))
    }

    /// A reaction's `emoji`: `""`, or at most 16 characters, not blank.
    pub fn emoji() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([""]))
                    .description(Some("Removes our earlier reaction.")),
            )
            .item(not_blank(MAX_EMOJI_CHARS).description(Some("The emoji (not checked to be one).")))
            .description(Some(
                "The emoji: at most 16 characters, not only whitespace; `\"\"` removes our earlier reaction.",
            ))
            .into()
    }

    /// A poll's `options`: 2 to 12 distinct strings, each not blank and at
    /// most 100 characters (unique after trimming, which no schema says).
    pub fn poll_options() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(not_blank(MAX_POLL_OPTION_CHARS))
            .min_items(Some(POLL_OPTIONS.0))
            .max_items(Some(POLL_OPTIONS.1))
            .unique_items(true)
            .description(Some(
                "2 to 12 options; each not blank, at most 100 characters, and unique after trimming.",
            ))
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_urls_with_a_host_are_accepted_and_trimmed() {
        for url in [
            "https://example.com",
            "HTTP://a.b/c?d#e",
            "http://user@[::1]:8080/x",
        ] {
            assert!(http_url("url", url).is_ok(), "{url}");
        }
        assert_eq!(http_url("url", " https://x.y/z ").unwrap(), "https://x.y/z");
    }

    #[test]
    fn other_urls_are_rejected() {
        let long = format!("https://x.y/{}", "a".repeat(MAX_URL_CHARS));
        for url in [
            "",
            "ftp://x.y",
            "example.com",
            "https://",
            "https:///path",
            "https://a b",
            &long,
        ] {
            assert_eq!(
                http_url("media.url", url).unwrap_err().field,
                "media.url",
                "{url}"
            );
        }
    }

    #[test]
    fn long_echoed_values_are_cut_but_the_expectation_is_kept() {
        let message = format!(
            "invalid type: string \"{}\", expected f64",
            "x".repeat(1000)
        );
        let err = serde_message_to_field_error("latitude".to_owned(), &message);
        assert!(err.message.len() < 120, "{}", err.message);
        assert!(
            err.message.ends_with("expected a number"),
            "{}",
            err.message
        );
    }

    #[test]
    fn unknown_and_missing_fields_name_the_field_under_the_path() {
        let err = serde_message_to_field_error("buttons[0]".to_owned(), "missing field `id`");
        assert_eq!(err, FieldError::new("buttons[0].id", "is required"));
        let message = "unknown field `a`, b`, expected `id` or `text`";
        let err = serde_message_to_field_error("buttons[0]".to_owned(), message);
        assert_eq!(err.field, "buttons[0].a`, b");
        assert_eq!(err.message, "is not a known field; expected `id` or `text`");
    }

    #[test]
    fn counts_and_texts_report_their_limits() {
        assert_eq!(
            count("x", 0, 1, 3).unwrap_err().message,
            "must have 1 to 3 items, not 0"
        );
        assert!(count("x", 3, 1, 3).is_ok());
        assert_eq!(
            required_text("t", " \n".into(), 5).unwrap_err().message,
            "must not be empty"
        );
        assert!(required_text("t", "ééééé".into(), 5).is_ok());
        assert!(required_text("t", "éééééé".into(), 5).is_err());
        assert_eq!(optional_text("t", Some("  ".into()), 5).unwrap(), None);
        assert_eq!(id("i", " a ", 5).unwrap(), "a");
    }

    mod any_body {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::super::super::send::{SendKind, SendRequest};

        const KEYS: &[&str] = &[
            "to",
            "text",
            "url",
            "data",
            "mimetype",
            "caption",
            "filename",
            "ptt",
            "view_once",
            "latitude",
            "longitude",
            "name",
            "phone",
            "contacts",
            "question",
            "options",
            "selectable_count",
            "message_id",
            "emoji",
            "participant",
            "mentions",
            "buttons",
            "id",
            "button_text",
            "sections",
            "rows",
            "title",
            "send_at",
        ];

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<f64>().prop_map(|f| json!(f)),
                (-3i64..20).prop_map(Value::from),
                "[a-zA-Z0-9+@/=:. -]{0,12}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 32, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::btree_map(prop::sample::select(KEYS), inner, 0..8)
                        .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
                ]
            })
        }

        proptest! {
            #[test]
            fn arbitrary_bodies_never_panic(body in json_value(), to in any::<bool>()) {
                for kind in SendKind::ALL {
                    let mut body = body.clone();
                    if let (true, Value::Object(map)) = (to, &mut body) {
                        map.insert("to".into(), json!("12345"));
                    }
                    if let Ok(request) = SendRequest::from_json(kind, body) {
                        prop_assert_eq!(request.kind(), kind);
                    }
                }
            }
        }
    }
}
