//! Bodies of the interactive send kinds: cta-url, buttons and list.
//!
//! Limits follow the WhatsApp Business interactive-message limits: body
//! `text` at most 1024 characters, `header`/`title` and `footer` at most 60,
//! button labels at most 20.

use std::collections::HashMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::send_check::FieldError;
use super::send_check::{at, count, decode, http_url, id, join, optional_text, required_text};

/// Longest body `text` of an interactive message, in characters.
pub const MAX_INTERACTIVE_TEXT_CHARS: usize = 1024;
/// Longest `header`, list `title` or `footer`, in characters.
pub const MAX_HEADER_FOOTER_CHARS: usize = 60;
/// Longest button label (`button_text`, a button's `text`), in characters.
pub const MAX_BUTTON_LABEL_CHARS: usize = 20;
/// Most reply buttons.
pub const MAX_BUTTONS: usize = 3;
/// Longest reply button `id`, in characters.
pub const MAX_BUTTON_ID_CHARS: usize = 256;
/// Most list sections, and most rows across all sections.
pub const MAX_LIST_SECTIONS_AND_ROWS: usize = 10;
/// Longest section title and row title, in characters.
pub const MAX_LIST_TITLE_CHARS: usize = 24;
/// Longest row `id`, in characters.
pub const MAX_ROW_ID_CHARS: usize = 200;
/// Longest row `description`, in characters.
pub const MAX_ROW_DESCRIPTION_CHARS: usize = 72;

/// Text with one button that opens a URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CtaUrlBody {
    /// Body text; non-empty, at most 1024 characters.
    pub text: String,
    /// The button's label; non-empty, at most 20 characters.
    pub button_text: String,
    /// What the button opens: an absolute http/https URL.
    pub url: String,
    /// Header text (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Footer text (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
}

/// The body of a `cta-url` send: text with one button that opens a URL.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendCtaUrl))]
pub struct CtaUrlWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Body text; not blank, at most 1024 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 1024, pattern = r"[^\s\x85]")
    )]
    text: String,
    /// The button's label; not blank, at most 20 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 20, pattern = r"[^\s\x85]")
    )]
    button_text: String,
    /// What the button opens: an absolute http/https URL.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2048,
            pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f-\x9f/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
        )
    )]
    url: String,
    /// Header text (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    header: Option<String>,
    /// Footer text (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    footer: Option<String>,
}

/// Validates a `cta-url` body.
pub(super) fn cta_url(body: Value) -> Result<CtaUrlBody, FieldError> {
    let wire: CtaUrlWire = decode(body)?;
    Ok(CtaUrlBody {
        text: required_text("text", wire.text, MAX_INTERACTIVE_TEXT_CHARS)?,
        button_text: required_text("button_text", wire.button_text, MAX_BUTTON_LABEL_CHARS)?,
        url: http_url("url", &wire.url)?,
        header: optional_text("header", wire.header, MAX_HEADER_FOOTER_CHARS)?,
        footer: optional_text("footer", wire.footer, MAX_HEADER_FOOTER_CHARS)?,
    })
}

/// Text with 1 to 3 reply buttons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ButtonsBody {
    /// Body text; non-empty, at most 1024 characters.
    pub text: String,
    /// Header text (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Footer text (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    /// 1 to 3 buttons with unique ids.
    pub buttons: Vec<Button>,
}

/// One reply button.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Button {
    /// Id reported back when pressed; trimmed, non-empty, at most 256
    /// characters, unique within the message.
    pub id: String,
    /// Label; non-empty, at most 20 characters.
    pub text: String,
}

/// The body of a `buttons` send: text with up to 3 reply buttons.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendButtons))]
pub struct ButtonsWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Body text; not blank, at most 1024 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 1024, pattern = r"[^\s\x85]")
    )]
    text: String,
    /// Header text (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    header: Option<String>,
    /// Footer text (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    footer: Option<String>,
    /// 1 to 3 buttons with ids unique after trimming.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 3))]
    buttons: Vec<ButtonWire>,
}

/// A reply button.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, expecting = "an object")]
#[cfg_attr(feature = "openapi", schema(as = ButtonIn))]
pub struct ButtonWire {
    /// Id reported back when pressed; not blank, at most 256 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")
    )]
    id: String,
    /// Label; not blank, at most 20 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 20, pattern = r"[^\s\x85]")
    )]
    text: String,
}

/// Validates a `buttons` body.
pub(super) fn buttons(body: Value) -> Result<ButtonsBody, FieldError> {
    let wire: ButtonsWire = decode(body)?;
    let text = required_text("text", wire.text, MAX_INTERACTIVE_TEXT_CHARS)?;
    let header = optional_text("header", wire.header, MAX_HEADER_FOOTER_CHARS)?;
    let footer = optional_text("footer", wire.footer, MAX_HEADER_FOOTER_CHARS)?;
    count("buttons", wire.buttons.len(), 1, MAX_BUTTONS)?;
    let mut ids = UniqueIds::default();
    let mut buttons = Vec::with_capacity(wire.buttons.len());
    for (i, button) in wire.buttons.into_iter().enumerate() {
        let base = at("buttons", i);
        let id = ids.check(&join(&base, "id"), &button.id, MAX_BUTTON_ID_CHARS)?;
        let text = required_text(&join(&base, "text"), button.text, MAX_BUTTON_LABEL_CHARS)?;
        buttons.push(Button { id, text });
    }
    Ok(ButtonsBody {
        text,
        header,
        footer,
        buttons,
    })
}

