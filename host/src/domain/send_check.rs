//! Checks shared by the send kinds' modules: mapping serde errors to the
//! field they name, and the text, id, count and URL rules of the API.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::send::{FieldError, MAX_URL_CHARS};

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
        let (name, known) = match rest.rfind("`, ") {
            Some(i) => (
                rest.get(..i).unwrap_or(rest),
                rest.get(i + 3..).unwrap_or(""),
            ),
            None => (rest, ""),
        };
        let known = if known.is_empty() {
            String::new()
        } else {
            format!("; {known}")
        };
        return FieldError::new(
            join(&path, &cut(name, 64)),
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

#[cfg(test)]
mod tests {}
