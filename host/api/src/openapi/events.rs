//! The event components: the envelope, one `data` schema per event name
//! (network-side shapes read from the same table that validates injected
//! events, `domain::event_data::shape`; the gateway's own events from the
//! types their producers build, `domain::event_data::own`), one envelope
//! schema per event, and the `webhooks` section that describes what the
//! gateway POSTs to a webhook URL.

use serde_json::{Value, json};
use utoipa::{PartialSchema, ToSchema};

use crate::domain::event::EventName;
use crate::domain::event_data::own::{
    AccountLockedData, BlastEventData, ConnectedData, LoggedOutData, MessageData, PairCodeData,
    QrCodeData, ReachOutTimelockData, ReconnectScheduledData, StorageFaultData,
};
use crate::domain::event_data::{self, FieldType};

/// `Receipt` for `receipt`, `ChatPresence` for `chat_presence`.
fn pascal(event: EventName) -> String {
    event
        .as_str()
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The component name of an event's `data` schema.
pub fn data_schema_name(event: EventName) -> String {
    match event {
        EventName::BlastProgress | EventName::BlastCompleted => "BlastEventData".into(),
        EventName::StorageFailed | EventName::StorageRecovered => "StorageFaultData".into(),
        e => format!("{}Data", pascal(e)),
    }
}

/// The component name of an event's envelope schema.
pub fn envelope_schema_name(event: EventName) -> String {
    format!("{}Event", pascal(event))
}

fn field_schema(ty: FieldType) -> Value {
    match ty {
        FieldType::Str => json!({"type": "string"}),
        FieldType::StrOrNull => json!({"type": ["string", "null"]}),
        FieldType::Bool => json!({"type": "boolean"}),
        FieldType::Int => json!({"type": "integer"}),
        FieldType::IntOrNull => json!({"type": ["integer", "null"]}),
        FieldType::NumOrNull => json!({"type": ["number", "null"]}),
        FieldType::StrArray => json!({"type": "array", "items": {"type": "string"}}),
        FieldType::IntArray => json!({"type": "array", "items": {"type": "integer"}}),
        FieldType::ObjectArray => json!({"type": "array", "items": {"type": "object"}}),
        FieldType::OneOf(values) => json!({"type": "string", "enum": values}),
    }
}

/// A network-side event's data, from the validation table: its fields, which
/// are required, and that others pass through.
fn network_data_schema(event: EventName) -> Value {
    let fields = event_data::shape(event);
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_owned(), field_schema(f.ty)))
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    json!({
        "type": "object",
        "description": format!("`{event}` data as a network delivers it (docs/api.md, Events). Networks may add fields; they pass through."),
        "properties": properties,
        "required": required,
        "additionalProperties": true,
    })
}

/// The `components.schemas` object of a serialized document.
fn schemas(doc: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !doc.is_object() {
        *doc = json!({});
    }
    let components = &mut doc["components"];
    if !components.is_object() {
        *components = json!({});
    }
    let schemas = &mut components["schemas"];
    if !schemas.is_object() {
        *schemas = json!({});
    }
    schemas.as_object_mut().expect("made an object above")
}

fn insert<T: ToSchema>(doc: &mut Value) {
    let mut parts = Vec::new();
    T::schemas(&mut parts);
    for (name, schema) in parts {
        let schema = serde_json::to_value(schema).unwrap_or_default();
        schemas(doc).insert(name, schema);
    }
    let schema = serde_json::to_value(<T as PartialSchema>::schema()).unwrap_or_default();
    schemas(doc).insert(T::name().into_owned(), schema);
}

fn insert_json(doc: &mut Value, name: String, schema: Value) {
    schemas(doc).insert(name, schema);
}