/// Text with a button that opens a list of selectable rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListBody {
    /// Body text; non-empty, at most 1024 characters.
    pub text: String,
    /// Label of the button that opens the list; non-empty, at most 20 characters.
    pub button_text: String,
    /// Title above the body (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Footer text (at most 60 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    /// 1 to 10 sections, holding at most 10 rows in all.
    pub sections: Vec<ListSection>,
}

/// A titled group of rows in a list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListSection {
    /// Section title; non-empty, at most 24 characters.
    pub title: String,
    /// At least one row.
    pub rows: Vec<ListRow>,
}

/// One selectable row of a list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListRow {
    /// Id reported back when chosen; trimmed, non-empty, at most 200
    /// characters, unique across the whole list.
    pub id: String,
    /// Row title; non-empty, at most 24 characters.
    pub title: String,
    /// Text under the title (at most 72 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The body of a `list` send: a button that opens selectable rows.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendList))]
pub struct ListWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Body text; not blank, at most 1024 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 1024, pattern = r"[^\s\x85]")
    )]
    text: String,
    /// Label of the button that opens the list; not blank, at most 20 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 20, pattern = r"[^\s\x85]")
    )]
    button_text: String,
    /// Title above the body (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    title: Option<String>,
    /// Footer text (at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 60))]
    footer: Option<String>,
    /// 1 to 10 sections, holding at most 10 rows in all; row ids unique
    /// after trimming.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 10))]
    sections: Vec<SectionWire>,
}

/// A section of a list.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, expecting = "an object")]
#[cfg_attr(feature = "openapi", schema(as = ListSectionIn))]
pub struct SectionWire {
    /// Section title; not blank, at most 24 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 24, pattern = r"[^\s\x85]")
    )]
    title: String,
    /// 1 to 10 rows.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 10))]
    rows: Vec<RowWire>,
}

/// A selectable row of a list.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, expecting = "an object")]
#[cfg_attr(feature = "openapi", schema(as = ListRowIn))]
pub struct RowWire {
    /// Id reported back when chosen; not blank, at most 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = r"[^\s\x85]")
    )]
    id: String,
    /// Row title; not blank, at most 24 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 24, pattern = r"[^\s\x85]")
    )]
    title: String,
    /// Text under the title (at most 72 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 72))]
    description: Option<String>,
}

/// Validates a `list` body.
pub(super) fn list(body: Value) -> Result<ListBody, FieldError> {
    let wire: ListWire = decode(body)?;
    let text = required_text("text", wire.text, MAX_INTERACTIVE_TEXT_CHARS)?;
    let button_text = required_text("button_text", wire.button_text, MAX_BUTTON_LABEL_CHARS)?;
    let title = optional_text("title", wire.title, MAX_HEADER_FOOTER_CHARS)?;
    let footer = optional_text("footer", wire.footer, MAX_HEADER_FOOTER_CHARS)?;
    count(
        "sections",
        wire.sections.len(),
        1,
        MAX_LIST_SECTIONS_AND_ROWS,
    )?;
    let total: usize = wire.sections.iter().map(|s| s.rows.len()).sum();
    if total > MAX_LIST_SECTIONS_AND_ROWS {
        return Err(FieldError::new(
            "sections",
            format!("must hold at most {MAX_LIST_SECTIONS_AND_ROWS} rows in all, not {total}"),
        ));
    }
    let mut ids = UniqueIds::default();
    let mut sections = Vec::with_capacity(wire.sections.len());
    for (i, section) in wire.sections.into_iter().enumerate() {
        let base = at("sections", i);
        let title = required_text(&join(&base, "title"), section.title, MAX_LIST_TITLE_CHARS)?;
        let rows_field = join(&base, "rows");
        count(
            &rows_field,
            section.rows.len(),
            1,
            MAX_LIST_SECTIONS_AND_ROWS,
        )?;
        let mut rows = Vec::with_capacity(section.rows.len());
        for (j, row) in section.rows.into_iter().enumerate() {
            let base = at(&rows_field, j);
            rows.push(ListRow {
                id: ids.check(&join(&base, "id"), &row.id, MAX_ROW_ID_CHARS)?,
                title: required_text(&join(&base, "title"), row.title, MAX_LIST_TITLE_CHARS)?,
                description: optional_text(
                    &join(&base, "description"),
                    row.description,
                    MAX_ROW_DESCRIPTION_CHARS,
                )?,
            });
        }
        sections.push(ListSection { title, rows });
    }
    Ok(ListBody {
        text,
        button_text,
        title,
        footer,
        sections,
    })
}

/// Ids seen so far in one message, with the field that first used each.
#[derive(Default)]
struct UniqueIds(HashMap<String, String>);

