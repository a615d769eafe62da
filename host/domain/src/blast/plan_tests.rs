//! Create validation and recipient planning.

use serde_json::json;

use super::*;

fn request(body: Value) -> BlastRequest {
    serde_json::from_value(body).unwrap()
}

fn text(recipients: Value) -> BlastRequest {
    request(json!({
        "endpoint": "text",
        "body": {"to": "15550000000", "text": "hi"},
        "recipients": recipients,
    }))
}

fn field(req: BlastRequest) -> String {
    validate(req, 10).unwrap_err().field
}

#[test]
fn recipients_are_normalised_to_jids_and_defaults_filled_in() {
    let v = validate(text(json!(["+1 555 000 0001", "15550000002@c.us"])), 10).unwrap();
    assert_eq!(
        v.recipients,
        ["15550000001@s.whatsapp.net", "15550000002@s.whatsapp.net"]
    );
    assert_eq!(v.options, BlastOptions::default());
    assert_eq!(v.kind, Some(SendKind::Text));
    assert_eq!(v.send_at, None);
}

#[test]
fn every_bad_field_is_named() {
    assert_eq!(field(text(json!([]))), "recipients");
    assert_eq!(field(text(json!(["15550000001", "nope"]))), "recipients[1]");
    assert_eq!(
        field(text(json!(vec!["1"; 11]))),
        "recipients",
        "over the maximum"
    );
    let mut r = text(json!(["15550000001"]));
    r.endpoint = "fax".into();
    assert_eq!(field(r), "endpoint");
    let mut r = text(json!(["15550000001"]));
    r.max_attempts = Some(0);
    assert_eq!(field(r), "max_attempts");
    let mut r = text(json!(["15550000001"]));
    r.delay_ms = Some(MAX_DELAY_MS + 1);
    assert_eq!(field(r), "delay_ms");
    let mut r = text(json!(["15550000001"]));
    r.send_at = Some("tomorrow".into());
    assert_eq!(field(r), "send_at");
    let mut r = text(json!(["15550000001"]));
    r.body = json!({"to": "15550000000"});
    assert_eq!(field(r), "body.text");
    let mut r = text(json!(["15550000001"]));
    r.body = json!({"text": "hi"});
    assert_eq!(field(r), "body.to", "`to` is required for shape validation");
    let mut r = text(json!(["15550000001"]));
    r.body = json!({"to": 15550000000u64, "text": "hi"});
    assert_eq!(field(r), "body.to", "`to` is text");
    let mut r = text(json!(["15550000001"]));
    r.body = json!("hi");
    assert_eq!(field(r), "body");
}

#[test]
fn send_at_inside_the_body_is_dropped_whatever_it_holds() {
    let mut r = text(json!(["15550000001"]));
    r.body = json!({"to": "15550000000", "text": "hi", "send_at": 12});
    let v = validate(r, 10).unwrap();
    assert!(v.body.get("send_at").is_none());
}

#[test]
fn the_body_is_checked_against_each_kind_of_recipient() {
    let r = request(json!({
        "endpoint": "reaction",
        "body": {"to": "123-456@g.us", "message_id": "M1", "emoji": "👍", "participant": "15550000009"},
        "recipients": ["123-456@g.us", "15550000001"],
    }));
    let e = validate(r, 10).unwrap_err();
    assert_eq!(e.field, "body.participant");
    assert!(e.message.contains("15550000001@s.whatsapp.net"), "{e}");
}

#[test]
fn duplicates_after_the_first_and_already_sent_recipients_are_skipped() {
    let list: Vec<String> = ["a", "b", "a", "c", "b"].map(String::from).to_vec();
    let sent: HashSet<String> = ["c".to_owned()].into();
    let (rows, accepted) = plan(&list, &sent, 7);
    let statuses: Vec<_> = rows.iter().map(|r| r.status).collect();
    use RecipientStatus::{Pending as P, SkippedDup as S};
    assert_eq!(statuses, [P, P, S, S, S]);
    assert_eq!(accepted, 2);
    assert_eq!(
        rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert!(
        rows.iter()
            .all(|r| r.message_id.is_none() && r.updated_at == 7)
    );
}

#[test]
fn the_per_recipient_request_overwrites_to() {
    let body = json!({"to": "15550000000", "text": "hi"});
    let req = request_for(SendKind::Text, &body, "15550000001@s.whatsapp.net").unwrap();
    assert_eq!(req.to.to_string(), "15550000001@s.whatsapp.net");
}

#[test]
fn a_placeholder_to_is_taken_since_every_recipient_replaces_it() {
    for placeholder in ["{{phone}}", "anyone", ""] {
        let mut r = text(json!(["15550000001", "15550000002"]));
        r.body = json!({"to": placeholder, "text": "hi"});
        let valid = validate(r, 100).unwrap_or_else(|e| panic!("{placeholder}: {e:?}"));
        assert_eq!(valid.body["to"], placeholder, "the body is kept as given");
    }
}