/// Adds `Envelope`, `EventName`, every `<Event>Data` and `<Event>Event`
/// schema, and `AnyEvent` (one of the envelopes, by `event`).
pub fn add_components(doc: &mut Value) {
    insert::<QrCodeData>(doc);
    insert::<PairCodeData>(doc);
    insert::<ConnectedData>(doc);
    insert::<LoggedOutData>(doc);
    insert::<AccountLockedData>(doc);
    insert::<MessageData>(doc);
    insert::<BlastEventData>(doc);
    insert::<StorageFaultData>(doc);
    insert::<ReachOutTimelockData>(doc);
    insert::<ReconnectScheduledData>(doc);
    let names: Vec<&str> = EventName::ALL.iter().map(|e| e.as_str()).collect();
    insert_json(
        doc,
        "EventName".into(),
        json!({"type": "string", "enum": names, "description": "An event name; webhook and stream filters also accept `all`."}),
    );
    insert_json(
        doc,
        "Envelope".into(),
        json!({
            "type": "object",
            "description": "What every webhook delivery and every event-stream event carries.",
            "required": ["session_id", "event", "timestamp", "data"],
            "properties": {
                "session_id": {"type": "string", "description": "The session the event belongs to."},
                "event": {"$ref": "#/components/schemas/EventName"},
                "timestamp": {"type": "integer", "description": "Unix seconds when the gateway saw the event."},
                "data": {"type": "object", "description": "Event-specific; see the `<Event>Data` schemas."},
                "offline": {"type": "boolean", "description": "`message` only: true when redelivered from the disconnect window."}
            }
        }),
    );
    let mut one_of = Vec::new();
    let mut mapping = serde_json::Map::new();
    for &event in EventName::ALL {
        if event_data::network_side(event) {
            insert_json(doc, data_schema_name(event), network_data_schema(event));
        }
        let envelope = envelope_schema_name(event);
        let reference = format!("#/components/schemas/{envelope}");
        insert_json(
            doc,
            envelope,
            json!({
                "description": format!("The envelope of a `{event}` event."),
                "allOf": [
                    {"$ref": "#/components/schemas/Envelope"},
                    {
                        "type": "object",
                        "properties": {
                            "event": {"const": event.as_str()},
                            "data": {"$ref": format!("#/components/schemas/{}", data_schema_name(event))}
                        }
                    }
                ]
            }),
        );
        one_of.push(json!({"$ref": reference}));
        mapping.insert(event.as_str().into(), Value::String(reference));
    }
    insert_json(
        doc,
        "AnyEvent".into(),
        json!({
            "description": "Any event's envelope, told apart by `event`.",
            "oneOf": one_of,
            "discriminator": {"propertyName": "event", "mapping": mapping}
        }),
    );
}

/// The OpenAPI 3.1 `webhooks` section: the POST a webhook URL receives for
/// each event it subscribed to, its headers and what its answer means.
pub fn webhooks_section() -> Value {
    let header = |name: &str, required: bool, description: &str| json!({"name": name, "in": "header", "required": required, "description": description, "schema": {"type": "string"}});
    json!({
        "event": {
            "post": {
                "summary": "An event delivered to a registered webhook URL",
                "description": "One POST per event and webhook, retried on failure (non-2xx, transport error, timeout) on a timer, then dead-lettered. Every delivery an event owes is recorded in the durable outbox before the event counts as handled: at-least-once across crashes, every repeat with the same delivery id. With a secret and `signature_scheme` `switchboard`, verify `X-Webhook-Signature` = `sha256=` + hex(HMAC-SHA256(secret, `<X-Webhook-Timestamp>.<raw body>`)); with `standard` (Standard Webhooks), verify `webhook-signature` with the `standardwebhooks` libraries. Each attempt is signed afresh.",
                "operationId": "webhook_event",
                "tags": ["webhooks"],
                "parameters": [
                    header("X-Webhook-Event", true, "The event name."),
                    header("X-Webhook-Delivery-Id", true, "A UUID per event and webhook, the same on every retry and replay: deduplicate on it."),
                    header("X-Webhook-Timestamp", false, "With a secret: Unix seconds of this attempt."),
                    header("X-Webhook-Signature", false, "With a secret: `sha256=` + lowercase hex HMAC-SHA256 of `<timestamp>.<raw body>`."),
                    header("X-Webhook-Signature-Version", false, "With a secret: `v2`."),
                    header("webhook-id", false, "Scheme `standard`: the delivery id (the same as `X-Webhook-Delivery-Id`)."),
                    header("webhook-timestamp", false, "Scheme `standard`: Unix seconds of this attempt."),
                    header("webhook-signature", false, "Scheme `standard`: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed by the base64 key after `whsec_`."),
                    header("User-Agent", true, "`Switchboard/<version>`."),
                ],
                "requestBody": {
                    "required": true,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AnyEvent"}}}
                },
                "responses": {
                    "2XX": {"description": "Delivered."},
                    "default": {"description": "Failed: retried, then dead-lettered (a 3xx is a failure; redirects are not followed)."}
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_a_data_schema_and_an_envelope() {
        let mut doc = json!({});
        add_components(&mut doc);
        let schemas = &doc["components"]["schemas"];
        for &event in EventName::ALL {
            assert!(
                schemas.get(data_schema_name(event)).is_some(),
                "no data schema for `{event}`"
            );
            assert!(schemas.get(envelope_schema_name(event)).is_some());
        }
        assert!(schemas.get("AnyEvent").is_some());
    }

    #[test]
    fn a_network_side_schema_requires_what_validation_requires() {
        let schema = network_data_schema(EventName::Receipt);
        assert_eq!(
            schema["required"],
            json!(["message_ids", "chat", "sender", "type", "timestamp"])
        );
        assert_eq!(
            schema["properties"]["type"]["enum"],
            json!([
                "delivered",
                "read",
                "played",
                "sent",
                "server_error",
                "read_self",
                "played_self"
            ])
        );
    }
}