impl UniqueIds {
    /// Checks `value` as an id and that no earlier field used it; returns it trimmed.
    fn check(&mut self, field: &str, value: &str, max: usize) -> Result<String, FieldError> {
        let value = id(field, value, max)?;
        if let Some(first) = self.0.insert(value.clone(), field.to_owned()) {
            return Err(FieldError::new(
                field,
                format!("repeats the id of `{first}`"),
            ));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::send::{OutboundContent, SendKind, SendRequest};
    use super::*;

    fn send(kind: SendKind, body: Value) -> Result<OutboundContent, FieldError> {
        SendRequest::from_json(kind, body).map(|r| r.content)
    }

    fn field(kind: SendKind, body: Value) -> String {
        send(kind, body).unwrap_err().field
    }

    #[test]
    fn cta_url_parses_and_rejects_long_labels_and_bad_urls() {
        let body = json!({"to": "12345", "text": "Track it", "button_text": "Open",
                          "url": "https://x.y/t/1", "footer": "Thanks"});
        let Ok(OutboundContent::CtaUrl(c)) = send(SendKind::CtaUrl, body) else {
            panic!()
        };
        assert_eq!(
            (c.url.as_str(), c.footer.as_deref(), c.header),
            ("https://x.y/t/1", Some("Thanks"), None)
        );
        let body = |label: &str, url: &str| json!({"to": "12345", "text": "t", "button_text": label, "url": url});
        assert_eq!(
            field(SendKind::CtaUrl, body(&"x".repeat(21), "https://x.y")),
            "button_text"
        );
        assert_eq!(
            field(SendKind::CtaUrl, body("Open", "javascript:alert(1)")),
            "url"
        );
    }

    #[test]
    fn buttons_parse_and_bad_buttons_are_named_by_path() {
        let ok = json!({"to": "12345", "text": "Pick", "buttons": [
            {"id": "yes", "text": "Yes"}, {"id": "no", "text": "No"}]});
        let Ok(OutboundContent::Buttons(b)) = send(SendKind::Buttons, ok) else {
            panic!()
        };
        assert_eq!(
            b.buttons[1],
            Button {
                id: "no".into(),
                text: "No".into()
            }
        );
        let with = |buttons: Value| json!({"to": "12345", "text": "Pick", "buttons": buttons});
        let dup = json!([{"id": "a", "text": "A"}, {"id": " a", "text": "B"}]);
        assert_eq!(field(SendKind::Buttons, with(dup)), "buttons[1].id");
        let four = json!([{"id": "a", "text": "A"}, {"id": "b", "text": "B"},
                          {"id": "c", "text": "C"}, {"id": "d", "text": "D"}]);
        assert_eq!(field(SendKind::Buttons, with(four)), "buttons");
        assert_eq!(
            field(SendKind::Buttons, with(json!([{"id": "a"}]))),
            "buttons[0].text"
        );
        let unknown = json!([{"id": "a", "text": "A", "label": "x"}]);
        assert_eq!(field(SendKind::Buttons, with(unknown)), "buttons[0].label");
        assert_eq!(field(SendKind::Buttons, with(json!(["a"]))), "buttons[0]");
        assert_eq!(field(SendKind::Buttons, with(json!({}))), "buttons");
    }

    fn list(sections: Value) -> Value {
        json!({"to": "12345", "text": "Menu", "button_text": "View", "sections": sections})
    }

    #[test]
    fn list_parses_with_rows_across_sections() {
        let sections = json!([
            {"title": "Food", "rows": [{"id": "f1", "title": "Pizza", "description": "Hot"}]},
            {"title": "Drinks", "rows": [{"id": "d1", "title": "Tea"}, {"id": "d2", "title": "Milk"}]},
        ]);
        let Ok(OutboundContent::List(l)) = send(SendKind::List, list(sections)) else {
            panic!()
        };
        assert_eq!(l.sections[1].rows[1].id, "d2");
        assert_eq!(l.sections[0].rows[0].description.as_deref(), Some("Hot"));
    }

    #[test]
    fn list_rejects_repeated_ids_too_many_rows_and_long_titles() {
        let row = |id: &str| json!({"id": id, "title": "Row"});
        let sections =
            json!([{"title": "A", "rows": [row("x")]}, {"title": "B", "rows": [row("x")]}]);
        assert_eq!(
            field(SendKind::List, list(sections)),
            "sections[1].rows[0].id"
        );
        let rows: Vec<_> = (0..11).map(|i| row(&i.to_string())).collect();
        assert_eq!(
            field(SendKind::List, list(json!([{"title": "A", "rows": rows}]))),
            "sections"
        );
        let long = json!({"id": "z", "title": "x".repeat(25)});
        let sections = json!([{"title": "A", "rows": [row("x"), row("y"), long]}]);
        assert_eq!(
            field(SendKind::List, list(sections)),
            "sections[0].rows[2].title"
        );
        assert_eq!(
            field(SendKind::List, list(json!([{"title": "A", "rows": []}]))),
            "sections[0].rows"
        );
        assert_eq!(field(SendKind::List, list(json!([]))), "sections");
    }
}
